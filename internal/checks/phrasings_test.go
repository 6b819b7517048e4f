package checks

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestDoctorPhrasings(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-a"})
	f.leaf(lintLeaf{id: "practice-b"})
	f.leaf(lintLeaf{id: "practice-c"})
	f.leaf(lintLeaf{id: "practice-d"})
	c := doctorCheck(t, f.doctor("1.0.0"), "phrasings")
	if c.Level != DoctorWarn || !strings.HasPrefix(c.Message, "4 of 4 leaves (100%) have no kk_phrasings") || !strings.Contains(c.Fix, "kk-phrasings") {
		t.Fatalf("%+v", c)
	}
	// Three of four phrased: one in four without is still the share that
	// asks for the backfill; four of four is fine.
	for i, id := range []string{"practice-a", "practice-b", "practice-c"} {
		f.write("nodes/"+id+".md", "---\ntype: practice\ntitle: T"+id+"\ndescription: D\ntags: []\nkk_schema_version: 3\nkk_id: "+id+"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_phrasings:\n  - how do I do thing "+string(rune('a'+i))+"\n---\nBody.\n")
	}
	if c := doctorCheck(t, f.doctor("1.0.0"), "phrasings"); c.Level != DoctorWarn || !strings.HasPrefix(c.Message, "1 of 4 leaves (25%)") {
		t.Fatalf("%+v", c)
	}
	f.write("nodes/practice-d.md", "---\ntype: practice\ntitle: Td\ndescription: D\ntags: []\nkk_schema_version: 3\nkk_id: practice-d\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\nkk_phrasings:\n  - how do I do thing d\n---\nBody.\n")
	if c := doctorCheck(t, f.doctor("1.0.0"), "phrasings"); c.Level != DoctorOK || !strings.HasPrefix(c.Message, "0 of 4 leaves") {
		t.Fatalf("%+v", c)
	}
}

// Doctor says semantic search can be turned on when a local Ollama
// answers, and contacts nothing when told not to look.
func TestDoctorSemanticSearch(t *testing.T) {
	f := newLintKB(t)
	hits := 0
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits++
		if r.URL.Path != "/api/tags" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"models":[]}`))
	}))
	defer ollama.Close()
	ctx := context.Background()
	c := checkSemanticSearch(ctx, f.k, ollama.URL)
	if c.Level != DoctorOK || !strings.Contains(c.Message, "a local Ollama answers at "+ollama.URL) || !strings.Contains(c.Fix, "provider: ollama") {
		t.Fatalf("%+v", c)
	}
	ollama.Close()
	if c := checkSemanticSearch(ctx, f.k, ollama.URL); c.Fix != "" || !strings.HasPrefix(c.Message, "off: search is lexical and offline") {
		t.Fatalf("no Ollama: %+v", c)
	}
	n := hits
	if c := checkSemanticSearch(ctx, f.k, ""); c.Fix != "" || hits != n {
		t.Fatalf("not looking: %+v, %d requests", c, hits-n)
	}
	f.write("config.yaml", "embeddings:\n  provider: ollama\n  model: nomic-embed-text\n")
	if c := checkSemanticSearch(ctx, f.k, ""); !strings.HasPrefix(c.Message, "on: ") {
		t.Fatalf("configured: %+v", c)
	}
}

func TestOllamaURL(t *testing.T) {
	for env, want := range map[string]string{"": "http://localhost:11434", "0.0.0.0:11500": "http://0.0.0.0:11500", "https://gpu.example/": "https://gpu.example"} {
		t.Setenv("OLLAMA_HOST", env)
		if got := OllamaURL(); got != want {
			t.Errorf("OLLAMA_HOST=%q: %s, want %s", env, got, want)
		}
	}
}
