package serve

// Ports of knowledged's HTTP contract tests (wiztools/knowledged
// internal/api/handler_test.go at da946d4) to kk serve's real backend:
// each drives the HTTP server over a real repository and asserts the
// status codes, JSON shapes, note bytes and commits knowledged's tests
// assert, or kk's documented behaviour where it differs on purpose
// (docs/serve.md; docs/ported/knowledged.md has the table).

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/store"
)

// call sends one request to s as knowledged's clients do (a JSON body
// declared application/json) and returns the status and the body.
func (s *server) call(t *testing.T, method, path, body string) (int, string) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if method != http.MethodGet {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json" {
		t.Errorf("%s %s: Content-Type %q", method, path, ct)
	}
	return resp.StatusCode, string(data)
}

// accepted sends a write that must be accepted as knowledged accepts it:
// 202 {"job_id":…,"status":"queued"} and nothing else; it returns the id.
func (s *server) accepted(t *testing.T, method, body string) string {
	t.Helper()
	code, got := s.call(t, method, "/content", body)
	var r struct {
		JobID  string `json:"job_id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal([]byte(got), &r); err != nil || code != http.StatusAccepted || r.JobID == "" || r.Status != "queued" ||
		got != fmt.Sprintf(`{"job_id":%q,"status":"queued"}`+"\n", r.JobID) {
		t.Fatalf("%s /content %s: %d %q", method, body, code, got)
	}
	return r.JobID
}

// handNote writes a leaf into the tree at rel (relative to nodes/) as a
// person or another tool writes it, in kenkeep's format (the body right
// after the front matter); extra holds more front matter lines.
func handNote(t *testing.T, k *store.KB, rel, title, description string, tags []string, extra, body string) {
	t.Helper()
	id := strings.TrimSuffix(filepath.Base(rel), ".md")
	tagList := "[]"
	if len(tags) > 0 {
		tagList = "[" + strings.Join(tags, ", ") + "]"
	}
	leaf := fmt.Sprintf("---\ntype: map\ntitle: %s\ndescription: %q\ntags: %s\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n%s---\n%s",
		title, description, tagList, id, extra, body)
	p := k.NodePath(rel)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
}

// commitAll commits the work tree as a person does.
func commitAll(t *testing.T, k *store.KB, msg string) {
	t.Helper()
	git(t, k, "add", "-A")
	git(t, k, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", msg)
}

// handler_test.go TestPostContent_AcceptsTitleAndTags: the title is
// trimmed and blank tags are dropped.
func TestKnowledgedPostTrimsTitleAndTags(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	id := s.accepted(t, "POST", `{"content":"Body.","hint":"go","title":"  Go Generics  ","tags":["go"," ","generics"]}`)
	j := s.wait(t, id)
	if j.Status != "done" || j.Path != "inbox/map-go-generics.md" {
		t.Fatalf("job: %+v", j)
	}
	n, err := k.ReadLeaf(j.Path)
	if err != nil {
		t.Fatal(err)
	}
	if n.Title != "Go Generics" || !slices.Equal(n.Tags, []string{"go", "generics"}) {
		t.Errorf("leaf title %q tags %q", n.Title, n.Tags)
	}
	if got := body(t, s, j.Path); got != "Body." {
		t.Errorf("body as posted: %q", got)
	}
}

// handler_test.go TestDeleteContent_Returns202, TestPutContent_Returns202:
// a write of an existing note is accepted at once, queued.
func TestKnowledgedWritesAnswer202Queued(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "notes/map-hello.md", "Hello", "Existing note", nil, "", "old\n")
	commitAll(t, k, "seed")
	s := start(t, k, nil)
	put := s.accepted(t, "PUT", `{"path":"notes/map-hello.md","content":"new"}`)
	del := s.accepted(t, "DELETE", `{"path":"notes/map-hello.md"}`)
	if put == del {
		t.Fatal("two writes got one job")
	}
	if j := s.wait(t, put); j.Status != "done" || j.Path != "notes/map-hello.md" {
		t.Errorf("edit: %+v", j)
	}
	if j := s.wait(t, del); j.Status != "done" || j.Path != "notes/map-hello.md" {
		t.Errorf("delete: %+v", j)
	}
	subjects := git(t, k, "log", "-2", "--format=%s")
	if subjects != "delete("+del+"): notes/map-hello.md\nedit("+put+"): notes/map-hello.md" {
		t.Errorf("commits:\n%s", subjects)
	}
	clean(t, k)
}

// handler_test.go TestDeleteContent_EmptyPath, TestPutContent_RejectsInvalidInput,
// and store_test.go TestCleanContentPathRejectsTraversal,
// TestWriteFileRejectsTraversal: bad writes are 400 with knowledged's
// messages, queue nothing and write nothing.
func TestKnowledgedBadWritesAreRefused(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	head := git(t, k, "rev-parse", "HEAD")
	for _, c := range []struct{ method, body, err string }{
		{"DELETE", `{"path":"  "}`, "path must not be empty"},
		{"PUT", `{"path":"notes/hello.md","content":"  "}`, "content or metadata update must not be empty"},
		{"PUT", `{"path":"  ","content":"new"}`, "path must not be empty"},
		{"PUT", `{"path":"../outside.md","content":"new"}`, "path must stay within the repository: ../outside.md"},
		{"DELETE", `{"path":"../outside.md"}`, "path must stay within the repository: ../outside.md"},
		{"PUT", `{"path":"/tmp/outside.md","content":"x"}`, "path must be repo-relative: /tmp/outside.md"},
		{"DELETE", `{"path":".knowledged/queue.json"}`, "path must not target .knowledged"},
		{"PUT", `{"path":"notes/plain.txt","content":"x"}`, "path must be a Markdown file: notes/plain.txt"},
	} {
		code, got := s.call(t, c.method, "/content", c.body)
		want := fmt.Sprintf(`{"error":%q}`+"\n", c.err)
		if code != http.StatusBadRequest || got != want {
			t.Errorf("%s %s: %d %q, want 400 %q", c.method, c.body, code, got, want)
		}
	}
	if _, err := os.Stat(filepath.Join(k.Root, "..", "outside.md")); !os.IsNotExist(err) {
		t.Errorf("a file was written outside the repository: %v", err)
	}
	if st := s.Queue.Stats(); st.Depth != 0 || st.ByStatus["done"]+st.ByStatus["failed"] != 0 {
		t.Errorf("a refused write was queued: %+v", st)
	}
	if git(t, k, "rev-parse", "HEAD") != head {
		t.Error("a refused write made a commit")
	}
	clean(t, k)
}

// handler_test.go TestGetRecentPosts_UsesRequestedLimit: 35 posts, limit
// 32 gives the newest 32, newest first, each with its note's tags; and
// without a limit, knowledged's default of 20.
func TestKnowledgedRecentPostsLimit(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	var ids []string
	for i := 1; i <= 35; i++ {
		j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: fmt.Sprintf("Post %02d", i), Content: fmt.Sprintf("# Post %02d\n", i), Tags: []string{fmt.Sprintf("tag-%02d", i)}})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, j.JobID)
	}
	if j := s.wait(t, ids[34]); j.Status != "done" {
		t.Fatalf("last post: %+v", j)
	}
	var r struct {
		Posts []struct {
			JobID     string   `json:"job_id"`
			Path      string   `json:"path"`
			Tags      []string `json:"tags"`
			CreatedAt string   `json:"created_at"`
		} `json:"posts"`
	}
	code, got := s.call(t, "GET", "/posts/recents?limit=32", "")
	if err := json.Unmarshal([]byte(got), &r); err != nil || code != 200 || len(r.Posts) != 32 {
		t.Fatalf("recents?limit=32: %d %.300s", code, got)
	}
	if r.Posts[0].JobID != ids[34] || r.Posts[31].JobID != ids[3] {
		t.Errorf("first %s last %s, want %s and %s", r.Posts[0].JobID, r.Posts[31].JobID, ids[34], ids[3])
	}
	if !slices.Equal(r.Posts[0].Tags, []string{"tag-35"}) || r.Posts[0].Path != "inbox/map-post-35.md" {
		t.Errorf("newest post: %+v", r.Posts[0])
	}
	if _, err := time.Parse(time.RFC3339Nano, r.Posts[0].CreatedAt); err != nil {
		t.Errorf("created_at %q: %v", r.Posts[0].CreatedAt, err)
	}
	for i := 1; i < len(r.Posts); i++ {
		if r.Posts[i].CreatedAt > r.Posts[i-1].CreatedAt {
			t.Errorf("post %d is newer than post %d", i, i-1)
		}
	}
	code, got = s.call(t, "GET", "/posts/recents", "")
	if err := json.Unmarshal([]byte(got), &r); err != nil || code != 200 || len(r.Posts) != 20 || r.Posts[19].JobID != ids[15] {
		t.Errorf("recents without a limit: %d %d posts", code, len(r.Posts))
	}
}

// seedTagged writes knowledged's tag fixture into the tree and commits
// it: go/a (go, api; modified 2026-05-01) and go/b (go; 2026-05-02). The
// files' own times are the other way round, so that only the notes'
// recorded times can order them newest first.
func seedTagged(t *testing.T, k *store.KB) {
	t.Helper()
	for _, n := range []struct {
		rel, title string
		tags       []string
		modified   time.Time
	}{
		{"go/map-a.md", "A", []string{"go", "api"}, time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)},
		{"go/map-b.md", "B", []string{"go"}, time.Date(2026, 5, 2, 10, 0, 0, 0, time.UTC)},
	} {
		extra := fmt.Sprintf("kk_created_at: %s\nkk_updated_at: %s\n", n.modified.Add(-time.Hour).Format(time.RFC3339), n.modified.Format(time.RFC3339))
		handNote(t, k, n.rel, n.title, n.title+" description", n.tags, extra, "body\n")
	}
	now := time.Now()
	if err := os.Chtimes(k.NodePath("go/map-a.md"), now, now); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(k.NodePath("go/map-b.md"), now.Add(-time.Hour), now.Add(-time.Hour)); err != nil {
		t.Fatal(err)
	}
	commitAll(t, k, "seed")
}

// handler_test.go TestGetTags_RebuildsAndReturnsCounts: /tags counts the
// notes' tags, sorted by tag: notes committed before the start, and
// notes written beside the running server and not committed, read by the
// very next request.
func TestKnowledgedTagCounts(t *testing.T) {
	k := newRepo(t, 0)
	seedTagged(t, k)
	s := start(t, k, nil)
	if code, got := s.call(t, "GET", "/tags", ""); code != 200 || got != `{"tags":[{"tag":"api","count":1},{"tag":"go","count":2}]}`+"\n" {
		t.Errorf("/tags: %d %s", code, got)
	}
	handNote(t, k, "rust/map-c.md", "C", "C description", []string{"rust", "api"}, "", "body\n")
	if code, got := s.call(t, "GET", "/tags", ""); code != 200 || got != `{"tags":[{"tag":"api","count":2},{"tag":"go","count":2},{"tag":"rust","count":1}]}`+"\n" {
		t.Errorf("/tags after a note written beside the server: %d %s", code, got)
	}
}

// handler_test.go TestSearch_ByTagReturnsMetadataOrRawDocs, and
// tagindex_test.go TestDocumentsForTagsSupportsAnyAndAll: match=all and
// any, metadata or raw documents, newest first by the notes' modified
// time, which is the one they record.
func TestKnowledgedSearchByTag(t *testing.T) {
	k := newRepo(t, 0)
	seedTagged(t, k)
	s := start(t, k, nil)
	type meta struct {
		Path        string   `json:"path"`
		Title       string   `json:"title"`
		Description string   `json:"description"`
		Tags        []string `json:"tags"`
		Modified    string   `json:"modified"`
	}
	search := func(q url.Values) []meta {
		t.Helper()
		code, got := s.call(t, "GET", "/search?"+q.Encode(), "")
		var docs []meta
		if err := json.Unmarshal([]byte(got), &docs); err != nil || code != 200 {
			t.Fatalf("/search?%s: %d %s", q.Encode(), code, got)
		}
		return docs
	}
	all := search(url.Values{"tags": {"go,api"}, "match": {"all"}})
	if len(all) != 1 || fmt.Sprint(all[0]) != fmt.Sprint(meta{"go/map-a.md", "A", "A description", []string{"api", "go"}, "2026-05-01T10:00:00Z"}) {
		t.Errorf("match=all: %+v", all)
	}
	anyDocs := search(url.Values{"tags": {"go,api"}})
	if len(anyDocs) != 2 || anyDocs[0].Path != "go/map-b.md" || anyDocs[1].Path != "go/map-a.md" || anyDocs[0].Modified != "2026-05-02T10:00:00Z" {
		t.Errorf("match=any, newest first: %+v", anyDocs)
	}
	code, got := s.call(t, "GET", "/search?"+url.Values{"tag": {"api"}, "mode": {"raw"}}.Encode(), "")
	var raw []httpapi.Doc
	if err := json.Unmarshal([]byte(got), &raw); err != nil || code != 200 || len(raw) != 1 || raw[0].Path != "go/map-a.md" || !strings.Contains(raw[0].Content, "\ntags: ") {
		t.Errorf("raw tag search: %d %s", code, got)
	}
}

// recorder is a stand-in for Ollama that answers each call by the first
// of its schema's properties found in replies, and records each call:
// the schema's properties and the prompt.
type recorder struct {
	mu      sync.Mutex
	replies [][2]string
	calls   []recordedCall
}

type recordedCall struct {
	props  []string
	prompt string
}

func (r *recorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	var body struct {
		Messages []struct{ Content string } `json:"messages"`
		Format   struct {
			Properties map[string]any `json:"properties"`
		} `json:"format"`
	}
	if err := json.NewDecoder(req.Body).Decode(&body); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	c := recordedCall{}
	for p := range body.Format.Properties {
		c.props = append(c.props, p)
	}
	slices.Sort(c.props)
	for _, m := range body.Messages {
		c.prompt += m.Content + "\n"
	}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	replies := r.replies
	r.mu.Unlock()
	for _, rep := range replies {
		if _, ok := body.Format.Properties[rep[0]]; ok || rep[0] == "" {
			_ = json.NewEncoder(w).Encode(map[string]any{"message": map[string]string{"role": "assistant", "content": rep[1]}, "done": true})
			return
		}
	}
	http.Error(w, `{"error":"no reply"}`, http.StatusInternalServerError)
}

// reply sets the replies of the calls to come.
func (r *recorder) reply(replies ...[2]string) {
	r.mu.Lock()
	r.replies = replies
	r.mu.Unlock()
}

// taken returns the calls recorded since the last taken, and forgets them.
func (r *recorder) taken() []recordedCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.calls
	r.calls = nil
	return c
}

// recordingModel runs a recorder and returns it with a provider for it.
func recordingModel(t *testing.T, replies ...[2]string) (*recorder, llm.Provider) {
	t.Helper()
	rec := &recorder{replies: replies}
	srv := httptest.NewServer(rec)
	t.Cleanup(srv.Close)
	p, err := llm.New(llm.Config{Provider: "ollama", Model: "fake", URL: srv.URL}, llm.Deps{Retry: &quickRetry})
	if err != nil {
		t.Fatal(err)
	}
	return rec, p
}

// handler_test.go TestSynthesis_TwoPassRelevance_ProseAnswer,
// TestSynthesis_NeedFullEscapeHatch, TestSynthesis_NoCandidatesFromRoute:
// kk finds the notes with its own search instead of two model passes over
// INDEX.md, and quotes each note whole up to 8 KiB in one synthesis call
// (no snippet pass and no need_full second call); the answer lists the
// notes it read. Nothing found: knowledged's answer, and no model call.
func TestKnowledgedAnswer(t *testing.T) {
	k := newRepo(t, 0)
	longDoc := strings.Repeat("filler line about goroutines.\n", 50) + "FINAL_ANSWER_TOKEN at the very end.\n"
	handNote(t, k, "tech/go/map-goroutines.md", "Goroutines", "concurrency primitives", nil, "", "Goroutines are Go's lightweight threads, scheduled by the runtime.\n"+longDoc)
	handNote(t, k, "infra/docker/map-setup.md", "Setup", "installing docker", nil, "", "Install docker with the package manager.\n")
	commitAll(t, k, "seed")
	rec, p := recordingModel(t,
		[2]string{"paths", `{"paths":["tech/go/map-goroutines.md"]}`},
		[2]string{"sources", `{"answer":"Goroutines are lightweight threads. FINAL_ANSWER_TOKEN","sources":["tech/go/map-goroutines.md"]}`})
	s := start(t, k, p)
	code, got := s.call(t, "GET", "/answer?"+url.Values{"query": {"what are goroutines"}}.Encode(), "")
	if code != 200 || got != `{"query":"what are goroutines","sources":["tech/go/map-goroutines.md"],"answer":"Goroutines are lightweight threads. FINAL_ANSWER_TOKEN"}`+"\n" {
		t.Errorf("/answer: %d %s", code, got)
	}
	calls := rec.taken()
	var synth []recordedCall
	for _, c := range calls {
		if slices.Contains(c.props, "sources") {
			synth = append(synth, c)
		}
	}
	if len(synth) != 1 {
		t.Fatalf("%d synthesis calls, want 1: %+v", len(synth), calls)
	}
	if !strings.Contains(synth[0].prompt, "Goroutines are Go's lightweight threads") || !strings.Contains(synth[0].prompt, "FINAL_ANSWER_TOKEN") {
		t.Errorf("the synthesis prompt lacks the note's body:\n%s", synth[0].prompt)
	}
	if strings.Contains(synth[0].prompt, "Install docker") {
		t.Errorf("the synthesis prompt quotes a note the search did not find:\n%s", synth[0].prompt)
	}

	code, got = s.call(t, "GET", "/answer?query=zebra", "")
	if code != 200 || got != `{"query":"zebra","sources":[],"answer":"No relevant documents found in the knowledge base."}`+"\n" {
		t.Errorf("/answer with nothing found: %d %s", code, got)
	}
	if calls := rec.taken(); len(calls) != 0 {
		t.Errorf("the model was asked with nothing found: %+v", calls)
	}
}

// handler_test.go TestSearch_QueryRawMode_StopsAfterPick: a query search
// gives the notes whole, in the order the model picks; kk asks it once,
// to rerank its own search's candidates (knowledged: route and pick).
func TestKnowledgedQuerySearchRaw(t *testing.T) {
	k := newRepo(t, 0)
	handNote(t, k, "tech/go/map-goroutines.md", "Goroutines", "concurrency primitives", nil, "", "body about goroutines\n")
	handNote(t, k, "tech/go/map-goroutine-leaks.md", "Goroutine leaks", "goroutines that never end", nil, "", "goroutines blocked forever leak\n")
	commitAll(t, k, "seed")
	rec, p := recordingModel(t, [2]string{"paths", `{"paths":["tech/go/map-goroutine-leaks.md","tech/go/map-goroutines.md"]}`})
	s := start(t, k, p)
	code, got := s.call(t, "GET", "/search?"+url.Values{"query": {"goroutines"}, "mode": {"raw"}}.Encode(), "")
	var docs []httpapi.Doc
	if err := json.Unmarshal([]byte(got), &docs); err != nil || code != 200 || len(docs) != 2 || docs[0].Path != "tech/go/map-goroutine-leaks.md" ||
		docs[1].Path != "tech/go/map-goroutines.md" || !strings.HasSuffix(docs[1].Content, "\n---\nbody about goroutines\n") {
		t.Errorf("/search raw: %d %s", code, got)
	}
	if calls := rec.taken(); len(calls) != 1 || !slices.Contains(calls[0].props, "paths") {
		t.Errorf("model calls: %+v", calls)
	}
}

// handler_test.go TestPostAsk_*: /ask drafts with one structured call
// whose prompt holds the question; the title loses its final period, the
// answer keeps its Markdown and loses the white space around it, blank
// tags are dropped and no tags is []; a reply that is not JSON is 502,
// a blank question 400. (Without a model, 503:
// TestSearchTagsRecentOnTheIndex.)
func TestKnowledgedAsk(t *testing.T) {
	k := newRepo(t, 0)
	rec, p := recordingModel(t, [2]string{"", `{"title":"Go Goroutines.","answer":"## Goroutines\n\nLightweight threads managed by the Go runtime.\n","tags":["golang","concurrency"," "]}`})
	s := start(t, k, p)
	code, got := s.call(t, "POST", "/ask", `{"question":"what are goroutines?"}`)
	if code != 200 || got != `{"question":"what are goroutines?","title":"Go Goroutines","answer":"## Goroutines\n\nLightweight threads managed by the Go runtime.","tags":["golang","concurrency"]}`+"\n" {
		t.Errorf("/ask: %d %s", code, got)
	}
	calls := rec.taken()
	if len(calls) != 1 || !slices.Contains(calls[0].props, "title") || !slices.Contains(calls[0].props, "tags") || !strings.Contains(calls[0].prompt, "what are goroutines?") {
		t.Errorf("model calls: %+v", calls)
	}

	rec.reply([2]string{"", `{"title":"Unknown","answer":"## Unknown\n\nI don't know.","tags":[]}`})
	if code, got := s.call(t, "POST", "/ask", `{"question":"what is xyzzy?"}`); code != 200 || !strings.Contains(got, `"tags":[]`) {
		t.Errorf("/ask with no tags: %d %s", code, got)
	}
	rec.reply([2]string{"", `not json`})
	if code, got := s.call(t, "POST", "/ask", `{"question":"what?"}`); code != http.StatusBadGateway || !strings.HasPrefix(got, `{"error":"LLM returned malformed JSON: `) {
		t.Errorf("/ask with a reply that is not JSON: %d %s", code, got)
	}
	rec.taken()
	if code, got := s.call(t, "POST", "/ask", `{"question":"   "}`); code != http.StatusBadRequest || got != `{"error":"question must not be empty"}`+"\n" {
		t.Errorf("/ask with a blank question: %d %s", code, got)
	}
	if calls := rec.taken(); len(calls) != 0 {
		t.Errorf("the model was asked a blank question: %+v", calls)
	}
}

// handler_test.go TestSnippet_TruncatesPastBudget: a note longer than
// what a prompt quotes (8 KiB in kk, 600 characters in knowledged) is
// cut, and the cut is marked.
func TestKnowledgedAnswerQuotesALongNoteCut(t *testing.T) {
	k := newRepo(t, 0)
	long := strings.Repeat("filler line about goroutines.\n", 400) + "TAIL_TOKEN at the very end.\n"
	handNote(t, k, "tech/go/map-goroutines.md", "Goroutines", "concurrency primitives", nil, "", long)
	commitAll(t, k, "seed")
	rec, p := recordingModel(t, [2]string{"sources", `{"answer":"They are threads.","sources":["tech/go/map-goroutines.md"]}`})
	s := start(t, k, p)
	if code, got := s.call(t, "GET", "/answer?query=goroutines", ""); code != 200 || !strings.Contains(got, `"sources":["tech/go/map-goroutines.md"]`) {
		t.Fatalf("/answer: %d %s", code, got)
	}
	calls := rec.taken()
	if len(calls) != 1 {
		t.Fatalf("model calls: %+v", calls)
	}
	if pr := calls[0].prompt; strings.Contains(pr, "TAIL_TOKEN") || !strings.Contains(pr, "\n[…]\n") || len(pr) > 9<<10 {
		t.Errorf("the prompt quotes %d bytes; its end:\n%s", len(pr), pr[max(0, len(pr)-300):])
	}
}

// knowledged's recents (the reference's "Recents", which its handler
// test reads through): only posts are listed, an edit adds no entry, and
// a deleted note is still listed, without tags.
func TestKnowledgedRecentsListPostsOnly(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	a := s.post(t, httpapi.PostRequest{Title: "Alpha", Content: "Alpha.\n", Tags: []string{"x"}})
	b := s.post(t, httpapi.PostRequest{Title: "Beta", Content: "Beta.\n", Tags: []string{"y"}})
	if j := s.edit(t, httpapi.EditRequest{Path: a.Path, Content: "Alpha, edited.\n"}); j.Status != "done" {
		t.Fatalf("edit: %+v", j)
	}
	d, err := s.Client.Delete(ctx, b.Path)
	if err != nil {
		t.Fatal(err)
	}
	if j := s.wait(t, d.JobID); j.Status != "done" {
		t.Fatalf("delete: %+v", j)
	}
	var r struct {
		Posts []map[string]any `json:"posts"`
	}
	code, got := s.call(t, "GET", "/posts/recents", "")
	if err := json.Unmarshal([]byte(got), &r); err != nil || code != 200 || len(r.Posts) != 2 {
		t.Fatalf("/posts/recents: %d %s", code, got)
	}
	if r.Posts[0]["job_id"] != b.JobID || r.Posts[0]["path"] != b.Path || r.Posts[0]["tags"] != nil {
		t.Errorf("the deleted note's post: %v", r.Posts[0])
	}
	if r.Posts[1]["job_id"] != a.JobID || fmt.Sprint(r.Posts[1]["tags"]) != "[x]" {
		t.Errorf("the edited note's post: %v", r.Posts[1])
	}
}
