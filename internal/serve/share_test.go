package serve

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// TestShareTwoServersOneRepository runs two servers on two clones of one
// repository; each posts notes, then shares (fetch, rebase, regenerate,
// push) in turn. Both end with every note, each job's commit exactly once,
// index files in step with the tree, and nothing left uncommitted.
func TestShareTwoServersOneRepository(t *testing.T) {
	a := newRepo(t, 0)
	origin := filepath.Join(t.TempDir(), "origin.git")
	git(t, a, "init", "-q", "--bare", "-b", "main", origin)
	git(t, a, "remote", "add", "origin", origin)
	git(t, a, "push", "-q", "origin", "main")
	bRoot := filepath.Join(t.TempDir(), "b")
	if _, err := gitx.Run(ctx, a.Root, "clone", "-q", origin, bRoot); err != nil {
		t.Fatal(err)
	}
	b := store.New(bRoot)

	sa, sb := start(t, a, nil), start(t, b, nil)
	var jobs []httpapi.JobStatus
	for i, s := range []*server{sa, sb, sa, sb} {
		j := s.post(t, httpapi.PostRequest{Title: []string{"Alpha note", "Beta note", "Gamma note", "Delta note"}[i], Content: "Shared between two servers.\n", Tags: []string{"shared"}})
		if j.Status != "done" {
			t.Fatalf("post %d: %+v", i, j)
		}
		jobs = append(jobs, j)
	}
	// A shares first, then B (rebasing onto A's commits; both changed the
	// index files), then A again to take B's.
	sa.Backend.Share(ctx)
	sb.Backend.Share(ctx)
	sa.Backend.Share(ctx)
	for _, k := range []*store.KB{a, b} {
		for _, j := range jobs {
			if _, err := os.Stat(k.NodePath(j.Path)); err != nil {
				t.Errorf("%s: %s missing: %v", k.Root, j.Path, err)
			}
			if n := strings.Count(git(t, k, "log", "--format=%s")+"\n", gitx.JobSubject("store", j.JobID, j.Path)+"\n"); n != 1 {
				t.Errorf("%s: %d commits of job %s", k.Root, n, j.JobID)
			}
		}
		res, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error { tx.Regenerate(); return nil })
		if err != nil {
			t.Fatal(err)
		}
		if res.Changed() {
			t.Errorf("%s: the index files were stale: %v", k.Root, res.Written)
		}
		clean(t, k)
	}
	if ha, hb := git(t, a, "rev-parse", "HEAD"), git(t, b, "rev-parse", "HEAD"); ha != hb || ha != git(t, a, "rev-parse", "origin/main") {
		t.Errorf("A at %s, B at %s, origin at %s", ha, hb, git(t, a, "rev-parse", "origin/main"))
	}
}
