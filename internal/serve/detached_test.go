package serve

import (
	"os"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/index"
)

// TestDetachedHEADOneIndexFolder: kk serve on a detached HEAD commits
// every job there, and every job and search uses one index folder (it
// made one per commit: 38 folders for 40 jobs).
func TestDetachedHEADOneIndexFolder(t *testing.T) {
	k := newRepo(t, 0)
	git(t, k, "checkout", "-q", "--detach")
	s := start(t, k, nil)
	jobs := s.postMany(t, 12, "Detached note")
	if _, err := s.Client.Search(ctx, "detached note", 5); err != nil {
		t.Fatal(err)
	}
	if git(t, k, "log", "-1", "--format=%s") != "store("+jobs[len(jobs)-1].ID+"): "+jobs[len(jobs)-1].Path {
		t.Fatalf("the jobs were not committed on the detached HEAD: %s", git(t, k, "log", "--oneline", "-3"))
	}
	entries, err := os.ReadDir(index.BranchesDir(k))
	if err != nil {
		t.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	// main's is the one made while the repository was set up, on main.
	if !slices.Equal(folders, []string{index.DetachedHEAD, "main"}) {
		t.Errorf("index folders after %d jobs on a detached HEAD: %v", len(jobs), folders)
	}
	clean(t, k)
}
