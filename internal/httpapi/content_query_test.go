package httpapi_test

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/httpapi/httpapitest"
)

// TestContentQueryModes: GET /content?query=Q answers as knowledged's
// design describes, so a client written to it works: mode=raw as
// /search?query=Q&mode=raw, no mode (or synthesize) as /answer?query=Q.
func TestContentQueryModes(t *testing.T) {
	model := httpapitest.FakeOllama(t, map[string]string{
		"sources": `{"answer":"Channels pass values.","sources":["inbox/go-channels.md"]}`,
	}, 0)
	s := start(t, newRepo(t), withModel(t, model), "")
	s.wait(s.submit("POST", `{"content":"Channels pass values between goroutines.","title":"Go Channels"}`))

	raw := s.do("GET", "/content?query=channels&mode=raw", "")
	search := s.do("GET", "/search?query=channels&mode=raw", "")
	var docs []httpapi.Doc
	raw.json(t, &docs)
	if raw.status != 200 || raw.body != search.body || len(docs) != 1 || docs[0].Path != "inbox/go-channels.md" || !strings.Contains(docs[0].Content, "Channels pass values") {
		t.Errorf("GET /content?query&mode=raw: %d %s; /search gives %s", raw.status, raw.body, search.body)
	}
	want := `{"query":"channels","sources":["inbox/go-channels.md"],"answer":"Channels pass values."}`
	for _, p := range []string{"/content?query=channels", "/content?query=channels&mode=synthesize", "/answer?query=channels"} {
		if r := s.do("GET", p, ""); r.status != 200 || strings.TrimSpace(r.body) != want {
			t.Errorf("GET %s: %d %s", p, r.status, r.body)
		}
	}
	if r := s.do("GET", "/content?query=channels&mode=fast", ""); r.status != 400 || !strings.Contains(r.body, `mode must be \"raw\" or \"synthesize\"`) {
		t.Errorf("bad mode: %d %s", r.status, r.body)
	}
	// A path wins over a query, as knowledged reads the path first.
	if r := s.do("GET", "/content?path=inbox/go-channels.md&query=x", ""); r.status != 200 || !strings.Contains(r.body, `"path":"inbox/go-channels.md"`) {
		t.Errorf("path and query: %d %s", r.status, r.body)
	}
	offline := start(t, newRepo(t), nil, "")
	if r := offline.do("GET", "/content?query=channels", ""); r.status != 503 {
		t.Errorf("no model, synthesize: %d %s", r.status, r.body)
	}
}
