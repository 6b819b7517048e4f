package serve

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/store"
)

// A worker killed after moving the branch to a job's commit and before
// telling git's index (gitx.CommitChanges runs git update-ref, then git
// update-index) leaves the index as it was before the commit. Recovery
// finds the commit made (Committed) and settles git's index for it
// (Settle, which the queue calls before marking the job done): git status
// is clean again.
func TestCommittedJobWithAStaleGitIndex(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
	j := s.post(t, httpapi.PostRequest{Title: "Committed", Content: "Committed, index not told.\n"})
	s.stop()
	leaf := store.DirName + "/nodes/" + j.Path
	// The index as the kill leaves it: the job's paths as they were in
	// the commit before.
	git(t, k, "read-tree", "HEAD~1")
	if st := git(t, k, "status", "--porcelain"); !strings.Contains(st, leaf) {
		t.Fatalf("the stale index does not show: %q", st)
	}
	b := New(Options{KB: k})
	if p, found, err := b.Committed(ctx, j.JobID); err != nil || !found || p != j.Path {
		t.Fatalf("Committed: %q %v %v", p, found, err)
	}
	if err := b.Settle(ctx, jobqueue.Job{ID: j.JobID, Status: jobqueue.Processing}); err != nil {
		t.Fatal(err)
	}
	clean(t, k)
}
