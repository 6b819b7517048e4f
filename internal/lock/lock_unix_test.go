//go:build unix

package lock

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// A lock file that is a named pipe (a broken or hostile checkout) held
// its taker for ever: the holder's record was read back from the pipe,
// which never ends while the lock holds it open. It is refused at once,
// with an error naming it, and nothing is taken.
func TestLockFileNotARegularFile(t *testing.T) {
	dir := t.TempDir()
	guard, path := filepath.Join(dir, "guard"), filepath.Join(dir, "lock")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, take := range []func() (*Lock, error){
		func() (*Lock, error) {
			return Set{Guard: guard, Path: path}.Acquire(context.Background(), time.Second, "kk node write")
		},
		func() (*Lock, error) { return Set{Guard: guard, Path: path}.TryAcquire("kk node write") },
	} {
		l, err := take()
		if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
			_ = l.Release()
			t.Fatalf("taking a lock whose file is a named pipe: %v", err)
		}
		// The guard taken first was released: it can be taken again.
		g, err := TryAcquire(guard, "check")
		if err != nil || g == nil {
			t.Fatalf("the guard stayed held: %v", err)
		}
		_ = g.Release()
	}
	if h := ReadHolder(path); h != nil {
		t.Errorf("ReadHolder of a named pipe: %+v", h)
	}
}
