package serve

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFaultHeldJobSaysWhatItWaitsFor: a lock a crashed git left
// (.git/index.lock, .git/refs/heads/main.lock) holds the jobs, as it
// should; but only /healthz said why. GET /jobs/{id} said "processing"
// (or "queued") and nothing more, so a client waiting on its post (kk
// client post --wait, an agent polling its job) saw a job that never
// ended, and kk client's wait ended in "context deadline exceeded". A job
// not yet done now carries kk's waiting_for, what the worker waits for
// (as /healthz says it: the file, and what to do), and the client's wait
// that gives up says it too. Once the lock is gone the job is done, and
// says nothing more.
func TestFaultHeldJobSaysWhatItWaitsFor(t *testing.T) {
	for _, lockName := range []string{"index.lock", filepath.Join("refs", "heads", "main.lock")} {
		t.Run(filepath.Base(lockName), func(t *testing.T) {
			k := newRepo(t, 0)
			s := start(t, k, nil)
			lock := filepath.Join(k.Root, ".git", lockName)
			writeFile(t, lock, "")
			first, second := s.postAsync(t, "Held first"), s.postAsync(t, "Held second")
			s.waitHealth(t, lock)
			for _, id := range []string{first, second} {
				j, err := s.Client.Job(ctx, id)
				if err != nil || j.Final() || !strings.Contains(j.WaitingFor, lock) || !strings.Contains(j.WaitingFor, "remove the file") || j.Error != "" {
					t.Errorf("job %s while %s is held: %+v %v", id, lockName, j, err)
				}
			}
			// A client's wait that gives up names what the job waits for.
			wctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err := s.Client.Wait(wctx, first, 10*time.Millisecond)
			cancel()
			if err == nil || !strings.Contains(err.Error(), lock) {
				t.Errorf("a wait that gave up: %v", err)
			}
			if err := os.Remove(lock); err != nil {
				t.Fatal(err)
			}
			for _, id := range []string{first, second} {
				if j := s.waitJob(t, id, time.Minute); j.Status != "done" || j.WaitingFor != "" {
					t.Errorf("job %s once the lock went: %+v", id, j)
				}
			}
			clean(t, k)
		})
	}
}
