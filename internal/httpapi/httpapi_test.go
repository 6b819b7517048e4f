package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/httpapi/httpapitest"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/llm"
)

// service is a running server over a test repository, and a client.
type service struct {
	t       *testing.T
	root    string
	backend *httpapitest.GitBackend
	queue   *jobqueue.Queue
	url     string
	token   string
	stop    func()
}

func newRepo(t *testing.T) string { return httpapitest.NewRepo(t) }

func start(t *testing.T, root string, b *httpapitest.GitBackend, token string) *service {
	t.Helper()
	s := httpapitest.Start(t, root, b, token)
	return &service{t: t, root: root, backend: s.Backend, queue: s.Queue, url: s.URL, token: token, stop: s.Stop}
}

// reply is one HTTP answer.
type reply struct {
	status int
	header http.Header
	body   string
}

func (r reply) json(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal([]byte(r.body), v); err != nil {
		t.Fatalf("body %q: %v", r.body, err)
	}
}

func (s *service) do(method, path, body string) reply {
	s.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.url+path, rd)
	if err != nil {
		s.t.Fatal(err)
	}
	if method != "GET" && method != "HEAD" {
		req.Header.Set("Content-Type", "application/json")
	}
	if s.token != "" {
		req.Header.Set("Authorization", "Bearer "+s.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, _ := io.ReadAll(resp.Body)
	return reply{resp.StatusCode, resp.Header, string(data)}
}

type jobReply struct {
	JobID  string `json:"job_id"`
	Status string `json:"status"`
	Path   string `json:"path"`
	Error  string `json:"error"`
}

// submit sends a write and returns its job id.
func (s *service) submit(method, body string) string {
	s.t.Helper()
	r := s.do(method, "/content", body)
	var j jobReply
	r.json(s.t, &j)
	if r.status != http.StatusAccepted || j.JobID == "" || (j.Status != "queued" && j.Status != "processing") {
		s.t.Fatalf("%s /content %s: %d %s", method, body, r.status, r.body)
	}
	return j.JobID
}

// wait polls the job until it is done or failed. Every poll must find it.
func (s *service) wait(id string) jobReply {
	s.t.Helper()
	for range 6000 {
		r := s.do("GET", "/jobs/"+id, "")
		if r.status != http.StatusOK {
			s.t.Fatalf("GET /jobs/%s: %d %s", id, r.status, r.body)
		}
		var j jobReply
		r.json(s.t, &j)
		if j.Status == "done" || j.Status == "failed" {
			return j
		}
		time.Sleep(5 * time.Millisecond)
	}
	s.t.Fatalf("job %s did not finish", id)
	return jobReply{}
}

func (s *service) git(args ...string) string {
	s.t.Helper()
	out, err := gitx.Run(context.Background(), s.root, args...)
	if err != nil {
		s.t.Fatal(err)
	}
	return strings.TrimSpace(string(out))
}

func TestStoreEditDelete(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	id := s.submit("POST", `{"content":"Go uses goroutines for concurrency.\n","hint":"golang","tags":[" golang ",""],"title":" Goroutines "}`)
	j := s.wait(id)
	if j.Status != "done" || j.Path != "inbox/goroutines.md" || j.JobID != id || j.Error != "" {
		t.Fatalf("stored job: %+v", j)
	}
	if got := s.git("log", "-1", "--format=%an|%s"); got != "kk serve|store("+id+"): inbox/goroutines.md" {
		t.Errorf("commit: %q", got)
	}

	for _, p := range []string{"inbox/goroutines.md", ".ai/kenkeep/nodes/inbox/goroutines.md", "inbox%5Cgoroutines.md"} {
		r := s.do("GET", "/content?path="+p, "")
		var doc httpapi.Doc
		r.json(t, &doc)
		if r.status != 200 || !strings.Contains(doc.Content, `title: "Goroutines"`) || !strings.Contains(doc.Content, `tags: ["golang"]`) || !strings.HasSuffix(doc.Content, "\n\nGo uses goroutines for concurrency.\n") {
			t.Errorf("GET /content?path=%s: %d %s", p, r.status, r.body)
		}
		if r.header.Get("Content-Type") != "application/json" {
			t.Errorf("content type %q", r.header.Get("Content-Type"))
		}
	}
	before := s.do("GET", "/content?path=inbox/goroutines.md", "").body
	created := before[strings.Index(before, "created: "):][:30]

	// A content edit, then a metadata-only edit that keeps the body.
	j = s.wait(s.submit("PUT", `{"content":"Goroutines are cheap threads.","description":"","path":"inbox/goroutines.md","tags":null,"title":""}`))
	if j.Status != "done" || j.Path != "inbox/goroutines.md" {
		t.Fatalf("edit: %+v", j)
	}
	j = s.wait(s.submit("PUT", `{"content":"","description":"Updated desc","path":"inbox/goroutines.md","tags":["golang","concurrency"],"title":"Goroutines v2"}`))
	if j.Status != "done" {
		t.Fatalf("metadata edit: %+v", j)
	}
	after := s.do("GET", "/content?path=inbox/goroutines.md", "").body
	for _, want := range []string{`title: \"Goroutines v2\"`, `description: \"Updated desc\"`, `tags: [\"golang\",\"concurrency\"]`, created, `Goroutines are cheap threads.`} {
		if !strings.Contains(after, want) {
			t.Errorf("after the edits the note lacks %q:\n%s", want, after)
		}
	}
	if got := s.git("log", "-2", "--format=%s"); !strings.HasPrefix(got, "edit(") || strings.Count(got, "edit(") != 2 {
		t.Errorf("edit commits: %q", got)
	}

	j = s.wait(s.submit("DELETE", `{"path":"inbox/goroutines.md"}`))
	if j.Status != "done" || j.Path != "inbox/goroutines.md" {
		t.Fatalf("delete: %+v", j)
	}
	if r := s.do("GET", "/content?path=inbox/goroutines.md", ""); r.status != 404 || r.body != `{"error":"file not found: inbox/goroutines.md"}`+"\n" {
		t.Errorf("deleted note: %d %s", r.status, r.body)
	}
	if got := s.git("status", "--porcelain"); got != "" {
		t.Errorf("the work tree is not clean:\n%s", got)
	}
	// Four job commits, each touching the one note.
	if got := s.git("log", "--format=%s", "--", ".ai/kenkeep/nodes/inbox/goroutines.md"); strings.Count(got, "\n") != 3 {
		t.Errorf("commits of the note:\n%s", got)
	}
}

func TestFailedJobStaysFailed(t *testing.T) {
	root := newRepo(t)
	s := start(t, root, nil, "")
	id := s.submit("DELETE", `{"path":"nope/x.md"}`)
	j := s.wait(id)
	if j.Status != "failed" || j.Error != "file not found: nope/x.md" || j.Path != "nope/x.md" {
		t.Fatalf("failed job: %+v", j)
	}
	head := s.git("rev-parse", "HEAD")
	// A job that fails after writing leaves nothing behind.
	s.backend.BeforeWrite = func(j *httpapi.Job) error {
		if strings.Contains(j.Request.Content, "boom") {
			p := filepath.Join(root, ".ai", "kenkeep", "nodes", "inbox", "half.md")
			_ = os.MkdirAll(filepath.Dir(p), 0o755)
			if err := j.Touch(".ai/kenkeep/nodes/inbox/half.md"); err != nil {
				return err
			}
			_ = os.WriteFile(p, []byte("half"), 0o644)
			return errors.New("organizer failed: boom")
		}
		return nil
	}
	boom := s.wait(s.submit("POST", `{"content":"boom"}`))
	if boom.Status != "failed" || boom.Error != "organizer failed: boom" {
		t.Fatalf("boom: %+v", boom)
	}
	if got := s.git("status", "--porcelain"); got != "" {
		t.Errorf("a failed job left files behind:\n%s", got)
	}
	if s.git("rev-parse", "HEAD") != head {
		t.Error("a failed job made a commit")
	}
	s.stop()

	// After a restart both are still failed, and neither runs again.
	s2 := start(t, root, &httpapitest.GitBackend{BeforeWrite: func(j *httpapi.Job) error {
		t.Errorf("job %s ran again", j.ID)
		return nil
	}}, "")
	for _, want := range []jobReply{j, boom} {
		r := s2.do("GET", "/jobs/"+want.JobID, "")
		var got jobReply
		r.json(t, &got)
		if r.status != 200 || got != want {
			t.Errorf("after restart: %d %+v, want %+v", r.status, got, want)
		}
	}
}

func TestDoneJobAnsweredAfterRestart(t *testing.T) {
	root := newRepo(t)
	s := start(t, root, nil, "")
	want := s.wait(s.submit("POST", `{"content":"Keep it.","title":"Keep"}`))
	s.stop()
	s2 := start(t, root, nil, "")
	r := s2.do("GET", "/jobs/"+want.JobID, "")
	var got jobReply
	r.json(t, &got)
	if r.status != 200 || got != want {
		t.Errorf("after restart: %d %+v, want %+v", r.status, got, want)
	}
}

func TestDedupOfActivePosts(t *testing.T) {
	release := make(chan struct{})
	b := &httpapitest.GitBackend{BeforeWrite: func(*httpapi.Job) error { <-release; return nil }}
	s := start(t, newRepo(t), b, "")
	first := s.submit("POST", `{"content":"same","hint":"","tags":null,"title":""}`)
	second := s.submit("POST", `{"content":"same","hint":"","tags":null,"title":""}`)
	other := s.submit("POST", `{"content":"same","title":"Other"}`)
	if first != second || other == first {
		t.Errorf("dedup: %s %s %s", first, second, other)
	}
	close(release)
	if j := s.wait(first); j.Status != "done" {
		t.Fatalf("%+v", j)
	}
	s.wait(other)
	third := s.submit("POST", `{"content":"same","hint":"","tags":null,"title":""}`)
	if third == first {
		t.Error("a post identical to a finished job was merged into it")
	}
	if j := s.wait(third); j.Path != "inbox/same-2.md" {
		t.Errorf("third: %+v", j)
	}
}

func TestErrors(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	big := `{"content":"` + strings.Repeat("x", httpapi.DefaultMaxBody) + `"}`
	for _, tc := range []struct {
		method, path, body string
		status             int
		err                string
	}{
		{"POST", "/content", "", 400, "invalid JSON body: EOF"},
		{"POST", "/content", "{", 400, "invalid JSON body: the parameters are not a valid JSON object: unexpected end of input"},
		{"POST", "/content", `{"content":"  \n"}`, 400, "content must not be empty"},
		{"POST", "/content", `{"content":7}`, 400, "invalid JSON body: content: is number, not string"},
		{"POST", "/content", big, 413, "request body exceeds 1048576 bytes"},
		{"PUT", "/content", `{}`, 400, "path must not be empty"},
		{"PUT", "/content", `{"path":"a.md","content":" ","title":" ","tags":[" "]}`, 400, "content or metadata update must not be empty"},
		{"PUT", "/content", `{"path":"../x.md","content":"x"}`, 400, "path must stay within the repository: ../x.md"},
		{"PUT", "/content", `{"path":"/x.md","content":"x"}`, 400, "path must be repo-relative: /x.md"},
		{"PUT", "/content", `{"path":"x.txt","content":"x"}`, 400, "path must be a Markdown file: x.txt"},
		{"DELETE", "/content", "", 400, "invalid JSON body: EOF"},
		{"DELETE", "/content", `{"path":" "}`, 400, "path must not be empty"},
		{"DELETE", "/content", `{"path":"go/index.md"}`, 400, "path must not target a generated index file: go/index.md"},
		{"GET", "/content", "", 400, "path query parameter is required"},
		{"GET", "/content?path=foo.txt", "", 404, "file not found: foo.txt"},
		{"GET", "/content?path=../etc/passwd.md", "", 404, "file not found: ../etc/passwd.md"},
		{"GET", "/content?path=README.md", "", 404, "file not found: README.md"},
		{"GET", "/search", "", 400, "provide either query=<text> or tag=<t> / tags=<a,b>"},
		{"GET", "/search?mode=raw", "", 400, "provide either query=<text> or tag=<t> / tags=<a,b>"},
		{"GET", "/search?tags=,%20", "", 400, "at least one tag is required"},
		{"GET", "/search?tag=a&match=some", "", 400, `match must be "any" or "all"`},
		{"GET", "/search?query=x&limit=0", "", 400, "limit must be a positive integer"},
		{"GET", "/answer", "", 400, "query query parameter is required"},
		{"GET", "/answer?query=x", "", 503, "LLM provider is not configured"},
		{"POST", "/ask", `{"question":" "}`, 400, "question must not be empty"},
		{"POST", "/ask", `nope`, 400, "invalid JSON body: the parameters are not a valid JSON object: invalid character 'o' in literal null (expecting 'u')"},
		{"POST", "/ask", `{"question":"why?"}`, 503, "LLM provider is not configured"},
		{"GET", "/jobs/nope", "", 404, "job not found: nope"},
		{"GET", "/jobs/", "", 404, "not found: /jobs/"},
		{"GET", "/posts/recents?limit=0", "", 400, "limit must be a positive integer"},
		{"GET", "/posts/recents?limit=x", "", 400, "limit must be a positive integer"},
		{"GET", "/nope", "", 404, "not found: /nope"},
		{"PATCH", "/content", "", 405, "method PATCH is not allowed on /content"},
		{"POST", "/jobs/x", "", 405, "method POST is not allowed on /jobs/x"},
		{"DELETE", "/tags", "", 405, "method DELETE is not allowed on /tags"},
	} {
		r := s.do(tc.method, tc.path, tc.body)
		var e struct {
			Error string `json:"error"`
		}
		if err := json.Unmarshal([]byte(r.body), &e); err != nil || r.status != tc.status || e.Error != tc.err || r.header.Get("Content-Type") != "application/json" {
			t.Errorf("%s %s %.40q: %d %s (%s); want %d %q", tc.method, tc.path, tc.body, r.status, strings.TrimSpace(r.body), r.header.Get("Content-Type"), tc.status, tc.err)
		}
	}
	if r := s.do("PATCH", "/content", ""); r.header.Get("Allow") != "DELETE, GET, HEAD, POST, PUT" {
		t.Errorf("Allow: %q", r.header.Get("Allow"))
	}
	if r := s.do("PUT", "/search", ""); r.header.Get("Allow") != "GET, HEAD" {
		t.Errorf("Allow: %q", r.header.Get("Allow"))
	}
}

func TestSearchTagsRecent(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	empty := []struct{ path, want string }{
		{"/search?query=channels&mode=raw", "[]"},
		{"/search?tag=golang", "[]"},
		{"/tags", `{"tags":[]}`},
		{"/posts/recents", `{"posts":[]}`},
	}
	for _, e := range empty {
		if r := s.do("GET", e.path, ""); r.status != 200 || strings.TrimSpace(r.body) != e.want {
			t.Errorf("fresh %s: %d %s", e.path, r.status, r.body)
		}
	}
	var ids []string
	for _, body := range []string{
		`{"content":"Channels pass values between goroutines.","title":"Go Channels","tags":["Golang","concurrency"]}`,
		`{"content":"Mutexes guard shared state; prefer channels.","title":"Mutexes","tags":["golang"]}`,
		`{"content":"Rust has ownership.","title":"Ownership","tags":["rust"]}`,
	} {
		id := s.submit("POST", body)
		s.wait(id)
		ids = append(ids, id)
	}

	var docs []httpapi.Doc
	r := s.do("GET", "/search?mode=raw&query=channels", "")
	r.json(t, &docs)
	if r.status != 200 || len(docs) != 2 || docs[0].Path != "inbox/go-channels.md" || !strings.Contains(docs[0].Content, "Channels pass values") {
		t.Errorf("query search: %d %s", r.status, r.body)
	}
	if r := s.do("GET", "/search?query=channels&limit=1", ""); strings.Count(r.body, `"path"`) != 1 {
		t.Errorf("limit 1: %s", r.body)
	}

	var meta []httpapi.TagDoc
	r = s.do("GET", "/search?tag=GOLANG", "")
	r.json(t, &meta)
	if r.status != 200 || len(meta) != 2 || meta[0].Title == "" || meta[0].Modified.IsZero() {
		t.Errorf("tag search: %s", r.body)
	}
	for _, m := range meta {
		if m.Path == "inbox/go-channels.md" && strings.Join(m.Tags, ",") != "concurrency,golang" {
			t.Errorf("tags are lower-cased and sorted: %q", m.Tags)
		}
	}
	for _, tc := range []struct {
		query string
		n     int
	}{
		{"tags=golang,concurrency&match=all", 1},
		{"tags=golang,concurrency&match=ALL", 1},
		{"tags=golang&tags=rust", 3},
		{"tag=rust&tag=golang&match=all", 0},
		{"tag=rust&tags=&match=any", 1},
	} {
		if r := s.do("GET", "/search?"+tc.query, ""); r.status != 200 || strings.Count(r.body, `"path"`) != tc.n {
			t.Errorf("/search?%s: %d %s; want %d docs", tc.query, r.status, r.body, tc.n)
		}
	}
	r = s.do("GET", "/search?tag=rust&mode=raw", "")
	docs = nil
	r.json(t, &docs)
	if len(docs) != 1 || docs[0].Path != "inbox/ownership.md" || !strings.Contains(docs[0].Content, "Rust has ownership.") {
		t.Errorf("raw tag search: %s", r.body)
	}

	if r := s.do("GET", "/tags", ""); strings.TrimSpace(r.body) != `{"tags":[{"tag":"concurrency","count":1},{"tag":"golang","count":2},{"tag":"rust","count":1}]}` {
		t.Errorf("/tags: %s", r.body)
	}

	var recent struct {
		Posts []httpapi.Post `json:"posts"`
	}
	r = s.do("GET", "/posts/recents?limit=2", "")
	r.json(t, &recent)
	if len(recent.Posts) != 2 || recent.Posts[0].JobID != ids[2] || recent.Posts[1].JobID != ids[1] || recent.Posts[1].Path != "inbox/mutexes.md" || recent.Posts[1].Tags[0] != "golang" || recent.Posts[0].CreatedAt.IsZero() {
		t.Errorf("recent: %s", r.body)
	}
	if r := s.do("GET", "/posts/recents?limit=100000", ""); strings.Count(r.body, "job_id") != 3 {
		t.Errorf("capped limit: %s", r.body)
	}
}

func withModel(t *testing.T, url string) *httpapitest.GitBackend {
	p, err := llm.New(llm.Config{Provider: "ollama", Model: "fake", URL: url}, llm.Deps{})
	if err != nil {
		t.Fatal(err)
	}
	return &httpapitest.GitBackend{Provider: p}
}

func TestAnswerAndAsk(t *testing.T) {
	good := httpapitest.FakeOllama(t, map[string]string{
		"sources": `{"answer":"Channels pass values.","sources":["inbox/go-channels.md"]}`,
		"title":   `{"title":"Go Channels.","answer":"  Channels are typed conduits. ","tags":[" golang ",""]}`,
	}, 0)
	s := start(t, newRepo(t), withModel(t, good), "")
	if r := s.do("GET", "/answer?query=channels", ""); strings.TrimSpace(r.body) != `{"query":"channels","sources":[],"answer":"No relevant documents found in the knowledge base."}` {
		t.Errorf("answer with nothing found: %s", r.body)
	}
	s.wait(s.submit("POST", `{"content":"Channels pass values between goroutines.","title":"Go Channels"}`))
	if r := s.do("GET", "/answer?query=channels", ""); r.status != 200 || strings.TrimSpace(r.body) != `{"query":"channels","sources":["inbox/go-channels.md"],"answer":"Channels pass values."}` {
		t.Errorf("answer: %d %s", r.status, r.body)
	}
	if r := s.do("POST", "/ask", `{"question":" What is a channel? "}`); r.status != 200 || strings.TrimSpace(r.body) != `{"question":"What is a channel?","title":"Go Channels","answer":"Channels are typed conduits.","tags":["golang"]}` {
		t.Errorf("ask: %d %s", r.status, r.body)
	}

	bad := httpapitest.FakeOllama(t, map[string]string{
		"sources": `{"answer":"","sources":[]}`,
		"title":   `{"title":"x"}`,
	}, 0)
	s2 := start(t, s.root, withModel(t, bad), "")
	s.stop()
	var e struct{ Error string }
	r := s2.do("GET", "/answer?query=channels", "")
	r.json(t, &e)
	if r.status != 500 || !strings.HasPrefix(e.Error, "synthesis failed: ollama fake: reply for serve-answer: ") || !strings.Contains(e.Error, "/answer") {
		t.Errorf("bad answer: %d %s", r.status, r.body)
	}
	r = s2.do("POST", "/ask", `{"question":"q"}`)
	r.json(t, &e)
	if r.status != 502 || !strings.HasPrefix(e.Error, "LLM returned malformed JSON: ") || !strings.Contains(e.Error, "/answer: is required") {
		t.Errorf("bad ask: %d %s", r.status, r.body)
	}

	down := httpapitest.FakeOllama(t, nil, http.StatusServiceUnavailable)
	s3 := start(t, s.root, withModel(t, down), "")
	s2.stop()
	r = s3.do("POST", "/ask", `{"question":"q"}`)
	r.json(t, &e)
	if r.status != 502 || !strings.HasPrefix(e.Error, "LLM call failed: ollama: HTTP 503") {
		t.Errorf("model down, ask: %d %s", r.status, r.body)
	}
	r = s3.do("GET", "/answer?query=channels", "")
	r.json(t, &e)
	if r.status != 500 || !strings.HasPrefix(e.Error, "synthesis failed: ollama: HTTP 503") {
		t.Errorf("model down, answer: %d %s", r.status, r.body)
	}
}

func TestBearerToken(t *testing.T) {
	s := start(t, newRepo(t), nil, "s3cret")
	if r := s.do("GET", "/tags", ""); r.status != 200 {
		t.Errorf("with the token: %d %s", r.status, r.body)
	}
	// The scheme's name is case-insensitive (RFC 7235).
	for _, auth := range []string{"bearer s3cret", "BEARER s3cret", "BeArEr  s3cret "} {
		if r := send(t, "GET", s.url+"/tags", "", map[string]string{"Authorization": auth}); r.status != 200 {
			t.Errorf("Authorization %q: %d %s", auth, r.status, r.body)
		}
	}
	for _, auth := range []string{"", "Bearer wrong", "s3cret", "Basic s3cret", "Bearers3cret", "bearer", "Bearer s3cret x"} {
		req, _ := http.NewRequest("GET", s.url+"/tags", nil)
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		if err := resp.Body.Close(); err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != 401 || strings.TrimSpace(string(body)) != `{"error":"missing or wrong bearer token"}` {
			t.Errorf("Authorization %q: %d %s", auth, resp.StatusCode, body)
		}
	}
	resp, err := http.Get(s.url + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	if err := resp.Body.Close(); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Errorf("healthz needs no token: %d", resp.StatusCode)
	}
}

func TestListenAddr(t *testing.T) {
	for _, tc := range []struct {
		addr, token string
		ok          bool
	}{
		{"127.0.0.1:9090", "", true},
		{"127.0.0.2:9090", "", true},
		{"[::1]:9090", "", true},
		{"localhost:9090", "", true},
		{"0.0.0.0:9090", "", false},
		{":9090", "", false},
		{"192.0.2.1:9090", "", false},
		{"0.0.0.0:9090", "t", true},
		{"nonsense", "t", false},
	} {
		if err := httpapi.ListenAddr(tc.addr, tc.token); (err == nil) != tc.ok {
			t.Errorf("ListenAddr(%q, %q) = %v", tc.addr, tc.token, err)
		}
	}
	// Serve refuses an open listener without a token.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = ln.Close() }()
	q, _ := jobqueue.Open(t.TempDir(), jobqueue.Options{})
	srv, _ := httpapi.New(httpapi.Options{Backend: &httpapitest.GitBackend{}, Queue: q})
	if err := srv.Serve(context.Background(), openAddr{ln}); err == nil || !strings.Contains(err.Error(), "needs a bearer token") {
		t.Errorf("Serve on a non-loopback address: %v", err)
	}
}

// openAddr is a listener that reports a non-loopback address.
type openAddr struct{ net.Listener }

func (openAddr) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4zero, Port: 9090} }

