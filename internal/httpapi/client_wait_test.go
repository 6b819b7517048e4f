package httpapi_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// knowledgedJobs is a stand-in for knowledged's GET /jobs/{id} as it was
// seen to answer under load (knowledged-api.md §4, §10): an accepted job is
// now and then 404 "job not found" (its handler misses the job while the
// job is being finalized), then found again. replies are the answers in
// order; the last one repeats.
func knowledgedJobs(t *testing.T, replies ...string) (url string, polls func() int) {
	t.Helper()
	var mu sync.Mutex
	n := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		reply := replies[min(n, len(replies)-1)]
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if reply == "404" {
			w.WriteHeader(http.StatusNotFound)
			_, _ = w.Write([]byte(`{"error":"job not found: ` + r.URL.Path[len("/jobs/"):] + `"}` + "\n"))
			return
		}
		_, _ = w.Write([]byte(reply + "\n"))
	}))
	t.Cleanup(srv.Close)
	return srv.URL, func() int { mu.Lock(); defer mu.Unlock(); return n }
}

// TestWaitRidesOutKnowledgedsMissingJob: kk client talks to knowledged
// too, whose GET /jobs/{id} answers 404 for a job it accepted while that
// job is being finalized (seen on the very first poll after a post, and
// on 3-4 % of polls under load). kc keeps polling through it; Wait did
// not: kk client post --wait failed with "HTTP 404: job not found" for a
// job that was done. A 404 among the polls is now polled again; a job
// the server keeps not finding, poll after poll, still ends the wait with
// the 404.
func TestWaitRidesOutKnowledgedsMissingJob(t *testing.T) {
	url, polls := knowledgedJobs(t,
		"404",
		`{"job_id":"j1","status":"processing"}`,
		"404", "404",
		`{"job_id":"j1","status":"done","path":"notes/x.md"}`)
	c := &httpapi.Client{BaseURL: url}
	j, err := c.Wait(context.Background(), "j1", time.Millisecond)
	if err != nil || j.Status != "done" || j.Path != "notes/x.md" || polls() != 5 {
		t.Fatalf("Wait through knowledged's 404s: %+v, %v after %d polls; want done at notes/x.md after 5", j, err, polls())
	}

	url, polls = knowledgedJobs(t, `{"job_id":"j2","status":"queued"}`, "404")
	c = &httpapi.Client{BaseURL: url}
	_, err = c.Wait(context.Background(), "j2", time.Millisecond)
	var apiErr *httpapi.APIError
	if !errors.As(err, &apiErr) || apiErr.Status != http.StatusNotFound || polls() != 2+httpapi.WaitMissingPolls {
		t.Fatalf("Wait for a job the server no longer finds: %v after %d polls; want the 404 after %d", err, polls(), 2+httpapi.WaitMissingPolls)
	}
}
