package cli

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

// TestClientJobSaysWhatTheServerWaitsFor: kk serve answers a job it holds
// (a lock a crashed git left, the branch switched) with waiting_for.
// kk client job printed "<id>\tprocessing\t" and no more, so whoever
// looked learned nothing; it now says, on stderr, what the job waits
// for (stdout keeps its one line), and a --wait that gives up says it too.
func TestClientJobSaysWhatTheServerWaitsFor(t *testing.T) {
	clientPollInterval = time.Millisecond
	const why = "waiting for /srv/notes/.git/index.lock, held by another git process since 2026-01-02T03:04:05Z (if none is running, remove the file)"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.Method == "GET" && r.URL.Path == "/jobs/j1":
			_, _ = w.Write([]byte(`{"job_id":"j1","status":"processing","waiting_for":"` + why + `"}` + "\n"))
		case r.Method == "POST" && r.URL.Path == "/content":
			w.WriteHeader(http.StatusAccepted)
			_, _ = w.Write([]byte(`{"job_id":"j1","status":"queued"}` + "\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	code, out, errs := runClient(t, srv.URL, nil, "", "job", "j1")
	if code != 0 || out != "j1\tprocessing\t\n" || !strings.Contains(errs, "job j1 waits: "+why) {
		t.Errorf("kk client job of a held job: exit %d, stdout %q, stderr %q", code, out, errs)
	}
	code, out, errs = runClient(t, srv.URL, nil, "A note.\n", "post", "--wait", "--timeout", "50ms")
	if code != 1 || out != "" || !strings.Contains(errs, why) {
		t.Errorf("kk client post --wait of a held job: exit %d, stdout %q, stderr %q", code, out, errs)
	}
}
