package serve

import (
	"testing"
)

// TestCommittedFilesNeedNoRefresh: after kk serve's commit, git's index
// holds the files it wrote with their stat data, as `git commit` leaves
// them, so that git's plumbing, which trusts the index and does not
// refresh it, sees a clean work tree: `git diff-index --quiet HEAD` (a
// release script's "is the tree clean?"), `git diff-files`, and `git
// sparse-checkout`, which refused to leave the files out ("not up to
// date"). kk's entries had no stat data (update-index --index-info writes
// none), so each named every file of the job as changed until a porcelain
// command refreshed the index. Found by the serve red team, round 6.
func TestCommittedFilesNeedNoRefresh(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.postMany(t, 2, "Stat data")
	if out := git(t, k, "diff-files", "--name-only"); out != "" {
		t.Errorf("git diff-files after kk serve's commits:\n%s; want nothing (the index's stat data is the files')", out)
	}
	if out := git(t, k, "diff-index", "--name-only", "HEAD"); out != "" {
		t.Errorf("git diff-index HEAD after kk serve's commits:\n%s; want nothing", out)
	}
	clean(t, k)
}
