package index

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/embed"
	"github.com/kk-project/kk/internal/store"
)

// conceptServer is a fake Ollama /api/embed: a text's vector counts, for
// each concept, the words of the text that belong to it, so two texts
// about the same thing in different words are close.
type conceptServer struct {
	mu    sync.Mutex
	texts []string // every text embedded, in order
	fail  bool
}

var concepts = [][]string{
	{"cdn", "edge", "purge", "content", "delivery", "network", "clear", "flush"},
	{"database", "migration", "schema", "table", "column"},
	{"retry", "backoff", "attempt", "again"},
	{"log", "logging", "logger", "trace"},
}

func conceptVector(text string) []float32 {
	v := make([]float32, len(concepts)+1)
	v[len(concepts)] = 0.05 // no text is the zero vector
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' }) {
		for i, c := range concepts {
			for _, cw := range c {
				if w == cw {
					v[i]++
				}
			}
		}
	}
	return v
}

func (s *conceptServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model string   `json:"model"`
		Input []string `json:"input"`
	}
	if r.URL.Path != "/api/embed" || json.NewDecoder(r.Body).Decode(&req) != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	s.texts = append(s.texts, req.Input...)
	fail := s.fail
	s.mu.Unlock()
	if fail {
		http.Error(w, "model is loading", http.StatusServiceUnavailable)
		return
	}
	var out [][]float32
	for _, t := range req.Input {
		out = append(out, conceptVector(t))
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": out})
}

func (s *conceptServer) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.texts)
}

// semanticKB holds a leaf about purging the CDN (no word of "clear the
// content delivery network") and leaves on other topics.
func semanticKB(t *testing.T) (*store.KB, *conceptServer) {
	t.Helper()
	k := newKB(t)
	writeLeaf(t, k, "ops/practice-purge-cdn.md", leaf("practice-purge-cdn", "Purge the CDN after a deploy", "Run make purge-edge once the release is live.", []string{"ops"}, "",
		"Stale assets stay at the edge for a day unless purged; the purge takes a minute."))
	writeLeaf(t, k, "db/practice-migrations.md", leaf("practice-migrations", "Database migrations", "Run them through make migrate.", []string{"db"}, "",
		"Every schema change is a numbered migration; never alter a table by hand."))
	writeLeaf(t, k, "net/practice-retry.md", leaf("practice-retry", "Retry with backoff", "How the client retries failed calls.", []string{"http"}, "",
		"Retry each failed attempt with exponential backoff and jitter."))
	srv := &conceptServer{}
	h := httptest.NewServer(srv)
	t.Cleanup(h.Close)
	writeConfig(t, k, "schema_version: 1\nembeddings:\n  provider: ollama\n  model: concepts\n  baseUrl: "+h.URL+"\n  minSimilarity: 0.6\n")
	return k, srv
}

