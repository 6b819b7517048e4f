package web

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
)

// shared is a handler over a fresh fixture.
func shared(t *testing.T) http.Handler {
	t.Helper()
	return New(fixture(t), Options{Title: "proj"})
}

func contains(t *testing.T, where, body string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(body, w) {
			t.Errorf("%s lacks %q", where, w)
		}
	}
}

func TestPages(t *testing.T) {
	h := shared(t)
	for _, tc := range []struct {
		target string
		status int
		wants  []string
	}{
		{"/", 200, []string{`<a class="fname" href="/folder/go">go/</a>`, "&lt;i&gt;Go&lt;/i&gt; conventions &amp; friends",
			`href="/node/practice-wrap-errors"`, "&lt;script&gt;alert(&#34;kk&#34;)&lt;/script&gt; Wrap errors", `href="/node/req-login"`}},
		{"/folder/go", 200, []string{"<h1>go/</h1>", `href="/node/practice-other"`, "&lt;i&gt;Go&lt;/i&gt;"}},
		{"/node/practice-wrap-errors", 200, []string{"<h1>&lt;script&gt;alert(&#34;kk&#34;)&lt;/script&gt; Wrap errors</h1>",
			`<a href="https://example.com/docs?a=1&amp;b=2">web</a>`, `<a href="/leaf/go/other.md#usage">sibling</a>`,
			`<a href="/">folder</a>`, `<a href="#top">frag</a>`, `<a href="https://example.org/auto">https://example.org/auto</a>`,
			`<a href="http://www.example.net">www.example.net</a>`, `<a href="https://example.com/pic.png">pic</a>`,
			"<table>", "&lt;script&gt;", `<span class="tag">go</span>`, `<a href="/">nodes</a> / <a href="/folder/go">go</a>`}},
		// an id is matched without regard to case
		{"/node/REQ-LOGIN", 200, []string{"Users can log in &lt;script&gt;", `href="/node/scenario-login"`, `href="/node/test-login"`,
			`href="/node/req-logout"`, "<svg", "must"}},
		{"/node/test-login", 200, []string{"← in", "verified_by", `href="/node/req-login"`}},
		{"/node/map-token-rotation", 200, []string{"Changelog", "T-3", "Shortened the rotation &lt;script&gt;", `href="/node/molecule-identity"`, "src/auth/**"}},
		{"/node/molecule-identity", 200, []string{"Atoms", `href="/node/map-token-rotation"`}},
		{"/leaf/go/practice-other.md", 303, nil},
		{"/find?q=wrap+errors", 200, []string{`href="/node/practice-wrap-errors"`, `value="wrap errors"`}},
		// the snippet is text: markdown read, matched words marked, no markers
		{"/find?q=backoff+helper", 200, []string{`<span class="snippet">Use <mark>backoff</mark> with retry.Do, and see the <mark>backoff</mark> <mark>helper</mark> first.</span>`}},
		{"/find?q=the", 200, []string{"no word to look for"}},
		{"/graph", 200, []string{"Identity", `href="/node/map-token-rotation"`, "Atoms in no molecule", "Build scripts", "scripts/*.sh"}},
		{"/trace", 200, []string{"<svg", `href="/node/req-login"`, `href="/node/test-login"`, "verified_by", "depends_on"}},
		{"/trace?all=1", 200, []string{"<svg", `href="/node/practice-wrap-errors"`}},
		{"/trace?focus=test-login&depth=1", 200, []string{"<svg", "req-login", `class="n t-test focus"`}},
		{"/assets/kk.css", 200, []string{"--accent"}},
		{"/assets/kk.js", 200, []string{"data-endpoint"}},
		// unknown ids, paths and parameters
		{"/node/nope", 404, []string{`no node with id &#34;nope&#34;`}},
		{"/node/%3Cscript%3Ealert(1)%3C%2Fscript%3E", 404, []string{"&lt;script&gt;alert(1)&lt;/script&gt;"}},
		{"/folder/nope", 404, []string{"no folder"}},
		{"/leaf/nope.md", 404, nil},
		{"/leaf/..%2F..%2Fconfig.yaml", 400, nil},
		{"/trace?focus=nope", 404, nil},
		{"/trace?depth=9", 400, []string{"depth must be"}},
		{"/assets/nope.js", 404, nil},
		{"/nope", 404, nil},
		{"/search", 404, nil}, // the knowledged API's path stays free
	} {
		res, body := get(t, h, "GET", tc.target)
		if res.StatusCode != tc.status {
			t.Errorf("GET %s: status %d, want %d\n%s", tc.target, res.StatusCode, tc.status, body)
			continue
		}
		contains(t, "GET "+tc.target, body, tc.wants...)
		noMarkup(t, "GET "+tc.target, body)
		if ct := res.Header.Get("Content-Type"); tc.status == 200 && !strings.HasPrefix(tc.target, "/assets/") && ct != "text/html; charset=utf-8" {
			t.Errorf("GET %s: Content-Type %q", tc.target, ct)
		}
		if csp := res.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET %s: Content-Security-Policy %q", tc.target, csp)
		}
	}
}