func TestHealthAndMetrics(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	if r := s.do("GET", "/healthz", ""); r.status != 200 || strings.TrimSpace(r.body) != `{"status":"ok","queue_depth":0,"processing":0}` {
		t.Errorf("healthz: %s", r.body)
	}
	s.wait(s.submit("POST", `{"content":"one"}`))
	s.wait(s.submit("DELETE", `{"path":"missing.md"}`))
	s.do("GET", "/nope", "")
	r := s.do("GET", "/metrics", "")
	if r.status != 200 || !strings.HasPrefix(r.header.Get("Content-Type"), "text/plain; version=0.0.4") {
		t.Fatalf("metrics: %d %v", r.status, r.header)
	}
	for _, want := range []string{
		"# TYPE kk_serve_jobs gauge\n",
		`kk_serve_jobs{state="queued"} 0` + "\n",
		`kk_serve_jobs{state="done"} 1` + "\n",
		`kk_serve_jobs{state="failed"} 1` + "\n",
		"kk_serve_queue_depth 0\n",
		"# TYPE kk_serve_job_latency_seconds histogram\n",
		`kk_serve_job_latency_seconds_bucket{le="+Inf"} 2` + "\n",
		"kk_serve_job_latency_seconds_count 2\n",
		`kk_serve_http_requests_total{route="/content",code="202"} 2` + "\n",
		`kk_serve_http_requests_total{route="other",code="404"} 1` + "\n",
	} {
		if !strings.Contains(r.body, want) {
			t.Errorf("metrics lack %q:\n%s", want, r.body)
		}
	}
}

