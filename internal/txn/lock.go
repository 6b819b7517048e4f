package txn

import (
	"context"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// Locked runs fn holding the knowledge base's writer lock, for a write
// beside the knowledge tree that must not interleave with a changeset:
// a session log or capture (internal/session), a harness's files and the
// installed list (internal/install). The knowledge tree itself changes
// only through Update. wait is how long to wait for the lock; zero is
// the knowledge base's own (config.yaml's lockWait).
func Locked(ctx context.Context, k *store.KB, cmd string, wait time.Duration, fn func() error) error {
	release, err := acquire(ctx, k, cmd, wait)
	if err != nil {
		return err
	}
	defer release()
	return fn()
}

// acquire takes k's writer lock for cmd: the one place kk does (the
// recovery of a killed writer only tries it, recoverUnlocked). The
// folders the lock and the write go into must stay inside the repository
// (store.KB.CheckContained).
func acquire(ctx context.Context, k *store.KB, cmd string, wait time.Duration) (release func(), err error) {
	if cmd == "" {
		cmd = "kk"
	}
	if wait <= 0 {
		wait = k.WriterWait()
	}
	if err := k.CheckContained(); err != nil {
		return nil, err
	}
	l, err := k.WriterLock().Acquire(ctx, wait, cmd)
	if err != nil {
		return nil, err
	}
	return func() { _ = l.Release() }, nil
}
