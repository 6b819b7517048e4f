package serve

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestFaultBrokenConfigHoldsTheJobs: found by an outside fault run, where
// a config.yaml made invalid while kk serve ran (a person's edit saved
// half-done, a typo, a colleague's commit pulled) failed every job
// posted meanwhile for good, each with the config's error: the posts,
// accepted with a 202, were lost. The config is the person's, not the
// job's: the jobs wait, /healthz names the file and its problem, and
// once it is fixed they are done, one commit each.
func TestFaultBrokenConfigHoldsTheJobs(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	s.post(t, httpapi.PostRequest{Title: "Before the edit", Content: "Committed.\n"})
	good, err := os.ReadFile(k.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"bogusKey: 1\n", "curationThreshold: [\n"} {
		writeFile(t, k.ConfigPath(), bad)
		id := s.postAsync(t, "While config.yaml reads "+strings.TrimSpace(bad))
		h := s.waitHealth(t, "config.yaml")
		time.Sleep(300 * time.Millisecond)
		if j, _ := s.Client.Job(ctx, id); j.Status == "done" || j.Status == "failed" {
			t.Fatalf("a job ended while config.yaml was broken (%q): %+v (health %+v)", bad, j, h)
		}
		writeFile(t, k.ConfigPath(), string(good))
		j := s.waitJob(t, id, 30*time.Second)
		if j.Status != "done" {
			t.Fatalf("the job after config.yaml was fixed: %+v", j)
		}
		jobCommit(t, k, "store", j)
		if h := s.health(t); h.Status != "ok" {
			t.Errorf("health after: %+v", h)
		}
	}
	clean(t, k)
	headChecks(t, k)
}
