//go:build unix

package atomicfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// Append adds to a regular file and creates a missing one; a named pipe
// is refused at once (opening it for writing would wait for a reader) and
// left as it is.
func TestAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "log")
	for _, line := range []string{"one\n", "two\n"} {
		if err := Append(p, []byte(line), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got, err := os.ReadFile(p); err != nil || string(got) != "one\ntwo\n" {
		t.Fatalf("%q, %v", got, err)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	err := Append(fifo, []byte("x\n"), 0o644)
	if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Append to a named pipe: %v", err)
	}
	// With a reader, the open succeeds; the pipe is refused all the same.
	r, err := os.OpenFile(fifo, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = r.Close() }()
	if err := Append(fifo, []byte("x\n"), 0o644); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Append to a named pipe with a reader: %v", err)
	}
	if err := Append(dir, []byte("x\n"), 0o644); err == nil {
		t.Fatal("Append to a folder: no error")
	}
}
