package serve

import (
	"os"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestStartWhileGitFailsToReadTheTip: a start whose read of what the
// branch's tip holds (git ls-tree, for the first commit's generated
// files) fails: git failing for a moment (a full process table, a file
// system hiccup, a repack replacing a pack). Found by the serve11 red
// team (kill -9 and restart while git failed now and then): kk serve
// exited 1 at the start, serving no one. That read is done again by the
// first commit; the start goes on, and the jobs are done.
func TestStartWhileGitFailsToReadTheTip(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before.\n"})
	s.stop()
	flag := gitThatCannotWrite(t, "ls-tree", "fatal: unable to read tree")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	s = start(t, k, nil) // fails the test when the start fails
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "After", Content: "After.\n"}); j.Status != "done" {
		t.Errorf("the job after: %+v", j)
	}
	clean(t, k)
	headChecks(t, k)
}
