// Package lock is the single writer lock of a knowledge base, and kk's
// other locks: advisory flocks on files that record who holds them.
//
// A lock of a knowledge base in a git work tree is kept in two files (a
// Set): a guard under the work tree's git folder, which `git clean -fdx`
// never deletes, and the file under .ai/kenkeep/.state/ that older kk
// binaries lock alone. store.KB.Locks decides both paths.
package lock

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// Set is the files of one lock. Guard, when set, is taken first, then
// Path: always in that order, so that two processes taking the same Set
// cannot deadlock, and a process that takes Path alone (an older kk)
// still excludes, and is excluded by, one that takes both.
type Set struct {
	// Guard is the lock's file under the work tree's git folder, which
	// git clean cannot delete while a process holds it; "" outside git.
	// Where it cannot be created (a read-only git folder) the lock is
	// Path alone, as it was before guards.
	Guard string
	// Path is the lock's file under .ai/kenkeep/.state/.
	Path string
}

// Lock is a held lock.
type Lock struct {
	fls []*flock.Flock // in the order taken
}

// Acquire takes the lock at path, waiting up to wait. cmd is recorded in the
// lock file so that a waiting process can say who holds it.
func Acquire(ctx context.Context, path string, wait time.Duration, cmd string) (*Lock, error) {
	return Set{Path: path}.Acquire(ctx, wait, cmd)
}

// TryAcquire takes the lock at path if it is free at once; it returns nil
// (and no error) when another process holds it.
func TryAcquire(path, cmd string) (*Lock, error) {
	return Set{Path: path}.TryAcquire(cmd)
}

// Acquire takes the files of s, Guard then Path, waiting up to wait in
// all. cmd is recorded in each file so that a waiting process can say who
// holds it; a HeldError names the file it found held.
func (s Set) Acquire(ctx context.Context, wait time.Duration, cmd string) (*Lock, error) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return s.take(cmd, func(fl *flock.Flock, path string) (bool, error) {
		ok, err := fl.TryLockContext(wctx, pollInterval)
		if ok {
			return true, nil
		}
		if err != nil && !errors.Is(err, context.DeadlineExceeded) {
			if ctx.Err() != nil {
				return false, ctx.Err()
			}
			return false, fmt.Errorf("locking %s: %w", path, err)
		}
		return false, &HeldError{Path: path, Holder: ReadHolder(path), Waited: wait}
	})
}

// TryAcquire takes the files of s if they are free at once; it returns nil
// (and no error) when another process holds one of them.
func (s Set) TryAcquire(cmd string) (*Lock, error) {
	return s.take(cmd, func(fl *flock.Flock, path string) (bool, error) {
		ok, err := fl.TryLock()
		if err != nil {
			return false, fmt.Errorf("locking %s: %w", path, err)
		}
		return ok, nil
	})
}

// take locks Guard (when it can be created) then Path with lockFn, which
// reports false with a nil error when the file is held. On any failure
// what was taken is released.
func (s Set) take(cmd string, lockFn func(fl *flock.Flock, path string) (bool, error)) (*Lock, error) {
	l := &Lock{}
	for _, path := range []string{s.Guard, s.Path} {
		if path == "" {
			continue
		}
		if path == s.Guard {
			if !creatable(path) {
				continue
			}
		} else if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			_ = l.Release()
			return nil, fmt.Errorf("creating lock folder: %w", err)
		}
		// A lock file that is not a regular file (a named pipe) would
		// hold the open below, or the read of its holder, for ever.
		if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() {
			_ = l.Release()
			return nil, fmt.Errorf("locking %s: not a regular file (a named pipe, a device, a socket or a folder); remove it, and kk makes it again", path)
		}
		fl := flock.New(path)
		ok, err := lockFn(fl, path)
		if !ok {
			_ = l.Release()
			return nil, err
		}
		l.fls = append(l.fls, fl)
	}
	for _, fl := range l.fls {
		record(fl.Path(), cmd)
	}
	return l, nil
}

// creatable reports whether the guard file at path exists or can be made,
// open for writing (as flock opens it).
func creatable(path string) bool {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return false
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return false
	}
	_ = f.Close()
	return true
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

// Release frees the lock, its files in the reverse of the order taken.
// The lock files stay in place: deleting one would let two processes lock
// two different files.
func (l *Lock) Release() error {
	if l == nil {
		return nil
	}
	var errs []error
	for i := len(l.fls) - 1; i >= 0; i-- {
		errs = append(errs, l.fls[i].Unlock())
	}
	l.fls = nil
	return errors.Join(errs...)
}

// ReadHolder returns the holder recorded in the lock file, or nil.
func ReadHolder(path string) *Holder {
	// Opened without waiting, and read only when a regular file: a named
	// pipe would wait for a writer, then for an end that never comes.
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return nil
	}
	data, err := io.ReadAll(io.LimitReader(f, 64<<10))
	if err != nil || len(strings.TrimSpace(string(data))) == 0 {
		return nil
	}
	var h Holder
	if json.Unmarshal(data, &h) != nil || h.PID == 0 {
		return nil
	}
	return &h
}

// HeldByAnother reports whether another process holds the lock file at
// path now, without creating the file or waiting: false when there is no
// such file. (A process asking about a lock it holds itself is told
// false: flocks of one process do not exclude each other's shared ones
// on every system.)
func HeldByAnother(path string) (bool, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	fl := flock.New(path, flock.SetFlag(os.O_RDONLY))
	ok, err := fl.TryRLock()
	if err != nil {
		return false, fmt.Errorf("locking %s: %w", path, err)
	}
	if ok {
		_ = fl.Unlock()
		return false, nil
	}
	return true, nil
}
