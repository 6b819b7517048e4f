package serve

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
)

// TestDetachedHEADIsRefused: kk serve pins the branch it serves, so on a
// detached HEAD it refuses to start, saying how to go on, and makes no
// commit and no index folder (it once committed there and made one index
// folder per commit: 38 folders for 40 jobs). The one index of a detached
// HEAD is the index package's (TestDetachedHEADHasOneIndex).
func TestDetachedHEADIsRefused(t *testing.T) {
	k := newRepo(t, 0)
	head := git(t, k, "rev-parse", "HEAD")
	git(t, k, "checkout", "-q", "--detach")
	b := New(Options{KB: k})
	err := b.Open(context.Background())
	if err == nil || !strings.Contains(err.Error(), "HEAD is detached") || !strings.Contains(err.Error(), "git switch") {
		t.Fatalf("Open on a detached HEAD: %v", err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Errorf("HEAD moved from %s to %s", head, got)
	}
	entries, err := os.ReadDir(index.BranchesDir(k))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var folders []string
	for _, e := range entries {
		if e.IsDir() {
			folders = append(folders, e.Name())
		}
	}
	// main's is the one made while the repository was set up, on main.
	if slices.Contains(folders, index.DetachedHEAD) {
		t.Errorf("index folders after a refused start: %v", folders)
	}
}
