package httpapi_test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
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
	}{{1 << 20, 1<<20 - httpapi.ConnHeadroom}, {1024, 1024 - httpapi.ConnHeadroom}, {httpapi.MaxSearchTags, 128}, {100, 50}, {1, 1}, {0, 1}} {
		if got := httpapi.MaxConnsFor(tc.limit); got != tc.want {
			t.Errorf("an open-file limit of %d: a cap of %d connections, want %d", tc.limit, got, tc.want)
		}
	}
	if n := httpapi.DefaultMaxConns(); n < 1 {
		t.Errorf("DefaultMaxConns() = %d", n)
	}
}

// TestBodiesHeldAtOnceAreBounded: the bytes of write bodies read (and
// held) at once are at most Limits.Bodies: a write whose body finds no
// room waits for it (Limits.Wait), then is answered 503 with
// Retry-After, nothing queued; the body holding the room, once its rest
// comes, is accepted. (Bodies are read before a write waits for its
// slot, so that a slow one holds no slot: without this bound, each
// connection could hold a body of up to 1 MiB.)
func TestBodiesHeldAtOnceAreBounded(t *testing.T) {
	url, _ := serveWith(t, newRepo(t), httpapi.Options{Addr: "127.0.0.1:0", MaxBody: 2*httpapi.BodyChunk - 1,
		Limits: httpapi.Limits{Bodies: 2 * httpapi.BodyChunk, Wait: 300 * time.Millisecond}})
	host := strings.TrimPrefix(url, "http://")
	// A body of almost two chunks, of which the first one and a half
	// come: it holds the whole room.
	big := `{"title":"Big","content":"` + strings.Repeat("x", 2*httpapi.BodyChunk-100) + `\n"}`
	c, err := net.Dial("tcp", host)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	fmt.Fprintf(c, "POST /content HTTP/1.1\r\nHost: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nExpect: 100-continue\r\n\r\n", host, len(big))
	br := bufio.NewReader(c)
	if line, err := br.ReadString('\n'); err != nil || !strings.HasPrefix(line, "HTTP/1.1 100 ") {
		t.Fatalf("waiting for 100 Continue: %q %v", line, err)
	}
	if _, err := br.ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	half := httpapi.BodyChunk * 3 / 2
	if _, err := io.WriteString(c, big[:half]); err != nil {
		t.Fatal(err)
	}
	// Once the room is held, another write finds none.
	var r reply
	for i := 0; ; i++ {
		r = send(t, "POST", url+"/content", fmt.Sprintf(`{"title":"Small","content":"A small note, %d.\n"}`, i), map[string]string{"Content-Type": "application/json"})
		if r.status != http.StatusAccepted || i == 100 {
			break
		}
		// The big body's second chunk was not yet read: this one got
		// room, and is queued. Again, a while later.
		time.Sleep(10 * time.Millisecond)
	}
	if r.status != http.StatusServiceUnavailable || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "request bodies being read at once") {
		t.Fatalf("a write with no room for its body: %d %v %s", r.status, r.header, r.body)
	}
	if _, err := io.WriteString(c, big[half:]); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Errorf("the big body, once all of it came: %d", resp.StatusCode)
	}
}

// A tag search names at most MaxSearchTags distinct tags (after they are
// trimmed, lower-cased and deduplicated): more is 400 naming the count,
// and the backend is not asked. Found by the red team: one GET of
// /search with 50,000 tags (about 400 KB of query string, well within
// the header limit) took seconds of CPU in its deduplication and the
// match (a quadratic comparison of every tag with every other), and the
// four search slots held at once by such requests kept every other
// search waiting.
func TestSearchTagsAreBounded(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	id := s.submit("POST", `{"content":"Channels pass values.","title":"Go Channels","tags":["golang"]}`)
	s.wait(id)
	many := func(n int) string {
		tags := make([]string, n)
		for i := range tags {
			tags[i] = fmt.Sprintf("t%d", i)
		}
		return strings.Join(tags, ",")
	}
	for _, match := range []string{"any", "all"} {
		r := s.do("GET", "/search?match="+match+"&tags="+many(httpapi.MaxSearchTags+1), "")
		if want := fmt.Sprintf(`{"error":"tags: %d given; at most %d"}`, httpapi.MaxSearchTags+1, httpapi.MaxSearchTags); r.status != http.StatusBadRequest || strings.TrimSpace(r.body) != want {
			t.Errorf("match=%s, %d tags: %d %s", match, httpapi.MaxSearchTags+1, r.status, r.body)
		}
	}
	// Counted once they are deduplicated: the same tags again, in
	// another case and with blanks, are within the bound.
	dup := many(httpapi.MaxSearchTags-1) + ",GOLANG, , " + strings.ToUpper(many(httpapi.MaxSearchTags-1))
	r := s.do("GET", "/search?tags="+url.QueryEscape(dup)+"&tag=golang", "")
	if r.status != 200 || strings.Count(r.body, `"path"`) != 1 {
		t.Errorf("%d distinct tags, repeated: %d %s", httpapi.MaxSearchTags, r.status, r.body)
	}
}
