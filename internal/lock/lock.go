// Package lock is the single writer lock of a knowledge base: an advisory
// flock on .ai/kenkeep/.state/lock that records who holds it.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/gofrs/flock"
)

// DefaultWait is how long a writer waits for another writer's lock unless
// the knowledge base says otherwise (store.KB.LockWait, KK_LOCK_WAIT).
const DefaultWait = 10 * time.Second

// pollInterval is how often a waiting Acquire retries.
const pollInterval = 20 * time.Millisecond

// Holder describes the process that holds the lock.
type Holder struct {
	PID     int       `json:"pid"`
	Host    string    `json:"host"`
	Command string    `json:"cmd"`
	Since   time.Time `json:"time"`
}

// HeldError is returned when the lock stays taken for the whole wait.
type HeldError struct {
	Path   string
	Holder *Holder // nil when the holder could not be read
	Waited time.Duration
}

func (e *HeldError) Error() string {
	who := "another kk process"
	if h := e.Holder; h != nil {
		who = fmt.Sprintf("pid %d on %s (%s), since %s", h.PID, h.Host, h.Command, h.Since.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("the knowledge base is locked by %s; waited %s. Wait for it to finish and retry; "+
		"if that process no longer exists the lock is already free, because the operating system releases it when its holder exits (lock file: %s)",
		who, e.Waited.Round(time.Millisecond), e.Path)
}

// Lock is a held writer lock.
type Lock struct {
	fl *flock.Flock
}

// Acquire takes the lock at path, waiting up to wait. cmd is recorded in the
// lock file so that a waiting process can say who holds it.
func Acquire(ctx context.Context, path string, wait time.Duration, cmd string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating lock folder: %w", err)
	}
	fl := flock.New(path)
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	ok, err := fl.TryLockContext(wctx, pollInterval)
	if !ok {
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("locking %s: %w", path, err)
		}
		return nil, &HeldError{Path: path, Holder: ReadHolder(path), Waited: wait}
	}
	record(path, cmd)
	return &Lock{fl: fl}, nil
}

// TryAcquire takes the lock at path if it is free at once; it returns nil
// (and no error) when another process holds it.
func TryAcquire(path, cmd string) (*Lock, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, fmt.Errorf("creating lock folder: %w", err)
	}
	fl := flock.New(path)
	ok, err := fl.TryLock()
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if !ok {
		return nil, nil
	}
	record(path, cmd)
	return &Lock{fl: fl}, nil
}

// record writes who holds the lock into the lock file.
func record(path, cmd string) {
	h := Holder{PID: os.Getpid(), Command: cmd, Since: time.Now().UTC()}
	h.Host, _ = os.Hostname()
	data, _ := json.Marshal(h)
	// The lock file's content is informational; failing to record it must
	// not fail the write that needs the lock.
	if f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
		_, _ = f.Write(append(data, '\n'))
		_ = f.Close()
	}
}

// Release frees the lock. The lock file stays in place: deleting it would
// let two processes lock two different files.
func (l *Lock) Release() error {
	if l == nil || l.fl == nil {
		return nil
	}
	return l.fl.Unlock()
}

// ReadHolder returns the holder recorded in the lock file, or nil.
func ReadHolder(path string) *Holder {
	data, err := os.ReadFile(path)
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var h Holder
	if json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}
