package gitx

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"testing"
)

func TestParseHistory(t *testing.T) {
	// Three commits, newest first: HEAD changed a and "b c", a merge with no
	// paths, then one that changed a again and d/e.
	out := "\x00h1\x00\nM\x00a\x00A\x00b c\x00\x00h2\x00\x00h3\x00\nA\x00d/e\x00M\x00a\x00"
	h := parseHistory([]byte(out), nil)
	if h.Commits != 3 || h.Paths() != 3 {
		t.Fatalf("commits %d, paths %d", h.Commits, h.Paths())
	}
	for p, want := range map[string]int{"a": 0, "b c": 0, "d/e": 2} {
		if got, ok := h.Recency(p); !ok || got != want {
			t.Errorf("Recency(%q) = %d, %v; want %d", p, got, ok, want)
		}
	}
	if _, ok := h.Recency("h2"); ok {
		t.Error("a commit hash was taken for a path")
	}
	if h := parseHistory(nil, nil); h.Commits != 0 || h.Paths() != 0 {
		t.Errorf("empty output: %+v", h)
	}
}

func gitRepo(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	dir := t.TempDir()
	t.Setenv("GIT_AUTHOR_NAME", "kk")
	t.Setenv("GIT_AUTHOR_EMAIL", "kk@example.invalid")
	t.Setenv("GIT_COMMITTER_NAME", "kk")
	t.Setenv("GIT_COMMITTER_EMAIL", "kk@example.invalid")
	if _, err := Run(context.Background(), dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	return dir
}

func commit(t *testing.T, dir string, files map[string]string, msg string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	if _, err := Run(ctx, dir, "add", "-A"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, "commit", "-qm", msg); err != nil {
		t.Fatal(err)
	}
}

func TestReadHistoryAndListFiles(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	commit(t, dir, map[string]string{"sub/a.md": "1", "sub/b.md": "1", "top.md": "1", "sub/ünï cödé.md": "1"}, "one")
	commit(t, dir, map[string]string{"sub/a.md": "2", "top.md": "2"}, "two")
	commit(t, dir, map[string]string{"sub/b.md": "3"}, "three")
	if err := os.Rename(filepath.Join(dir, "sub", "a.md"), filepath.Join(dir, "sub", "moved.md")); err != nil {
		t.Fatal(err)
	}
	commit(t, dir, nil, "rename")

	h, err := ReadHistory(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"sub/moved.md": 0, "sub/a.md": 0, "sub/b.md": 1, "top.md": 2, "sub/ünï cödé.md": 3}
	for p, w := range want {
		if got, ok := h.Recency(p); !ok || got != w {
			t.Errorf("Recency(%q) = %d, %v; want %d", p, got, ok, w)
		}
	}
	if h.Commits != 4 {
		t.Errorf("commits = %d", h.Commits)
	}
	// The rename moved a.md without a change: its content last changed in
	// "two".
	for p, w := range map[string]int{"sub/moved.md": 2, "sub/b.md": 1, "top.md": 2} {
		if got, ok := h.Content(p); !ok || got != w {
			t.Errorf("Content(%q) = %d, %v; want %d", p, got, ok, w)
		}
	}
	// Limited history, and paths relative to a subfolder.
	h, err = ReadHistory(ctx, filepath.Join(dir, "sub"), 2)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := h.Recency("top.md"); ok || h.Commits != 2 {
		t.Errorf("sub, 2 commits: commits %d, top.md seen %v", h.Commits, ok)
	}
	if got, ok := h.Recency("b.md"); !ok || got != 1 {
		t.Errorf("sub: Recency(b.md) = %d, %v", got, ok)
	}

	if err := os.WriteFile(filepath.Join(dir, "new.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte("ignored.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "ignored.md"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	files, err := ListFiles(ctx, dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(files, []string{"sub/b.md", "sub/moved.md", "sub/ünï cödé.md", "top.md"}) {
		t.Errorf("tracked: %q", files)
	}
	files, err = ListFiles(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(files)
	if !slices.Equal(files, []string{".gitignore", "new.md", "sub/b.md", "sub/moved.md", "sub/ünï cödé.md", "top.md"}) {
		t.Errorf("tracked and untracked: %q", files)
	}
}

func TestReadHistoryErrors(t *testing.T) {
	dir := gitRepo(t)
	if _, err := ReadHistory(context.Background(), dir, 0); err == nil {
		t.Error("a repository without commits gave no error")
	}
	if _, err := ListFiles(context.Background(), t.TempDir(), true); err == nil {
		t.Error("listing files outside a repository gave no error")
	}
}

// Content follows a file back through exact renames (a file moved twice,
// its folder renamed), stops at a rename that changed it, and at the edge
// of a limited history.
func TestHistoryContentFollowsExactRenames(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	commit(t, dir, map[string]string{"notes/a.md": "1", "notes/b.md": "1"}, "one")
	commit(t, dir, map[string]string{"notes/a.md": "2"}, "two")
	commit(t, dir, map[string]string{"src.go": "x"}, "three")
	move := func(from, to, msg string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, to)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(filepath.Join(dir, from), filepath.Join(dir, to)); err != nil {
			t.Fatal(err)
		}
		commit(t, dir, nil, msg)
	}
	move("notes/a.md", "net/a.md", "four: move a")
	move("net", "network", "five: rename the folder")
	if err := os.Rename(filepath.Join(dir, "notes", "b.md"), filepath.Join(dir, "b2.md")); err != nil {
		t.Fatal(err)
	}
	commit(t, dir, map[string]string{"b2.md": "changed"}, "six: move b and change it")
	h, err := ReadHistory(ctx, dir, 0)
	if err != nil {
		t.Fatal(err)
	}
	// newest first: six 0, five 1, four 2, three 3, two 4, one 5
	for p, w := range map[string]int{"network/a.md": 4, "b2.md": 0, "src.go": 3} {
		if got, ok := h.Content(p); !ok || got != w {
			t.Errorf("Content(%q) = %d, %v; want %d", p, got, ok, w)
		}
	}
	if got, ok := h.Recency("network/a.md"); !ok || got != 1 {
		t.Errorf("Recency(network/a.md) = %d, %v; want 1", got, ok)
	}
	h, err = ReadHistory(ctx, dir, 3)
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := h.Content("network/a.md"); ok {
		t.Errorf("3 commits: Content(network/a.md) = %d, want none read", got)
	}
}

// A shallow clone's history stops at commits git shows as adding every
// file they hold (they have no parents there): those listings say
// nothing about when a file last changed, so a file the clone's own
// commits did not change has no recency, as at the edge of a limited
// history, and the history says it is shallow.
func TestReadHistoryOfAShallowClone(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	commit(t, dir, map[string]string{"a.md": "1", "b.md": "1", "c.md": "1"}, "one")
	commit(t, dir, map[string]string{"b.md": "2"}, "two")
	commit(t, dir, map[string]string{"c.md": "3"}, "three")
	if h, err := ReadHistory(ctx, dir, 0); err != nil || h.Shallow {
		t.Fatalf("full clone: shallow %v, err %v", h != nil && h.Shallow, err)
	}
	for depth, want := range map[int]map[string]int{
		1: {},
		2: {"c.md": 0},
	} {
		clone := filepath.Join(t.TempDir(), "clone")
		cmd := exec.Command("git", "clone", "-q", "--depth", strconv.Itoa(depth), "file://"+dir, clone)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git clone: %v\n%s", err, out)
		}
		h, err := ReadHistory(ctx, clone, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Shallow || h.Commits != depth {
			t.Errorf("depth %d: shallow %v, commits %d", depth, h.Shallow, h.Commits)
		}
		for _, p := range []string{"a.md", "b.md", "c.md"} {
			got, ok := h.Recency(p)
			if w, changed := want[p]; ok != changed || got != w {
				t.Errorf("depth %d: Recency(%q) = %d, %v; want %d, %v", depth, p, got, ok, w, changed)
			}
			if _, ok := h.Content(p); ok != listed(want, p) {
				t.Errorf("depth %d: Content(%q) known %v", depth, p, ok)
			}
		}
	}
}

func listed(m map[string]int, p string) bool { _, ok := m[p]; return ok }

// RemovedFile finds the commit that removed a file by its name (any case)
// under a folder, and what it held; Removals lists, in two git calls, the
// files removed or renamed in the work tree (staged or not) and in HEAD's
// history, by base name, the work tree's and the newest first.
func TestRemovedFileAndRemovals(t *testing.T) {
	dir := gitRepo(t)
	ctx := context.Background()
	commit(t, dir, map[string]string{
		"kb/nodes/go/practice-a.md": "A", "kb/nodes/practice-b.md": "B", "kb/nodes/practice-c.md": "C",
		"kb/nodes/practice-d.md": "a note long enough for git to pair its rename\nline two\nline three\n",
		"kb/nodes/practice-e.md": "another note long enough to pair\nline two\nline three\n",
	}, "one")
	if _, err := Run(ctx, dir, "rm", "-q", "kb/nodes/go/practice-a.md"); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, "mv", "kb/nodes/practice-e.md", "kb/nodes/practice-f.md"); err != nil {
		t.Fatal(err)
	}
	commit(t, dir, nil, "a removed, e renamed")
	out, err := Run(ctx, dir, "rev-parse", "HEAD")
	if err != nil {
		t.Fatal(err)
	}
	head := string(out[:len(out)-1])
	c, f, src := RemovedFile(ctx, dir, "kb/nodes", "PRACTICE-A.md")
	if c != head || f != "kb/nodes/go/practice-a.md" || string(src) != "A" {
		t.Errorf("RemovedFile = %q, %q, %q", c, f, src)
	}
	if c, _, _ := RemovedFile(ctx, dir, "kb/nodes", "practice-b.md"); c != "" {
		t.Errorf("RemovedFile of a file still there = %q", c)
	}
	if got := Removals(ctx, dir, "kb/nodes"); !reflect.DeepEqual(got, map[string]Removal{
		"practice-a.md": {File: "kb/nodes/go/practice-a.md", Commit: head},
		"practice-e.md": {File: "kb/nodes/practice-e.md", Commit: head, RenamedTo: "kb/nodes/practice-f.md"},
	}) {
		t.Errorf("Removals before the work tree's = %#v", got)
	}
	if err := os.Remove(filepath.Join(dir, "kb", "nodes", "practice-b.md")); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, "rm", "-q", "kb/nodes/practice-c.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(dir, "kb", "nodes", "go"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Run(ctx, dir, "mv", "kb/nodes/practice-d.md", "kb/nodes/go/practice-g.md"); err != nil {
		t.Fatal(err)
	}
	if got := Removals(ctx, dir, "kb/nodes"); !reflect.DeepEqual(got, map[string]Removal{
		"practice-a.md": {File: "kb/nodes/go/practice-a.md", Commit: head},
		"practice-b.md": {File: "kb/nodes/practice-b.md"},
		"practice-c.md": {File: "kb/nodes/practice-c.md"},
		"practice-d.md": {File: "kb/nodes/practice-d.md", RenamedTo: "kb/nodes/go/practice-g.md"},
		"practice-e.md": {File: "kb/nodes/practice-e.md", Commit: head, RenamedTo: "kb/nodes/practice-f.md"},
	}) {
		t.Errorf("Removals = %#v", got)
	}
	if c, _, _ := RemovedFile(ctx, t.TempDir(), "kb/nodes", "practice-a.md"); c != "" {
		t.Errorf("RemovedFile outside git = %q", c)
	}
	if got := Removals(ctx, t.TempDir(), "kb/nodes"); len(got) != 0 {
		t.Errorf("Removals outside git = %#v", got)
	}
}