func TestHybridSearchFindsASemanticMatch(t *testing.T) {
	ctx := context.Background()
	k, srv := semanticKB(t)
	if done, configured, err := SyncEmbeddings(ctx, k, "main"); err != nil || !configured || done != 0 {
		// SyncEmbeddings does not sync the tree: the index does not exist yet.
		t.Fatalf("before any sync: %d %v %v", done, configured, err)
	}
	if _, err := Sync(ctx, k, "main"); err != nil {
		t.Fatal(err)
	}
	if done, _, err := SyncEmbeddings(ctx, k, "main"); err != nil || done != 3 || srv.count() != 3 {
		t.Fatalf("embedded %d (server saw %d texts): %v", done, srv.count(), err)
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	prompt := "how do I clear the content delivery network?"

	lexical, err := db.Search(ctx, Request{Text: prompt, Limit: 5, Lexical: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range lexical {
		if h.ID == "practice-purge-cdn" {
			t.Fatalf("lexical search found the planted leaf: %v", lexical)
		}
	}
	hybrid, err := db.Search(ctx, Request{Text: prompt, Limit: 5})
	if err != nil {
		t.Fatal(err)
	}
	if len(hybrid) != 1 || hybrid[0].ID != "practice-purge-cdn" || !strings.Contains(hybrid[0].Snippet, "purge") {
		t.Fatalf("hybrid search: %+v", hybrid)
	}
	if srv.count() != 4 { // the three leaves, then the query; no leaf again
		t.Fatalf("server saw %d texts", srv.count())
	}

	// A lexical match keeps its place; the vector side adds to it.
	both, err := db.Search(ctx, Request{Text: "retry the failed attempt again", Limit: 5})
	if err != nil || len(both) == 0 || both[0].ID != "practice-retry" {
		t.Fatalf("fused: %+v %v", both, err)
	}
	// Filters apply to both sides.
	if hs, err := db.Search(ctx, Request{Text: prompt, Limit: 5, Tags: []string{"db"}}); err != nil || len(hs) != 0 {
		t.Fatalf("filtered: %+v %v", hs, err)
	}
	// Nothing close enough by meaning and nothing lexical: nothing.
	if hs, err := db.Search(ctx, Request{Text: "which font does the invoice use", Limit: 5}); err != nil || len(hs) != 0 {
		t.Fatalf("unrelated: %+v %v", hs, err)
	}
}

func TestEmbeddingsRefreshOnlyWhenALeafChanges(t *testing.T) {
	ctx := context.Background()
	k, srv := semanticKB(t)
	if _, err := Sync(ctx, k, "main"); err != nil {
		t.Fatal(err)
	}
	if done, _, err := SyncEmbeddings(ctx, k, "main"); err != nil || done != 3 {
		t.Fatalf("first: %d %v", done, err)
	}
	if done, _, err := SyncEmbeddings(ctx, k, "main"); err != nil || done != 0 || srv.count() != 3 {
		t.Fatalf("nothing changed: %d (server saw %d) %v", done, srv.count(), err)
	}
	writeLeaf(t, k, "db/practice-migrations.md", leaf("practice-migrations", "Database migrations", "Run them through make migrate.", []string{"db"}, "",
		"Every schema change is a numbered migration, reviewed before it runs."))
	if _, err := Sync(ctx, k, "main"); err != nil {
		t.Fatal(err)
	}
	if done, _, err := SyncEmbeddings(ctx, k, "main"); err != nil || done != 1 || !strings.Contains(srv.texts[3], "reviewed before it runs") {
		t.Fatalf("one leaf changed: %d %v %q", done, err, srv.texts[3:])
	}
	// Another model: every vector is recomputed.
	writeConfig(t, k, strings.Replace(string(must(os.ReadFile(k.ConfigPath()))), "model: concepts", "model: concepts-2", 1))
	if done, _, err := SyncEmbeddings(ctx, k, "main"); err != nil || done != 3 {
		t.Fatalf("model changed: %d %v", done, err)
	}
	// A removed leaf takes its vector with it.
	if err := os.Remove(k.NodePath("net/practice-retry.md")); err != nil {
		t.Fatal(err)
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM embeddings`).Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d vectors after a removal: %v", n, err)
	}
}

func TestHybridSearchFallsBackWhenTheProviderFails(t *testing.T) {
	ctx := context.Background()
	k, srv := semanticKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	srv.mu.Lock()
	srv.fail = true
	srv.mu.Unlock()
	hits, err := db.Search(ctx, Request{Text: "retry with backoff", Limit: 5})
	if err != nil || len(hits) == 0 || hits[0].ID != "practice-retry" {
		t.Fatalf("fallback: %+v %v", hits, err)
	}
	if err := db.EmbedErr(); err == nil || !strings.Contains(err.Error(), "503") {
		t.Fatalf("EmbedErr: %v", err)
	}
	if _, _, err := SyncEmbeddings(ctx, k, "main"); err == nil {
		t.Fatal("kk sync's embedding step hid the provider's failure")
	}
}

// failTransport fails the test on any HTTP request.
type failTransport struct {
	t *testing.T
}

func (f failTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.t.Errorf("a request reached the network: %s %s", r.Method, r.URL)
	return nil, errors.New("no network in this test")
}

// Without an embeddings section nothing reaches the network: no embedder
// exists, and every HTTP client that could be made is watched.
func TestNoProviderNoNetwork(t *testing.T) {
	old := http.DefaultTransport
	http.DefaultTransport = failTransport{t}
	defer func() { http.DefaultTransport = old }()
	t.Setenv("OPENAI_API_KEY", "sk-should-not-be-used")
	ctx := context.Background()
	k := newKB(t)
	writeLeaf(t, k, "net/practice-retry.md", leaf("practice-retry", "Retry with backoff", "How the client retries failed calls.", []string{"http"}, "",
		"Retry each failed attempt with exponential backoff and jitter."))
	if e, _, err := EmbedderFor(k); e != nil || err != nil {
		t.Fatalf("embedder without configuration: %v %v", e, err)
	}
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if db.embedder != nil {
		t.Fatal("the handle has an embedder")
	}
	if hits, err := db.Search(ctx, Request{Text: "how does the client retry?", Limit: 5}); err != nil || len(hits) != 1 {
		t.Fatalf("lexical search: %+v %v", hits, err)
	}
	if done, configured, err := SyncEmbeddings(ctx, k, "main"); done != 0 || configured || err != nil {
		t.Fatalf("SyncEmbeddings: %d %v %v", done, configured, err)
	}
	if shared, err := OpenShared(ctx, k, "main"); err != nil || shared.embedder != nil {
		t.Fatalf("shared handle: %v", err)
	}
}

func must[T any](v T, err error) T {
	if err != nil {
		panic(err)
	}
	return v
}

func writeConfig(t *testing.T, k *store.KB, content string) {
	t.Helper()
	if err := os.WriteFile(k.ConfigPath(), []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A Quick search (the prompt-time hook) does not wait for a slow
// provider: past quickVectorTime it answers with the lexical ranking, and
// it never computes node vectors.
func TestQuickSearchDoesNotWaitForTheProvider(t *testing.T) {
	ctx := context.Background()
	k, srv := semanticKB(t)
	if _, err := Sync(ctx, k, "main"); err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
		srv.ServeHTTP(w, r)
	}))
	defer slow.Close()
	defer close(release)
	writeConfig(t, k, "schema_version: 1\nembeddings:\n  provider: ollama\n  model: concepts\n  baseUrl: "+slow.URL+"\n")
	old, oldClient := quickVectorTime, embed.EmbedTimeout
	quickVectorTime = 50 * time.Millisecond
	// Only the quick search's own bound can end the request: without it
	// the search would wait for the provider until the test times out.
	embed.EmbedTimeout = time.Hour
	defer func() { quickVectorTime, embed.EmbedTimeout = old, oldClient }()
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	hits, err := db.Search(ctx, Request{Text: "retry with backoff", Limit: 5, Quick: true})
	if err != nil || len(hits) == 0 || hits[0].ID != "practice-retry" {
		t.Fatalf("quick search: %+v %v", hits, err)
	}
	if !errors.Is(db.EmbedErr(), context.DeadlineExceeded) {
		t.Fatal("the slow provider left no error")
	}
	var n int
	if err := db.r.QueryRow(`SELECT count(*) FROM embeddings`).Scan(&n); err != nil || n != 0 {
		t.Fatalf("a quick search computed %d node vectors: %v", n, err)
	}
}
