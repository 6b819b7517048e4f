package atomicfile

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
)

func TestWriteReplacesAndKeepsMode(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.md")
	if err := Write(p, []byte("one"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("two"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(p)
	fi, _ := os.Stat(p)
	if string(data) != "two" || fi.Mode().Perm() != 0o600 {
		t.Fatalf("content %q mode %v", data, fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestWriteFailureLeavesOldContent(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sub")
	if err := os.Mkdir(p, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := Write(p, []byte("x"), 0o644); err == nil {
		t.Fatal("writing over a directory succeeded")
	}
	if err := Write(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644); err == nil {
		t.Fatal("writing into a missing directory succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Fatalf("temp files left behind: %v", entries)
	}
}

func TestWriteIfChanged(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if wrote, err := WriteIfChanged(p, []byte("a"), 0o644); !wrote || err != nil {
		t.Fatalf("first write: %v %v", wrote, err)
	}
	if wrote, err := WriteIfChanged(p, []byte("a"), 0o644); wrote || err != nil {
		t.Fatalf("same content rewritten: %v %v", wrote, err)
	}
}

func TestReplace(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "record.json")
	if err := os.WriteFile(p, []byte("old"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := Replace(p, []byte("new"), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(p)
	if err != nil || string(got) != "new" {
		t.Fatalf("read %q, %v", got, err)
	}
	fi, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v: an existing file keeps its permission bits", fi.Mode().Perm())
	}
	entries, err := os.ReadDir(dir)
	if err != nil || len(entries) != 1 {
		t.Errorf("left in the folder: %v (%v)", entries, err)
	}
}

func TestFollow(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(root, "CLAUDE.md"), []byte("rules\n"), 0o644))
	must(os.Symlink("CLAUDE.md", filepath.Join(root, "AGENTS.md")))
	must(os.MkdirAll(filepath.Join(root, "dotfiles", "claude"), 0o755))
	must(os.MkdirAll(filepath.Join(root, ".claude"), 0o755))
	must(os.Symlink("../dotfiles/claude/settings.json", filepath.Join(root, ".claude", "settings.json"))) // not there yet
	must(os.Symlink("AGENTS.md", filepath.Join(root, "GEMINI.md")))                                       // a link to a link
	must(os.WriteFile(filepath.Join(outside, "bashrc"), []byte("export A=1\n"), 0o644))
	must(os.Symlink(filepath.Join(outside, "bashrc"), filepath.Join(root, "OUT.md")))
	must(os.Symlink(outside, filepath.Join(root, "elsewhere")))
	must(os.Symlink("LOOP.md", filepath.Join(root, "LOOP.md")))
	must(os.Symlink("PONG.md", filepath.Join(root, "PING.md")))
	must(os.Symlink("PING.md", filepath.Join(root, "PONG.md")))
	for _, c := range []struct{ path, want, err string }{
		{"CLAUDE.md", "CLAUDE.md", ""},
		{"new.md", "new.md", ""},
		{"AGENTS.md", "CLAUDE.md", ""},
		{"GEMINI.md", "CLAUDE.md", ""},
		{".claude/settings.json", "dotfiles/claude/settings.json", ""},
		{"OUT.md", "", "outside"},
		{"elsewhere/x.md", "elsewhere/x.md", ""}, // not itself a link: the caller's folder is its business
		{"LOOP.md", "", "never reaches a file"},
		{"PING.md", "", "never reaches a file"},
	} {
		got, err := Follow(root, filepath.Join(root, c.path))
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("%s: err %v, want one naming it and saying %q", c.path, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if want := filepath.Join(root, c.want); got != want {
			t.Errorf("%s: got %s, want %s", c.path, got, want)
		}
	}
	// A link through a folder linked outside the root is refused too.
	must(os.Symlink("elsewhere/bashrc", filepath.Join(root, "THROUGH.md")))
	if _, err := Follow(root, filepath.Join(root, "THROUGH.md")); err == nil || !strings.Contains(err.Error(), "outside") {
		t.Errorf("THROUGH.md: err %v, want outside", err)
	}
}

// Ported from kenkeep's tests/lib/fs-atomic.test.ts: writers racing on one
// destination (several hooks of one session start) each write through a
// temporary file of their own, so none fails for another's rename, the
// file left is one writer's whole content, and no temporary file stays.
func TestConcurrentWritersLeaveOneWholeFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(dir, "state.json")
	payload := func(i int) string { return fmt.Sprintf("%03d:%s\n", i, strings.Repeat("x", 256*1024)) }
	const writers = 50
	errs := make(chan error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- Write(dest, []byte(payload(i)), 0o644)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("a writer failed: %v", err)
		}
	}
	data, err := os.ReadFile(dest)
	if err != nil {
		t.Fatal(err)
	}
	winner, err := strconv.Atoi(string(data[:3]))
	if err != nil || string(data) != payload(winner) {
		t.Fatalf("the file is not one writer's whole content (%d bytes, starting %q)", len(data), data[:8])
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		names := make([]string, len(entries))
		for i, e := range entries {
			names[i] = e.Name()
		}
		t.Fatalf("left in the folder: %v, want state.json alone", names)
	}
}