func TestLeafRedirect(t *testing.T) {
	res, _ := get(t, shared(t), "GET", "/leaf/go/practice-other.md")
	if loc := res.Header.Get("Location"); loc != "/node/practice-other" {
		t.Fatalf("Location %q", loc)
	}
}

func TestReadOnly(t *testing.T) {
	h := shared(t)
	srv := httptest.NewServer(h)
	defer srv.Close()
	for _, target := range []string{"/", "/node/req-login", "/api/find?q=x", "/trace", "/graph", "/folder/go", "/assets/kk.css"} {
		for _, method := range []string{"POST", "PUT", "DELETE", "PATCH", "OPTIONS"} {
			res, _ := get(t, h, method, target)
			if res.StatusCode != http.StatusMethodNotAllowed {
				t.Errorf("%s %s: status %d, want 405", method, target, res.StatusCode)
			}
			if allow := res.Header.Get("Allow"); allow != "GET, HEAD" {
				t.Errorf("%s %s: Allow %q", method, target, allow)
			}
		}
		res, err := http.Head(srv.URL + target)
		if err != nil {
			t.Fatal(err)
		}
		if err := res.Body.Close(); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Errorf("HEAD %s: status %d", target, res.StatusCode)
		}
	}
}

func TestFindJSON(t *testing.T) {
	h := shared(t)
	var v struct {
		Branch string `json:"branch"`
		Query  string `json:"query"`
		Hits   []struct {
			ID, Title, Type, URL, Snippet string
			Parts                         []snippetPart `json:"snippet_parts"`
		} `json:"hits"`
		Note  string `json:"note"`
		Error struct{ Code, Message string }
	}
	decode := func(target string, status int) {
		t.Helper()
		res, body := get(t, h, "GET", target)
		if res.StatusCode != status {
			t.Fatalf("GET %s: status %d, want %d: %s", target, res.StatusCode, status, body)
		}
		if ct := res.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Fatalf("GET %s: Content-Type %q", target, ct)
		}
		if strings.Contains(body, "<") {
			t.Errorf("GET %s: JSON carries an unescaped '<': %s", target, body)
		}
		v.Hits, v.Note = nil, ""
		if err := json.Unmarshal([]byte(body), &v); err != nil {
			t.Fatal(err)
		}
	}
	decode("/api/find?q=log+in", 200)
	found := false
	for _, hit := range v.Hits {
		if hit.ID == "req-login" {
			found = true
			if hit.URL != "/node/req-login" || hit.Type != "req" {
				t.Errorf("hit %+v", hit)
			}
			if !strings.Contains(hit.Title, hostile) {
				t.Errorf("the title should come as it is (the script sets it as text): %q", hit.Title)
			}
		}
	}
	if !found || v.Query != "log in" || v.Branch == "" {
		t.Fatalf("hits %+v", v)
	}
	// The snippet comes as plain text and as runs with the matched words
	// marked, markdown read and the index's markers gone.
	decode("/api/find?q=backoff+helper&limit=1", 200)
	if len(v.Hits) != 1 || v.Hits[0].Snippet != "Use backoff with retry.Do, and see the backoff helper first." ||
		len(v.Hits[0].Parts) != 7 || !v.Hits[0].Parts[1].Mark || v.Hits[0].Parts[1].Text != "backoff" || v.Hits[0].Parts[0].Mark {
		t.Errorf("snippet of backoff helper: %+v", v.Hits)
	}
	decode("/api/find?q=wrap&limit=1", 200)
	if len(v.Hits) != 1 {
		t.Errorf("limit=1 gave %d hits", len(v.Hits))
	}
	decode("/api/find?q=", 200)
	if v.Hits == nil || len(v.Hits) != 0 || v.Note != "" {
		t.Errorf("an empty query: %+v", v)
	}
	decode("/api/find?q=the+a", 200)
	if len(v.Hits) != 0 || v.Note == "" {
		t.Errorf("stop words only: %+v", v)
	}
	decode("/api/find?q=zebra+unicorn", 200)
	if len(v.Hits) != 0 {
		t.Errorf("no match: %+v", v)
	}
	decode("/api/find?q=x&limit=0", 400)
	if v.Error.Code != "VALIDATION_ERROR" {
		t.Errorf("limit=0: %+v", v.Error)
	}
}

func TestLoopbackOnly(t *testing.T) {
	k := fixture(t)
	h := New(k, Options{LoopbackOnly: true})
	for host, want := range map[string]int{"127.0.0.1:8080": 200, "localhost:1": 200, "[::1]:80": 200, "LOCALHOST": 200,
		"evil.example": 421, "evil.example:8080": 421, "10.0.0.1:80": 421, "127.0.0.1.evil.example": 421} {
		req := httptest.NewRequest("GET", "/", nil)
		req.Host = host
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != want {
			t.Errorf("Host %s: status %d, want %d", host, w.Code, want)
		}
	}
}

