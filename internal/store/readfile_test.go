//go:build unix

package store

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// The knowledge base's own files are read only when they are regular and
// at most MaxFileBytes: a named pipe, a link to a device or a huge file is
// an *UnreadableError naming the file, at once, and a missing one is
// fs.ErrNotExist.
func TestReadFileRefusesWhatIsNotAnOrdinaryFile(t *testing.T) {
	dir := t.TempDir()
	k := New(dir)
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	makers := map[string]func(p string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
		"folder":    func(p string) error { return os.Mkdir(p, 0o755) },
		"huge": func(p string) error {
			f, err := os.Create(p)
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			return f.Truncate(MaxFileBytes + 1)
		},
	}
	for name, mk := range makers {
		t.Run(name, func(t *testing.T) {
			p := k.ConfigPath()
			_ = os.RemoveAll(p)
			if err := mk(p); err != nil {
				t.Fatal(err)
			}
			_, err := k.ReadFile(p)
			ue, ok := errors.AsType[*UnreadableError](err)
			if !ok || ue.File != ".ai/kenkeep/config.yaml" || !strings.HasPrefix(err.Error(), ".ai/kenkeep/config.yaml ") {
				t.Fatalf("error %v, want an *UnreadableError naming .ai/kenkeep/config.yaml", err)
			}
		})
	}
	_ = os.RemoveAll(k.ConfigPath())
	if _, err := k.ReadFile(k.ConfigPath()); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("missing file: %v, want fs.ErrNotExist", err)
	}
	if err := os.WriteFile(filepath.Join(k.Dir, "ENTRY.md"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if data, err := k.ReadFile(k.EntryPath()); err != nil || string(data) != "x" {
		t.Fatalf("ordinary file: %q, %v", data, err)
	}
}
