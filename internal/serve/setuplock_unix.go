//go:build unix

package serve

import (
	"context"
	"fmt"
	"os"
	"syscall"
	"time"
)

// lockSetup takes an exclusive flock on the folder dir itself, waiting
// for another process's until ctx ends, and returns its release: two kk
// serve started at once on a new folder set it up one after the other
// (nothing else exists there yet to hold a lock in). The kernel frees it
// when its holder dies. A stop ends the wait (the other one's setup may
// hang).
func lockSetup(ctx context.Context, dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for delay := time.Millisecond; ; delay = min(2*delay, 50*time.Millisecond) {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err != syscall.EWOULDBLOCK && err != syscall.EINTR {
			break
		}
		select {
		case <-ctx.Done():
			_ = f.Close()
			return nil, fmt.Errorf("waiting for another kk serve that sets %s up: %w", dir, ctx.Err())
		case <-time.After(delay):
		}
	}
	if err == syscall.ENOLCK || err == syscall.EOPNOTSUPP || err == syscall.ENOTSUP {
		// A file system without flock (some network ones): the setup
		// goes on unlocked, as kk's other locks there cannot either.
		_ = f.Close()
		return func() {}, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { _ = f.Close() }, nil
}