func TestPrefix(t *testing.T) {
	k := fixture(t)
	mux := http.NewServeMux()
	mux.Handle("/kb/", http.StripPrefix("/kb", New(k, Options{Prefix: "/kb/"})))
	_, body := get(t, mux, "GET", "/kb/")
	contains(t, "GET /kb/", body, `href="/kb/assets/kk.css"`, `src="/kb/assets/kk.js"`, `data-endpoint="/kb/api/find"`,
		`href="/kb/folder/go"`, `href="/kb/node/req-login"`, `action="/kb/find"`)
	_, body = get(t, mux, "GET", "/kb/node/practice-wrap-errors")
	contains(t, "GET /kb/node/practice-wrap-errors", body, `<a href="/kb/leaf/go/other.md#usage">sibling</a>`)
	res, _ := get(t, mux, "GET", "/kb/leaf/go/practice-other.md")
	if loc := res.Header.Get("Location"); loc != "/kb/node/practice-other" {
		t.Errorf("Location %q", loc)
	}
	_, body = get(t, mux, "GET", "/kb/api/find?q=wrap")
	contains(t, "GET /kb/api/find", body, `"url":"/kb/node/practice-wrap-errors"`)
}

// TestTreeCap lists at most treeLeavesPerFolder leaves per folder on the
// tree page, and links the folder's page for the rest.
func TestTreeCap(t *testing.T) {
	old := treeLeavesPerFolder
	treeLeavesPerFolder = 1
	defer func() { treeLeavesPerFolder = old }()
	h := shared(t)
	_, body := get(t, h, "GET", "/")
	contains(t, "GET /", body, `<a href="/folder/go">… and 1 more</a>`)
	if strings.Contains(body, `href="/node/practice-wrap-errors"`) == strings.Contains(body, `href="/node/practice-other"`) {
		t.Error("the tree page should list one of the two leaves of go/")
	}
	_, body = get(t, h, "GET", "/folder/go")
	contains(t, "GET /folder/go", body, `href="/node/practice-wrap-errors"`, `href="/node/practice-other"`)
}

// TestTreeError shows the tree of the leaves kk can read and names the
// ones it cannot, with every problem in each, instead of failing.
func TestTreeError(t *testing.T) {
	k := fixture(t)
	writeFile(t, k.NodePath("go/broken.md"), "---\ntype: practice\ntitle: [unclosed\n---\n")
	writeFile(t, k.NodePath("go/ctx.md"), "---\ntype: practice\ntitle: Use context timeouts\n---\nAlways pass a context with a timeout.\n")
	h := New(k, Options{})
	res, body := get(t, h, "GET", "/")
	if res.StatusCode != 200 {
		t.Fatalf("status %d: %s", res.StatusCode, body)
	}
	contains(t, "GET /", body, `href="/node/practice-wrap-errors"`, "Leaves kk cannot read", ".ai/kenkeep/nodes/go/broken.md",
		".ai/kenkeep/nodes/go/ctx.md", `field &#34;kk_schema_version&#34;`, `field &#34;description&#34;: is required`, `field &#34;kk_confidence&#34;: is required`)
	res, body = get(t, h, "GET", "/folder/go")
	if res.StatusCode != 200 {
		t.Fatalf("GET /folder/go: status %d: %s", res.StatusCode, body)
	}
}

// A knowledge base of practice and map notes only has no traceability
// entity: the trace page shows every note and its links instead of an
// empty box, and says why.
func TestTraceFallsBackToEveryNote(t *testing.T) {
	ctx := t.Context()
	k := optest.NewKB(t)
	for _, in := range []contracts.NodeInput{
		{Type: "practice", Slug: "wrap-errors", Title: "Wrap errors", Description: "Wrap errors", Body: "Wrap them.\n", RelatesTo: []string{"map-errors"}},
		{Type: "map", Slug: "errors", Title: "Error types", Description: "Where the error types live", Body: "In errors/.\n"},
	} {
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	res, body := get(t, New(k, Options{Title: "proj"}), "GET", "/trace")
	if res.StatusCode != 200 {
		t.Fatalf("status %d\n%s", res.StatusCode, body)
	}
	contains(t, "GET /trace", body, "<svg", `href="/node/practice-wrap-errors"`, `href="/node/map-errors"`,
		"There are no traceability entities", "this is every note of the knowledge base and its links")
	if strings.Contains(body, "Nothing to draw") {
		t.Errorf("GET /trace: the fallback still says there is nothing to draw")
	}
	// With no note at all there is nothing to fall back to.
	_, body = get(t, New(optest.NewKB(t), Options{Title: "proj"}), "GET", "/trace")
	contains(t, "GET /trace on an empty knowledge base", body, "Nothing to draw")
	if strings.Contains(body, "<svg") {
		t.Errorf("GET /trace on an empty knowledge base draws an empty picture")
	}
}
