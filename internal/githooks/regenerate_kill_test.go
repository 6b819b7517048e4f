package githooks

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// regenNote is a note of the scratch test, as kk node write writes one.
func regenNote(id, description string) string {
	return "---\ntype: practice\ntitle: " + id + "\ndescription: " + description + "\ntags: []\nkk_schema_version: 3\nkk_id: " + id +
		"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_version: 1\n---\nA body.\n"
}

// A run of kk index rebuild --commits (kk's post-commit, post-merge and
// post-rewrite hooks) killed while it wrote the scratch copy (SIGKILL, a
// terminal closed on git commit: no deferred cleanup, no manifest saved)
// left files there that the manifest of the run before did not describe,
// and the next run trusted that manifest: it generated a commit's index
// files from a note of the killed run's commit, one the commit does not
// hold, committed them and checked them out, and kk index rebuild --check
// then failed in the work tree. The kill here is the run's end right
// after the scratch copy was written for the other branch's commit.
func TestRegenerateAfterARunKilledInTheScratchCopy(t *testing.T) {
	e := newRepo(t)
	ctx := context.Background()
	leaf := func(id, description string) {
		t.Helper()
		p := filepath.Join(e.k.NodesDir(), "f", id+".md")
		must(t, os.MkdirAll(filepath.Dir(p), 0o755))
		must(t, os.WriteFile(p, []byte(regenNote(id, description)), 0o644))
	}
	regenerate := func() {
		t.Helper()
		if _, err := RegenerateCommits(ctx, e.k, []string{"HEAD^!"}, "test"); err != nil {
			t.Fatal(err)
		}
	}
	leaf("practice-a", "note a")
	e.git("add", "-A")
	e.git("commit", "-qm", "a")
	regenerate() // the scratch copy and its manifest: the commit's files

	e.git("checkout", "-q", "-b", "other")
	leaf("practice-n", "note n of the other branch")
	e.git("add", "-A")
	e.git("commit", "-qm", "n")
	top, rel, err := inWorkTree(ctx, e.k.Root, e.k.Dir)
	must(t, err)
	gitDir, err := gitPath(ctx, top, "kk-regenerate")
	must(t, err)
	s, err := openScratch(ctx, top, rel, gitDir)
	must(t, err)
	head := strings.TrimSpace(e.git("rev-parse", "HEAD"))
	parent := strings.TrimSpace(e.git("rev-parse", "HEAD~1"))
	if _, err := s.regenerate(head, []string{parent}, map[string]bool{}); err != nil {
		t.Fatal(err)
	}
	// killed here

	e.git("checkout", "-q", "main")
	leaf("practice-a", "note a, edited")
	e.git("commit", "-qam", "a edited")
	regenerate()
	index := e.git("show", "HEAD:.ai/kenkeep/nodes/f/index.md")
	if !strings.Contains(index, "note a, edited") || strings.Contains(index, "practice-n") {
		t.Fatalf("main's regenerated commit lists notes it does not hold:\n%s", index)
	}
}
