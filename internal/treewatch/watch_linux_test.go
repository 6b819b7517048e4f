//go:build linux

package treewatch

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

func newTree(t *testing.T, o Options) (nodes string, w *Watcher) {
	t.Helper()
	root := t.TempDir()
	nodes = filepath.Join(root, "nodes")
	for _, d := range []string{"a/b", "c", ".hidden"} {
		if err := os.MkdirAll(filepath.Join(nodes, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	w, err := New(nodes, filepath.Join(root, ".state"), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	if c := w.Changes(context.Background()); !c.All || c.Reason != ReasonStart {
		t.Fatalf("first Changes: %+v, want All (start)", c)
	}
	return nodes, w
}

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBarrier: every change completed before Changes is in its answer,
// made by this process or by another one (a shell's write), and nothing
// else is: a Changes with nothing new names nothing.
func TestBarrier(t *testing.T) {
	nodes, w := newTree(t, Options{})
	ctx := context.Background()
	folders := []string{"", "a", "a/b", "c"}
	for i := range 300 {
		d := folders[i%len(folders)]
		p := filepath.Join(nodes, d, fmt.Sprintf("n%d.md", i%5))
		if i%10 == 0 {
			if out, err := exec.Command("sh", "-c", `printf x >> "$1"`, "sh", p).CombinedOutput(); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
		} else {
			write(t, p, fmt.Sprint(i))
		}
		c := w.Changes(ctx)
		if c.All || !slices.Equal(c.Folders, []string{d}) || len(c.Subtrees) > 0 {
			t.Fatalf("write %d in %q: Changes %+v", i, d, c)
		}
		if c := w.Changes(ctx); c.All || len(c.Folders)+len(c.Subtrees) > 0 {
			t.Fatalf("nothing changed after write %d: Changes %+v", i, c)
		}
	}
	if st := w.Stats(); st.Watched != 600 {
		t.Fatalf("stats %+v", st)
	}
}

// TestFolders: a folder made (and filled before its watch is set) is a
// subtree, and is watched from then on; a folder removed is a subtree; a
// folder renamed, and nodes/ removed, make Changes report All and set the
// watches again; changes in dot folders are not the tree's.
func TestFolders(t *testing.T) {
	nodes, w := newTree(t, Options{})
	ctx := context.Background()
	write(t, filepath.Join(nodes, "new/deep/x.md"), "x")
	c := w.Changes(ctx)
	if c.All || !slices.Equal(c.Subtrees, []string{"new"}) || !slices.Equal(c.Folders, []string{""}) {
		t.Fatalf("a folder made: %+v", c)
	}
	write(t, filepath.Join(nodes, "new/deep/y.md"), "y")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{"new/deep"}) {
		t.Fatalf("a write in a folder made since: %+v", c)
	}
	write(t, filepath.Join(nodes, ".hidden/z.md"), "z")
	if c := w.Changes(ctx); c.All || len(c.Folders)+len(c.Subtrees) > 0 {
		t.Fatalf("a write in a dot folder: %+v", c)
	}
	if err := os.RemoveAll(filepath.Join(nodes, "a")); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(ctx); c.All || !slices.Contains(c.Subtrees, "a") || !slices.Contains(c.Folders, "") {
		t.Fatalf("a folder removed: %+v", c)
	}
	if err := os.Rename(filepath.Join(nodes, "new"), filepath.Join(nodes, "old")); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonMoved {
		t.Fatalf("a folder renamed: %+v", c)
	}
	// Watched again, under the new name.
	write(t, filepath.Join(nodes, "old/deep/w.md"), "w")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{"old/deep"}) {
		t.Fatalf("a write in the renamed folder: %+v", c)
	}
	if err := os.RemoveAll(nodes); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if c := w.Changes(ctx); !c.All || c.Reason != ReasonRoot {
			t.Fatalf("nodes/ removed (%d): %+v", i, c)
		}
	}
	// Made again while nothing watched it: All once more.
	write(t, filepath.Join(nodes, "c/back.md"), "b")
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonRoot {
		t.Fatalf("nodes/ made again: %+v", c)
	}
	write(t, filepath.Join(nodes, "c/again.md"), "a")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{"c"}) {
		t.Fatalf("a write in nodes/ made again: %+v", c)
	}
}

