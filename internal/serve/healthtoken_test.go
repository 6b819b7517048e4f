package serve

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// TestHealthWithoutTheTokenNamesNoLocalPath: beyond loopback, kk serve
// asks a bearer token of every request but GET /healthz, which load
// balancers and monitors call without one. Such a /healthz says whether
// the worker waits (status, the queue's counts), not what for: the
// reason names the server's folders (`waiting for
// /home/ann/notes/.git/index.lock …`, the work tree that is gone, the
// config file's problem) and quotes git (a remote's URL), which anyone
// who can reach the port read. A request carrying the token gets the
// whole answer. Found by the serve red team, round 6.
func TestHealthWithoutTheTokenNamesNoLocalPath(t *testing.T) {
	k := newRepo(t, 0)
	const token = "0123456789abcdef0123456789abcdef"
	s := startHTTP(t, ctx, Options{KB: k}, nil, httpapi.Options{Token: token})
	s.Client.Token = token
	lock := filepath.Join(k.Root, ".git", "index.lock")
	if err := os.WriteFile(lock, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Minute)
	if err := os.Chtimes(lock, old, old); err != nil {
		t.Fatal(err)
	}
	id := s.postAsync(t, "Held for the health check")
	get := func(auth string) (int, string) {
		t.Helper()
		req, err := http.NewRequest("GET", s.URL+"/healthz", nil)
		if err != nil {
			t.Fatal(err)
		}
		if auth != "" {
			req.Header.Set("Authorization", "Bearer "+auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	var authed string
	deadline := time.Now().Add(15 * time.Second)
	for {
		code, body := get(token)
		if code == http.StatusOK && strings.Contains(body, "index.lock") {
			authed = body
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/healthz with the token never said the worker waits for the lock: %d %s", code, body)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(authed, k.Root) {
		t.Errorf("/healthz with the token: %s; want the lock's path", authed)
	}
	for _, auth := range []string{"", "wrong-token-wrong-token-wrong"} {
		code, body := get(auth)
		if code != http.StatusOK {
			t.Fatalf("/healthz without the token (%q): %d %s; want 200", auth, code, body)
		}
		var h struct {
			Status     string `json:"status"`
			QueueDepth int    `json:"queue_depth"`
		}
		if err := json.Unmarshal([]byte(body), &h); err != nil {
			t.Fatalf("/healthz without the token: %q: %v", body, err)
		}
		if h.Status != "waiting" {
			t.Errorf("/healthz without the token: %s; want status waiting", body)
		}
		for _, leak := range []string{k.Root, "index.lock", ".git", "/tmp"} {
			if strings.Contains(body, leak) {
				t.Errorf("/healthz without the token names %q: %s", leak, body)
			}
		}
	}
	if err := os.Remove(lock); err != nil {
		t.Fatal(err)
	}
	if j := s.waitJob(t, id, 30*time.Second); j.Status != "done" {
		t.Fatalf("job after the lock went: %+v", j)
	}
}
