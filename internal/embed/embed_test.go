package embed

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeServer answers like an embedding provider: each text's vector is
// [len(text), number of spaces, 1].
type fakeServer struct {
	mu       sync.Mutex
	requests []map[string]any
	auth     []string
	status   int
}

func vec(s string) []float32 {
	return []float32{float32(len(s)), float32(strings.Count(s, " ")), 1}
}

func (f *fakeServer) handler(t *testing.T, path string, answer func(texts []string) any) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != path {
			t.Errorf("request %s %s, want POST %s", r.Method, r.URL.Path, path)
			http.NotFound(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var req map[string]any
		if err := json.Unmarshal(data, &req); err != nil {
			t.Errorf("request body %q: %v", data, err)
		}
		f.mu.Lock()
		f.requests = append(f.requests, req)
		f.auth = append(f.auth, r.Header.Get("Authorization"))
		status := f.status
		f.mu.Unlock()
		if status != 0 {
			http.Error(w, `{"error":"model not found"}`, status)
			return
		}
		var texts []string
		for _, x := range req["input"].([]any) {
			texts = append(texts, x.(string))
		}
		_ = json.NewEncoder(w).Encode(answer(texts))
	})
}

func TestOllamaEmbedder(t *testing.T) {
	f := &fakeServer{}
	srv := httptest.NewServer(f.handler(t, "/api/embed", func(texts []string) any {
		var out [][]float32
		for _, s := range texts {
			out = append(out, vec(s))
		}
		return map[string]any{"model": "m", "embeddings": out}
	}))
	defer srv.Close()
	e, err := NewEmbedder(&EmbedConfig{Provider: EmbedOllama, Model: "nomic-embed-text", BaseURL: srv.URL + "/"}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.Model() != "ollama:nomic-embed-text" {
		t.Fatalf("model %q", e.Model())
	}
	got, err := e.Embed(context.Background(), []string{"a b", "hello"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0] != 3 || got[0][1] != 1 || got[1][0] != 5 {
		t.Fatalf("vectors %v", got)
	}
	if f.requests[0]["model"] != "nomic-embed-text" {
		t.Fatalf("request %v", f.requests[0])
	}
	f.status = http.StatusNotFound
	if _, err := e.Embed(context.Background(), []string{"x"}); err == nil || !strings.Contains(err.Error(), "404") || !strings.Contains(err.Error(), "model not found") {
		t.Fatalf("error answer: %v", err)
	}
}

func TestOpenAIEmbedder(t *testing.T) {
	f := &fakeServer{}
	srv := httptest.NewServer(f.handler(t, "/v1/embeddings", func(texts []string) any {
		var data []map[string]any
		for i := len(texts) - 1; i >= 0; i-- { // out of order: the index says where each goes
			data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": vec(texts[i])})
		}
		return map[string]any{"object": "list", "data": data}
	}))
	defer srv.Close()
	env := map[string]string{"MY_KEY": "sk-test"}
	e, err := NewEmbedder(&EmbedConfig{Provider: EmbedOpenAI, Model: "text-embedding-3-small", BaseURL: srv.URL, APIKeyEnv: "MY_KEY"},
		func(k string) string { return env[k] }, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.Embed(context.Background(), []string{"one two three", "x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0][0] != 13 || got[1][0] != 1 {
		t.Fatalf("vectors %v", got)
	}
	if f.auth[0] != "Bearer sk-test" || f.requests[0]["model"] != "text-embedding-3-small" {
		t.Fatalf("request %v, auth %q", f.requests[0], f.auth[0])
	}
	// Without a key, no Authorization header is sent (a local server).
	e, _ = NewEmbedder(&EmbedConfig{Provider: EmbedOpenAI, Model: "m", BaseURL: srv.URL}, func(string) string { return "" }, nil)
	if _, err := e.Embed(context.Background(), []string{"x"}); err != nil || f.auth[1] != "" {
		t.Fatalf("keyless: %v, auth %q", err, f.auth[1])
	}
}

func TestEmbedderAnswerChecks(t *testing.T) {
	for name, answer := range map[string]any{
		"too few":     map[string]any{"embeddings": [][]float32{{1, 2}}},
		"ragged":      map[string]any{"embeddings": [][]float32{{1, 2}, {1}}},
		"not json":    "nope",
		"empty array": map[string]any{"embeddings": [][]float32{{}, {}}},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { _ = json.NewEncoder(w).Encode(answer) }))
		e, _ := NewEmbedder(&EmbedConfig{Provider: EmbedOllama, Model: "m", BaseURL: srv.URL}, nil, nil)
		if _, err := e.Embed(context.Background(), []string{"a", "b"}); err == nil {
			t.Errorf("%s: no error", name)
		}
		srv.Close()
	}
}

func TestNewEmbedderConfig(t *testing.T) {
	for _, cfg := range []*EmbedConfig{nil, {}, {Model: "m"}} {
		if e, err := NewEmbedder(cfg, nil, nil); e != nil || err != nil {
			t.Errorf("%+v: %v %v; want no embedder", cfg, e, err)
		}
	}
	if _, err := NewEmbedder(&EmbedConfig{Provider: EmbedOllama}, nil, nil); err == nil {
		t.Error("a provider without a model was accepted")
	}
	if _, err := NewEmbedder(&EmbedConfig{Provider: "cohere", Model: "m"}, nil, nil); err == nil {
		t.Error("an unknown provider was accepted")
	}
	e, err := NewEmbedder(&EmbedConfig{Provider: EmbedOllama, Model: "m"}, nil, nil)
	if err != nil || e.(*ollamaEmbedder).base != "http://localhost:11434" {
		t.Fatalf("default base: %v %v", e, err)
	}
}