// TestOverflow: more reports than the kernel's queue holds between two
// Changes (a real overflow) make the next report All, after which the
// watcher names folders again. The queue's size is the machine's
// (max_queued_events, 16384 by default); each report is one utimensat,
// a few microseconds.
func TestOverflow(t *testing.T) {
	max := 16384
	if b, err := os.ReadFile("/proc/sys/fs/inotify/max_queued_events"); err == nil {
		_, _ = fmt.Sscan(string(b), &max)
	}
	nodes, w := newTree(t, Options{})
	ctx := context.Background()
	ps := []string{filepath.Join(nodes, "c/1.md"), filepath.Join(nodes, "c/2.md")}
	for _, p := range ps {
		write(t, p, "x")
	}
	for i := range max + 10 {
		ts := time.Now().Add(-time.Duration(i) * time.Second)
		if err := os.Chtimes(ps[i%2], ts, ts); err != nil {
			t.Fatal(err)
		}
	}
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonOverflow {
		t.Fatalf("after %d reports: %+v", max+10, c)
	}
	write(t, filepath.Join(nodes, "a/b/after.md"), "x")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{"a/b"}) {
		t.Fatalf("after the overflow: %+v", c)
	}
}

// TestRefusedAndUnsure: a watch the kernel refuses makes the watcher give
// up (All from then on); Unsure and Doubt make the next report All; so do
// too many folders at once.
func TestRefusedAndUnsure(t *testing.T) {
	doubt := false
	nodes, w := newTree(t, Options{
		MaxFolders: 3,
		Doubt:      func() bool { return doubt },
		AddFault: func(dir string) error {
			if filepath.Base(dir) == "refused" {
				return errors.New("no more watches")
			}
			return nil
		},
	})
	ctx := context.Background()
	w.Unsure()
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonUnsure {
		t.Fatalf("after Unsure: %+v", c)
	}
	doubt = true
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonDoubt {
		t.Fatalf("doubting: %+v", c)
	}
	doubt = false
	for _, d := range []string{"", "a", "a/b", "c"} {
		write(t, filepath.Join(nodes, d, "m.md"), "m")
	}
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonTooMany {
		t.Fatalf("four folders, at most three: %+v", c)
	}
	write(t, filepath.Join(nodes, "refused/x.md"), "x")
	if c := w.Changes(ctx); !c.All || w.Broken() == "" {
		t.Fatalf("a refused watch: %+v, broken %q", c, w.Broken())
	}
	write(t, filepath.Join(nodes, "c/y.md"), "y")
	if c := w.Changes(ctx); !c.All {
		t.Fatalf("after giving up: %+v", c)
	}
}

// TestAncestorReplaced: the folder holding nodes/ and .state/ moved
// aside, and a copy of nodes/ put in its place with .state/ moved back
// (the watches follow the folders moved aside, and the cookie's folder
// is still the one watched): Changes reports All, and watches the new
// nodes/ from then on. .state/ replaced alone: All, without waiting out
// the barrier.
func TestAncestorReplaced(t *testing.T) {
	base := t.TempDir()
	kb := filepath.Join(base, "kb")
	nodes, state := filepath.Join(kb, "nodes"), filepath.Join(kb, ".state")
	write(t, filepath.Join(nodes, "a", "x.md"), "x")
	w, err := New(nodes, state, Options{Barrier: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	ctx := context.Background()
	if c := w.Changes(ctx); !c.All {
		t.Fatalf("first: %+v", c)
	}
	aside := filepath.Join(base, "aside")
	if err := os.Rename(kb, aside); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(kb, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(aside, ".state"), state); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-r", filepath.Join(aside, "nodes"), nodes).CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	write(t, filepath.Join(nodes, "a", "y.md"), "y")
	if c := w.Changes(ctx); !c.All || c.Reason != ReasonRoot {
		t.Fatalf("nodes/ replaced by a copy under a folder moved aside: %+v", c)
	}
	write(t, filepath.Join(nodes, "a", "z.md"), "z")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{"a"}) {
		t.Fatalf("a write in the copy: %+v", c)
	}
	// .state/ replaced by another folder: the cookie would go unseen.
	start := time.Now()
	if err := os.Rename(state, filepath.Join(base, "old-state")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(state, 0o755); err != nil {
		t.Fatal(err)
	}
	if c := w.Changes(ctx); !c.All || time.Since(start) > 30*time.Second {
		t.Fatalf(".state/ replaced: %+v after %s", c, time.Since(start))
	}
	write(t, filepath.Join(nodes, "b.md"), "b")
	if c := w.Changes(ctx); c.All || !slices.Equal(c.Folders, []string{""}) {
		t.Fatalf("a write after .state/ was replaced: %+v", c)
	}
}