// A write's tags and title are bounded before it is queued (400 naming
// the field): one post of 40,000 tags (well under the body cap) took the
// worker 30 s and every job after it about 10 s, for as long as the note
// stayed (each folder index lists its tags), in an outside run; a title
// over 255 characters was accepted and its job failed later.
func TestWritesBoundTagsAndTitle(t *testing.T) {
	s := start(t, newRepo(t), nil, "")
	tags := func(n, size int) string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%q", fmt.Sprintf("t%0*d", size-1, i)))
		}
		return "[" + strings.Join(out, ",") + "]"
	}
	long := strings.Repeat("é", httpapi.MaxTitleLength+1)
	for _, tc := range []struct {
		method, body string
		status       int
		err          string
	}{
		{"POST", `{"content":"x","tags":` + tags(httpapi.MaxTags+1, 3) + `}`, 400, "tags: 51 given; at most 50"},
		{"POST", `{"content":"x","tags":` + tags(1, httpapi.MaxTagLength+1) + `}`, 400, "tags: \"t" + strings.Repeat("0", httpapi.MaxTagLength) + "\" is longer than 64 characters"},
		{"POST", `{"content":"x","title":"` + long + `"}`, 400, "title is longer than 255 characters"},
		{"PUT", `{"path":"a.md","tags":` + tags(httpapi.MaxTags+1, 3) + `}`, 400, "tags: 51 given; at most 50"},
		{"PUT", `{"path":"a.md","title":"` + long + `"}`, 400, "title is longer than 255 characters"},
		{"POST", `{"content":"x","title":"` + strings.Repeat("é", httpapi.MaxTitleLength) + `","tags":` + tags(httpapi.MaxTags, httpapi.MaxTagLength) + `}`, 202, ""},
	} {
		r := s.do(tc.method, "/content", tc.body)
		var e struct {
			Error string `json:"error"`
		}
		_ = json.Unmarshal([]byte(r.body), &e)
		if r.status != tc.status || e.Error != tc.err {
			t.Errorf("%s %.60q: %d %q; want %d %q", tc.method, tc.body, r.status, e.Error, tc.status, tc.err)
		}
	}
}
