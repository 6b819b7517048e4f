package hooks

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestSessionChanges: the files a session changed are the work tree's
// changes newer than its start and the commits made since HEAD at the
// start (the newest commit before it). A change older than the start is
// not the session's, nor are files of the knowledge base.
func TestSessionChanges(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	root := t.TempDir()
	run := func(date string, args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if date != "" {
			cmd.Env = append(cmd.Env, "GIT_AUTHOR_DATE="+date, "GIT_COMMITTER_DATE="+date)
		}
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	write := func(rel, text string, mtime time.Time) {
		p := filepath.Join(root, rel)
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(text), 0o644)
		_ = os.Chtimes(p, mtime, mtime)
	}
	start := time.Now().Add(-time.Hour).Truncate(time.Second)
	before, after := start.Add(-time.Hour), start.Add(10*time.Minute)
	run("", "init", "-q", "-b", "main")
	write("a/old.go", "1", before)
	write("b/kept.go", "1", before)
	run("", "add", "-A")
	run(before.Format(time.RFC3339), "commit", "-qm", "before the session")
	write("a/dirty-before.go", "untracked before", before)
	write("b/kept.go", "edited before", before)
	write("c/committed.go", "1", after)
	run("", "add", "c/committed.go")
	run(after.Format(time.RFC3339), "commit", "-qm", "in the session")
	write("a/old.go", "edited in the session", after)
	write(".ai/kenkeep/nodes/x.md", "kk's own", after)
	write("d/new.go", "new in the session", after)
	want := []string{"a/old.go", "c/committed.go", "d/new.go"}
	got, err := sessionChanges(context.Background(), root, root, start)
	if err != nil || !slices.Equal(got, want) {
		t.Errorf("%v %v, want %v", got, err, want)
	}
	// Without a start, every change of the work tree counts, and no commit.
	got, _ = sessionChanges(context.Background(), root, root, time.Time{})
	if !slices.Equal(got, []string{"a/dirty-before.go", "a/old.go", "b/kept.go", "d/new.go"}) {
		t.Errorf("no start: %v", got)
	}
}
