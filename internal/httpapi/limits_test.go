package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
)

// heldPage is a web page whose /graph holds each request until release
// gets a value, after saying so on entered.
func heldPage() (page http.Handler, entered, release chan struct{}) {
	entered, release = make(chan struct{}, 8), make(chan struct{}, 8)
	page = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/graph" {
			entered <- struct{}{}
			<-release
		}
		_, _ = w.Write([]byte("the page"))
	})
	return page, entered, release
}

// TestBusyClassTurnsRequestsAway: a class of routes runs at most its
// limit of requests at once; one more waits for a slot (at most Queue of
// them), and past that the answer is 503 with Retry-After, while other
// classes are served.
func TestBusyClassTurnsRequestsAway(t *testing.T) {
	page, entered, release := heldPage()
	url, _ := serveWith(t, newRepo(t), httpapi.Options{Addr: "127.0.0.1:0", Page: page, PagePaths: []string{"/graph", "/find"}, PageSearchPaths: []string{"/find"},
		Limits: httpapi.Limits{Reads: 1, Searches: 1, Queue: 1, Wait: time.Minute}})
	type answer struct {
		path string
		reply
	}
	results := make(chan answer, 3)
	get := func(p string) { results <- answer{p, send(t, "GET", url+p, "", nil)} }
	go get("/graph") // runs, held
	<-entered
	// Two more reads: one waits for the slot, the other finds the queue
	// full and is turned away at once.
	go get("/graph")
	go get("/tags")
	r := <-results
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" || !strings.Contains(r.body, "too many read requests at once (1 running, 1 waiting); try again shortly") {
		t.Fatalf("a read past the queue: %d %v %s", r.status, r.header, r.body)
	}
	// Another class is served meanwhile, and so are unbounded routes.
	for _, p := range []string{"/find", "/healthz", "/jobs/x"} {
		if r := send(t, "GET", url+p, "", nil); r.status == http.StatusServiceUnavailable {
			t.Errorf("%s while reads are full: %d %s", p, r.status, r.body)
		}
	}
	// Freed, the slot goes to the one waiting.
	release <- struct{}{}
	if r.path == "/tags" {
		release <- struct{}{} // the waiting one is held too
	}
	for range 2 {
		if r := <-results; r.status != 200 {
			t.Errorf("%s: %d %s", r.path, r.status, r.body)
		}
	}
}

// TestWaitForASlotEnds: a request that waits longer than Wait is turned
// away.
func TestWaitForASlotEnds(t *testing.T) {
	page, entered, release := heldPage()
	url, _ := serveWith(t, newRepo(t), httpapi.Options{Addr: "127.0.0.1:0", Page: page, PagePaths: []string{"/graph"},
		Limits: httpapi.Limits{Reads: 1, Queue: 5, Wait: 50 * time.Millisecond}})
	held := make(chan reply, 1)
	go func() { held <- send(t, "GET", url+"/graph", "", nil) }()
	<-entered
	if r := send(t, "GET", url+"/tags", "", nil); r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") != "1" {
		t.Errorf("a read that waited too long: %d %v %s", r.status, r.header, r.body)
	}
	release <- struct{}{}
	if r := <-held; r.status != 200 {
		t.Errorf("the held read: %d %s", r.status, r.body)
	}
}

// The default cap on connections leaves ConnHeadroom descriptors to the
// worker, and takes at most half of a low open-file limit.
func TestDefaultMaxConns(t *testing.T) {
	for _, tc := range []struct {
		limit uint64
		want  int
	}{{1 << 20, 1<<20 - httpapi.ConnHeadroom}, {1024, 1024 - httpapi.ConnHeadroom}, {256, 128}, {100, 50}, {1, 1}, {0, 1}} {
		if got := httpapi.MaxConnsFor(tc.limit); got != tc.want {
			t.Errorf("an open-file limit of %d: a cap of %d connections, want %d", tc.limit, got, tc.want)
		}
	}
	if n := httpapi.DefaultMaxConns(); n < 1 {
		t.Errorf("DefaultMaxConns() = %d", n)
	}
}
