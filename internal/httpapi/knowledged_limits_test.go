package httpapi_test

import (
	"context"
	"net"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/jobqueue"
)

// limitRecorder is a backend that records the limits the routes ask it
// for, and finds nothing.
type limitRecorder struct {
	*httpapitest.GitBackend
	mu             sync.Mutex
	recent, search []int
}

func (b *limitRecorder) Recent(_ context.Context, n int) ([]httpapi.Post, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.recent = append(b.recent, n)
	return nil, nil
}

func (b *limitRecorder) Search(_ context.Context, _ string, n int) ([]string, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.search = append(b.search, n)
	return nil, nil
}

// last is the limit the backend was last asked for, -1 when none.
func (b *limitRecorder) last(of *[]int) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(*of) == 0 {
		return -1
	}
	n := (*of)[len(*of)-1]
	*of = nil
	return n
}

// TestKnowledgedLimits: knowledged's GET /posts/recents takes limit,
// default 20 and at most 256, and answers 400 "limit must be a positive
// integer" to any other value (handler.go; its handler test asks for 32 of
// 35). kk's GET /search?query= takes limit the same way (default 5, at most
// 50). The backend is asked for exactly the capped number, and a request
// refused asks it nothing. Empty answers are knowledged's bytes for
// /posts/recents; a query search with no hits is [] (knowledged: null,
// which its clients read as no hits too).
func TestKnowledgedLimits(t *testing.T) {
	root := newRepo(t)
	q, err := jobqueue.Open(filepath.Join(root, ".ai", "kenkeep", ".state", "queue"), jobqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	b := &limitRecorder{GitBackend: &httpapitest.GitBackend{Root: root}}
	srv, err := httpapi.New(httpapi.Options{Backend: b, Queue: q})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	url := "http://" + ln.Addr().String()

	for _, tc := range []struct {
		path   string
		of     *[]int
		want   int // the backend's limit; -1: not asked
		status int
		body   string
	}{
		{"/posts/recents", &b.recent, 20, 200, `{"posts":[]}`},
		{"/posts/recents?limit=32", &b.recent, 32, 200, `{"posts":[]}`},
		{"/posts/recents?limit=1", &b.recent, 1, 200, `{"posts":[]}`},
		{"/posts/recents?limit=256", &b.recent, 256, 200, `{"posts":[]}`},
		{"/posts/recents?limit=257", &b.recent, 256, 200, `{"posts":[]}`},
		{"/posts/recents?limit=1000000", &b.recent, 256, 200, `{"posts":[]}`},
		{"/posts/recents?limit=%2B3", &b.recent, 3, 200, `{"posts":[]}`},
		{"/posts/recents?limit=32&limit=2", &b.recent, 32, 200, `{"posts":[]}`},
		{"/posts/recents?limit=0", &b.recent, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/posts/recents?limit=-1", &b.recent, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/posts/recents?limit=abc", &b.recent, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/posts/recents?limit=1.5", &b.recent, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/posts/recents?limit=99999999999999999999", &b.recent, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/search?query=x", &b.search, httpapi.DefaultSearchLimit, 200, `[]`},
		{"/search?query=x&limit=50", &b.search, 50, 200, `[]`},
		{"/search?query=x&limit=51", &b.search, 50, 200, `[]`},
		{"/search?query=x&mode=raw&limit=2", &b.search, 2, 200, `[]`},
		{"/content?query=x&mode=raw", &b.search, httpapi.DefaultSearchLimit, 200, `[]`},
		{"/search?query=x&limit=0", &b.search, -1, 400, `{"error":"limit must be a positive integer"}`},
		{"/search?query=x&limit=ten", &b.search, -1, 400, `{"error":"limit must be a positive integer"}`},
	} {
		r := send(t, "GET", url+tc.path, "", nil)
		if r.status != tc.status || r.body != tc.body+"\n" || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("GET %s: %d %q %q; want %d %q", tc.path, r.status, r.header.Get("Content-Type"), r.body, tc.status, tc.body)
		}
		if got := b.last(tc.of); got != tc.want {
			t.Errorf("GET %s: the backend was asked for %d; want %d", tc.path, got, tc.want)
		}
	}
	if !slices.Equal([]int{httpapi.DefaultRecentLimit, httpapi.MaxRecentLimit, httpapi.MaxSearchLimit}, []int{20, 256, 50}) {
		t.Errorf("limits: recent %d (at most %d), search at most %d", httpapi.DefaultRecentLimit, httpapi.MaxRecentLimit, httpapi.MaxSearchLimit)
	}
}
