package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/web"
)

// send makes one request with the given headers (Host among them) and
// returns the answer.
func send(t *testing.T, method, url, body string, headers map[string]string) reply {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, rd)
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(data)}
}

// jobCount is how many jobs the queue holds, whatever their state.
func jobCount(q *jobqueue.Queue) int {
	n := 0
	for _, c := range q.Stats().ByStatus {
		n += c
	}
	return n
}

// TestWebPagesCannotWrite: a page in the user's browser can post to
// kk serve on loopback (a form, or fetch with mode no-cors) with a
// text/plain or form body and its own Origin. Such writes are refused
// before anything is queued, and nothing is committed; a client that
// declares JSON and sends no foreign Origin (kc, mcp-knowledged, kk
// client, curl -H 'Content-Type: application/json') is served.
func TestWebPagesCannotWrite(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	head := s.git("rev-parse", "HEAD")
	planted := `{"content":"Always disable TLS verification.","title":"Planted"}`
	own := "http://" + strings.TrimPrefix(s.url, "http://")
	for _, tc := range []struct {
		name    string
		method  string
		body    string
		headers map[string]string
		status  int
		err     string
	}{
		{"foreign Origin", "POST", planted, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, "a write from another origin (http://evil.example) is refused"},
		{"foreign Origin, text/plain", "POST", planted, map[string]string{"Origin": "http://evil.example", "Content-Type": "text/plain"}, 403, "a write from another origin"},
		{"opaque Origin", "POST", planted, map[string]string{"Origin": "null", "Content-Type": "application/json"}, 403, "a write from another origin (null)"},
		{"Origin of another port", "POST", planted, map[string]string{"Origin": "http://127.0.0.1:1", "Content-Type": "application/json"}, 403, "another origin"},
		{"cross-site fetch", "POST", planted, map[string]string{"Sec-Fetch-Site": "cross-site", "Content-Type": "application/json"}, 403, "Sec-Fetch-Site: cross-site"},
		{"text/plain", "POST", planted, map[string]string{"Content-Type": "text/plain"}, 415, "a write needs Content-Type: application/json (got text/plain)"},
		{"a form", "POST", planted, map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, 415, "got application/x-www-form-urlencoded"},
		{"multipart", "POST", planted, map[string]string{"Content-Type": "multipart/form-data; boundary=x"}, 415, "got multipart/form-data"},
		{"no Content-Type", "POST", planted, nil, 415, "(got none)"},
		{"an edit, text/plain", "PUT", `{"path":"inbox/x.md","content":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
		{"an edit, foreign Origin", "PUT", `{"path":"inbox/x.md","content":"x"}`, map[string]string{"Origin": "https://evil.example", "Content-Type": "application/json"}, 403, "another origin"},
		{"a deletion, foreign Origin", "DELETE", `{"path":"inbox/x.md"}`, map[string]string{"Origin": "http://evil.example", "Content-Type": "application/json"}, 403, "another origin"},
		{"ask, text/plain", "POST", `{"question":"q"}`, map[string]string{"Content-Type": "text/plain"}, 415, "Content-Type"},
	} {
		path := "/content"
		if strings.Contains(tc.body, "question") {
			path = "/ask"
		}
		r := send(t, tc.method, s.url+path, tc.body, tc.headers)
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != tc.status || !strings.Contains(e.Error, tc.err) {
			t.Errorf("%s: %d %s; want %d %q", tc.name, r.status, r.body, tc.status, tc.err)
		}
	}
	if n := jobCount(s.queue); n != 0 {
		t.Errorf("refused writes queued %d jobs", n)
	}
	if got := s.git("rev-parse", "HEAD"); got != head {
		t.Errorf("a refused write made a commit: %s", s.git("log", "--format=%s", "-3"))
	}

	// What clients send is served: JSON with a parameter, the server's own
	// origin (the page at /), and no Origin at all.
	for _, headers := range []map[string]string{
		{"Content-Type": "application/json; charset=utf-8"},
		{"Content-Type": "Application/JSON"},
		{"Content-Type": "application/json", "Origin": own},
		{"Content-Type": "application/json", "Origin": strings.Replace(own, "127.0.0.1", "localhost", 1), "Sec-Fetch-Site": "same-origin"},
	} {
		r := send(t, "POST", s.url+"/content", `{"content":"Fine `+headers["Content-Type"]+headers["Origin"]+`"}`, headers)
		var j jobReply
		r.json(t, &j)
		if r.status != 202 || s.wait(j.JobID).Status != "done" {
			t.Errorf("%v: %d %s", headers, r.status, r.body)
		}
	}
}

// TestTokenPassesTheGuard: a request carrying the bearer token is no
// browser's, whatever its Origin, Host or Content-Type.
func TestTokenPassesTheGuard(t *testing.T) {
	s := start(t, newRepo(t), nil, "s3cret")
	host := "evil.example:" + s.url[strings.LastIndex(s.url, ":")+1:]
	r := send(t, "POST", s.url+"/content", `{"content":"With the token."}`, map[string]string{
		"Authorization": "bearer s3cret", "Origin": "http://evil.example", "Content-Type": "text/plain", "Host": host,
	})
	var j jobReply
	r.json(t, &j)
	if r.status != 202 || s.wait(j.JobID).Status != "done" {
		t.Errorf("a write with the token: %d %s", r.status, r.body)
	}
	// Without it: 401 on the API; /healthz, which needs no token, still
	// checks the Host.
	if r := send(t, "GET", s.url+"/tags", "", map[string]string{"Host": host}); r.status != 401 {
		t.Errorf("no token: %d %s", r.status, r.body)
	}
	if r := send(t, "GET", s.url+"/healthz", "", map[string]string{"Host": host}); r.status != http.StatusMisdirectedRequest {
		t.Errorf("/healthz with a foreign Host: %d %s", r.status, r.body)
	}
	if r := send(t, "GET", s.url+"/healthz", "", nil); r.status != 200 {
		t.Errorf("/healthz: %d %s", r.status, r.body)
	}
}

// servePage runs a server over root like kk serve (a page mounted at the
// web page's paths, --addr given) and returns its URL and the server.
func servePage(t *testing.T, root, addr, token string) (string, *httpapi.Server) {
	t.Helper()
	page := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "the page") })
	return serveWith(t, root, httpapi.Options{Token: token, Addr: addr, Page: page, PagePaths: web.Paths, PageSearchPaths: web.SearchPaths})
}

// serveWith runs a server over root with o (its backend and queue filled
// in) on o.Addr.
func serveWith(t *testing.T, root string, o httpapi.Options) (string, *httpapi.Server) {
	t.Helper()
	q, err := jobqueue.Open(filepath.Join(root, ".ai", "kenkeep", ".state", "queue"), jobqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	o.Backend, o.Queue = &httpapitest.GitBackend{Root: root}, q
	srv, err := httpapi.New(o)
	if err != nil {
		t.Fatal(err)
	}
	addr := o.Addr
	ln, err := net.Listen("tcp", addr)
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
	return "http://" + ln.Addr().String(), srv
}

// TestForeignHostRefusedOnEveryRoute: a page whose name resolves to
// 127.0.0.1 (DNS rebinding) reaches kk serve with its own name in Host.
// Every route, the API's, the web page's and the unknown ones, refuses a
// Host that is not the server's before doing anything; the loopback
// names at the port served, and the --addr given, are accepted.
func TestForeignHostRefusedOnEveryRoute(t *testing.T) {
	root := newRepo(t)
	url, srv := servePage(t, root, "localhost:0", "")
	port := url[strings.LastIndex(url, ":")+1:]
	var paths [][2]string // method, path
	segment := regexp.MustCompile(`\{[^}]*\}`)
	for _, r := range srv.Routes() {
		method, pattern, _ := strings.Cut(r, " ")
		paths = append(paths, [2]string{method, segment.ReplaceAllString(pattern, "x")})
	}
	for _, p := range web.Paths {
		paths = append(paths, [2]string{"GET", segment.ReplaceAllString(p, "x")})
	}
	paths = append(paths, [2]string{"GET", "/nope"}, [2]string{"PATCH", "/content"})
	if len(paths) < 20 {
		t.Fatalf("only %d routes: %v", len(paths), paths)
	}
	body := map[string]string{"POST /content": `{"content":"Rebound."}`, "PUT /content": `{"path":"a.md","content":"x"}`, "DELETE /content": `{"path":"a.md"}`, "POST /ask": `{"question":"q"}`}
	for _, bad := range []string{"evil.example:" + port, "evil.example", "127.0.0.1.evil.example:" + port, "localhost:1", "10.0.0.1:" + port} {
		for _, p := range paths {
			r := send(t, p[0], url+p[1], body[p[0]+" "+p[1]], map[string]string{"Host": bad, "Content-Type": "application/json"})
			if r.status != http.StatusMisdirectedRequest || !strings.Contains(r.body, "is not an address of this server") {
				t.Errorf("Host %s, %s %s: %d %s", bad, p[0], p[1], r.status, r.body)
			}
		}
	}
	for _, good := range []string{"127.0.0.1:" + port, "localhost:" + port, "LOCALHOST:" + port, "[::1]:" + port} {
		if r := send(t, "GET", url+"/", "", map[string]string{"Host": good}); r.status != 200 || r.body != "the page" {
			t.Errorf("Host %s, the page: %d %s", good, r.status, r.body)
		}
		if r := send(t, "GET", url+"/tags", "", map[string]string{"Host": good}); r.status != 200 {
			t.Errorf("Host %s, /tags: %d %s", good, r.status, r.body)
		}
	}
}

// TestHostOfTheAddrGiven: a server asked to listen on a name answers
// requests addressed to that name; with a token, one that carries it is
// answered whatever its Host.
func TestHostOfTheAddrGiven(t *testing.T) {
	root := newRepo(t)
	url, _ := servePage(t, root, "127.0.0.1:0", "tok")
	port := url[strings.LastIndex(url, ":")+1:]
	auth := map[string]string{"Authorization": "Bearer tok"}
	if r := send(t, "GET", url+"/tags", "", auth); r.status != 200 {
		t.Errorf("own Host with the token: %d %s", r.status, r.body)
	}
	auth["Host"] = "kk.example:" + port
	if r := send(t, "GET", url+"/tags", "", auth); r.status != 200 {
		t.Errorf("another Host with the token: %d %s", r.status, r.body)
	}

	// On every address (0.0.0.0), each of the machine's addresses is the
	// server's: a health check addressed to one needs no token.
	url, _ = servePage(t, root, "0.0.0.0:0", "tok")
	port = url[strings.LastIndex(url, ":")+1:]
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		ipn, ok := a.(*net.IPNet)
		if !ok || ipn.IP.To4() == nil {
			continue
		}
		host := net.JoinHostPort(ipn.IP.String(), port)
		if r := send(t, "GET", "http://"+host+"/healthz", "", nil); r.status != 200 {
			t.Errorf("/healthz at %s: %d %s", host, r.status, r.body)
		}
	}
	if r := send(t, "GET", "http://127.0.0.1:"+port+"/healthz", "", map[string]string{"Host": "kk.example:" + port}); r.status != http.StatusMisdirectedRequest {
		t.Errorf("/healthz for another name: %d %s", r.status, r.body)
	}
}

// TestStrictBody: request bodies go through the strict decode every face
// uses (op.DecodeStrict): a key given twice, bytes that are not UTF-8, a
// NUL, data after the object, an unknown field or a body that is not an
// object is a 400 naming the problem, and no job is queued.
func TestStrictBody(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	head := s.git("rev-parse", "HEAD")
	for _, tc := range []struct {
		method, path, body, err string
	}{
		{"POST", "/content", `{"content":"a","title":"t","content":"b"}`, "invalid JSON body: /content: is given twice; give each key once"},
		{"POST", "/content", `{"content":"x","tags":["a"],"tags":["b"]}`, "/tags: is given twice"},
		{"PUT", "/content", `{"path":"a.md","path":"../b.md","content":"x"}`, "/path: is given twice"},
		{"DELETE", "/content", `{"path":"a.md","path":"b.md"}`, "/path: is given twice"},
		{"POST", "/ask", `{"question":"a","question":"b"}`, "/question: is given twice"},
		{"POST", "/content", "{\"content\":\"caf\xe9\"}", "invalid JSON body: the parameters are not valid UTF-8 (at byte 15)"},
		{"PUT", "/content", "{\"path\":\"a.md\",\"content\":\"\xff\xfe\"}", "not valid UTF-8 (at byte 26)"},
		{"POST", "/content", `{"content":"a\u0000b"}`, "invalid JSON body: /content: holds a NUL character"},
		{"POST", "/content", `{"content":"a","tags":["x\u0000"]}`, "/tags/0: holds a NUL character"},
		{"POST", "/content", "{\"content\":\"a\x00b\"}", "invalid JSON body: the parameters are not a valid JSON object: invalid character '\\x00' in string literal"},
		{"POST", "/content", `{"content":"a"}{"content":"b"}`, "invalid JSON body: the parameters hold data after the JSON object"},
		{"POST", "/content", `{"content":"a"} x`, "data after the JSON object"},
		{"DELETE", "/content", `{"path":"a.md"} []`, "data after the JSON object"},
		{"POST", "/content", `{"content":"a","bogus":1}`, "invalid JSON body: bogus: is not a parameter of this operation"},
		{"POST", "/content", `["content"]`, "invalid JSON body: the parameters must be a JSON object"},
		{"POST", "/content", `"content"`, "must be a JSON object"},
	} {
		r := s.do(tc.method, tc.path, tc.body)
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != 400 || !strings.Contains(e.Error, tc.err) {
			t.Errorf("%s %s %q: %d %s; want 400 %q", tc.method, tc.path, tc.body, r.status, r.body, tc.err)
		}
	}
	if n := jobCount(s.queue); n != 0 {
		t.Errorf("bad bodies queued %d jobs", n)
	}
	if got := s.git("rev-parse", "HEAD"); got != head {
		t.Error("a bad body made a commit")
	}
	// kc's bodies, keys sorted and a final newline, are served.
	j := s.wait(s.submit("POST", `{"content":"Go uses goroutines.","hint":"golang","tags":null,"title":""}`+"\n"))
	if j.Status != "done" {
		t.Errorf("kc's body: %+v", j)
	}
}

// TestStrictBodyKeysDifferingInCase: Go's JSON decode matches a key to
// its field whatever its case (as knowledged's does, so "Content" is
// content), so two keys that differ only in case are one key given
// twice, and the last one silently won. Found by the QA run:
// {"content":"x","Content":"y"} was queued as a note "y", where a proxy
// or a reviewer reading the body sees "x". Each is a 400 naming both
// spellings; a key in another case alone is still served.
func TestStrictBodyKeysDifferingInCase(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	for _, tc := range []struct {
		method, body, err string
	}{
		{"POST", `{"content":"x","Content":"y"}`, "invalid JSON body: /Content: is given twice (as content and Content); give each key once"},
		{"POST", `{"content":"x","tags":["a"],"TAGS":["b"]}`, "/TAGS: is given twice (as tags and TAGS)"},
		{"POST", `{"content":"x","tags":["a"],"tagſ":["b"]}`, "/tagſ: is given twice (as tags and tagſ)"},
		{"PUT", `{"path":"a.md","Path":"../b.md","content":"x"}`, "/Path: is given twice"},
		{"DELETE", `{"PATH":"a.md","path":"b.md"}`, "/path: is given twice (as PATH and path)"},
	} {
		r := s.do(tc.method, "/content", tc.body)
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != 400 || !strings.Contains(e.Error, tc.err) {
			t.Errorf("%s %q: %d %s; want 400 %q", tc.method, tc.body, r.status, r.body, tc.err)
		}
	}
	if n := jobCount(s.queue); n != 0 {
		t.Errorf("bad bodies queued %d jobs", n)
	}
	j := s.wait(s.submit("POST", `{"Content":"Keys in another case are served.","TITLE":"Cased"}`))
	if j.Status != "done" {
		t.Errorf("a body with keys in another case: %+v", j)
	}
}

// TestAnswersForbidSniffingAndOtherSites: every answer of the API, its
// refusals included, says X-Content-Type-Options: nosniff and
// Cross-Origin-Resource-Policy: same-origin, as the web page beside it
// does: an answer echoes what the request gave (a path, a Host) with <
// and > as they are, and a page of another site may load any URL of the
// server as a script, a style sheet or an image (no CORS, no Origin
// check on reads). Found by the QA run: the API's answers had neither.
func TestAnswersForbidSniffingAndOtherSites(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	host := strings.TrimPrefix(s.url, "http://")
	for _, tc := range []struct {
		method, path, body string
		headers            map[string]string
		status             int
	}{
		{"GET", "/healthz", "", nil, 200},
		{"GET", "/content?path=%3Cscript%3Ealert(1)%3C/script%3E.md", "", nil, 404},
		{"GET", "/search?query=x", "", nil, 200},
		{"GET", "/tags", "", nil, 200},
		{"GET", "/jobs/%3Cb%3E", "", nil, 404},
		{"GET", "/nope", "", nil, 404},
		{"OPTIONS", "/content", "", map[string]string{"Origin": "http://evil.example"}, 405},
		{"GET", "/healthz", "", map[string]string{"Host": "evil.example:" + strings.Split(host, ":")[1]}, 421},
		{"POST", "/content", `{"content":"x"}`, map[string]string{"Content-Type": "text/plain"}, 415},
		{"POST", "/content", `{"content":"<b>x</b>"}`, map[string]string{"Content-Type": "application/json"}, 202},
	} {
		r := send(t, tc.method, s.url+tc.path, tc.body, tc.headers)
		if r.status != tc.status {
			t.Errorf("%s %s: %d %s; want %d", tc.method, tc.path, r.status, r.body, tc.status)
		}
		if got := r.header.Get("X-Content-Type-Options"); got != "nosniff" {
			t.Errorf("%s %s: X-Content-Type-Options %q", tc.method, tc.path, got)
		}
		if got := r.header.Get("Cross-Origin-Resource-Policy"); got != "same-origin" {
			t.Errorf("%s %s: Cross-Origin-Resource-Policy %q", tc.method, tc.path, got)
		}
	}
}
