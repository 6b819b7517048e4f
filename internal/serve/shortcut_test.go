package serve

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/httpapi"
)

// A commit plan that knows the commit's leaves to be the work tree's by
// the nodes hash (view.leaves against txn.Result.Before) agrees with the
// comparison of every leaf, over random steps between jobs: leaves
// written and not committed, hand edits and removals of committed leaves,
// a person's commit of everything. Every commit's generated files are
// those of its leaves (a clone checks clean), and the shortcut is taken.
func TestCommitShortcutMatchesFullComparison(t *testing.T) {
	k := newRepo(t, 30)
	s := start(t, k, nil)
	s.Backend.mu.Lock()
	s.Backend.checkShortcut = true
	s.Backend.mu.Unlock()
	r := rand.New(rand.NewPCG(7, 21))
	var posted []string
	for step := range 24 {
		switch x := r.IntN(10); {
		case x == 0:
			in := contracts.NodeInput{Type: "map", Title: fmt.Sprintf("Uncommitted %d", step), Description: "d", Body: "Not committed.\n", Folder: "inbox"}
			if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
				t.Fatal(err)
			}
		case x == 1 && len(posted) > 0:
			p := k.NodePath(posted[r.IntN(len(posted))])
			data, err := os.ReadFile(p)
			if err == nil {
				if err := os.WriteFile(p, append(data, fmt.Sprintf("Edited by hand at step %d.\n", step)...), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		case x == 2 && len(posted) > 0:
			_ = os.Remove(k.NodePath(posted[r.IntN(len(posted))])) // gone already is as good
		case x == 3 || x == 4:
			git(t, k, "add", "-A")
			if git(t, k, "status", "--porcelain") != "" {
				git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", fmt.Sprintf("person %d", step))
			}
		}
		j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Shortcut note %d", step), Content: fmt.Sprintf("Step %d.\n", step), Tags: []string{"bench", fmt.Sprintf("t%d", step%3)}})
		if j.Status != "done" {
			t.Fatalf("step %d: %+v", step, j)
		}
		posted = append(posted, j.Path)
		jobCommit(t, k, "store", j)
		headChecks(t, k)
	}
	s.Backend.mu.Lock()
	defer s.Backend.mu.Unlock()
	t.Logf("%d of 24 commit plans took the shortcut", s.Backend.shortcuts)
	if len(s.Backend.shortcutErr) > 0 {
		t.Errorf("the nodes hash said the commit's leaves were the work tree's, but these differ: %q", s.Backend.shortcutErr)
	}
	if s.Backend.shortcuts < 5 {
		t.Errorf("the shortcut was taken %d times in 24 jobs", s.Backend.shortcuts)
	}
}
