package serve

import (
	"os/exec"
	"sync/atomic"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// People and their editors run git status in the repository while kk
// serve commits: git status takes index.lock for a moment to refresh the
// index. A job that meets the lock waits for it; it is never failed for it
// (before, the job failed, and undoing the next one failed on the same
// lock and stopped the worker).
func TestJobsWaitForAGitStatusHoldingTheIndexLock(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	stop := make(chan struct{})
	var statuses atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			default:
			}
			// As a person's git status runs: optional locks on.
			cmd := exec.Command("git", "status", "--porcelain")
			cmd.Dir = k.Root
			if err := cmd.Run(); err == nil {
				statuses.Add(1)
			}
		}
	}()
	jobs := s.postMany(t, 60, "Locked note")
	close(stop)
	<-done
	for _, j := range jobs {
		jobCommit(t, k, "store", httpapi.JobStatus{JobID: j.ID, Path: j.Path})
	}
	clean(t, k)
	t.Logf("%d git status runs beside the jobs", statuses.Load())
	if statuses.Load() < 20 {
		t.Fatalf("only %d git status runs: the test needs them beside the jobs", statuses.Load())
	}
}
