//go:build unix

package hooks

import (
	"path/filepath"
	"syscall"
	"testing"
)

// mkfifo makes a named pipe nobody writes to and returns its path.
func mkfifo(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "fifo")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
