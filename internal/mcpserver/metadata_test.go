package mcpserver

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestKBQueryMetadata: kb_query returns what an entity's leaf records
// (seed 003): created_at, updated_at, source and sources, links and
// text_ref; edge confidence is a number; an entity an extractor read gets
// its document's times (else its file's), the default status, and its
// file as source and text. kk_read returns the same metadata.
func TestKBQueryMetadata(t *testing.T) {
	k := newKB(t)
	// Documents the markdown extractor reads: one with a creation date,
	// one with no time at all.
	mtime := time.Date(2026, 4, 5, 6, 7, 8, 0, time.UTC)
	for name, text := range map[string]string{
		"req-2.md": "---\nid: REQ-2\ntype: req\ntitle: Log out\ncreated_at: 2026-03-01\n---\nLog out everywhere.\n",
		"req-3.md": "---\nid: REQ-3\ntype: req\ntitle: Stay logged in\nstatus: stable\n---\nFor a month.\n",
	} {
		doc := filepath.Join(k.Root, "docs", "requirements", name)
		if err := os.MkdirAll(filepath.Dir(doc), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(doc, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(doc, mtime, mtime); err != nil {
			t.Fatal(err)
		}
	}
	cs := connect(t, k)
	data(t, call(t, cs, "kb_upsert", map[string]any{
		"entities": []any{
			map[string]any{"id": "REQ-1", "type": "req", "title": "Log in", "links": []any{"https://example.com/req/1"}, "text_ref": "docs/login.md"},
			map[string]any{"id": "login-test", "type": "test", "title": "login works"},
		},
		"edges":      []any{map[string]any{"type": "verified_by", "from": "REQ-1", "to": "login-test", "confidence": 0.8}},
		"created_by": "agent", "source": "PR 42",
	}))
	data(t, call(t, cs, "kb_upsert", map[string]any{
		"entities": []any{map[string]any{"id": "REQ-1", "type": "req", "priority": "must"}}, "created_by": "agent", "source": "PR 43",
	}))

	q := data(t, call(t, cs, "kb_query", map[string]any{"id": "req-1"}))
	ents := q["entities"].([]any)
	if len(ents) != 1 {
		t.Fatalf("kb_query: %v", q)
	}
	e := ents[0].(map[string]any)
	created, _ := time.Parse(time.RFC3339, str(e["created_at"]))
	updated, _ := time.Parse(time.RFC3339, str(e["updated_at"]))
	if created.IsZero() || updated.IsZero() || updated.Before(created) {
		t.Errorf("times: created_at %v, updated_at %v", e["created_at"], e["updated_at"])
	}
	if e["source"] != "PR 42" || str(e["sources"]) != "[PR 42 PR 43]" || str(e["links"]) != "[https://example.com/req/1]" || e["text_ref"] != "docs/login.md" || e["status"] != "draft" {
		t.Errorf("metadata: %v", e)
	}
	edges := e["edges"].([]any)
	if len(edges) != 1 {
		t.Fatalf("edges: %v", e)
	}
	if c, ok := edges[0].(map[string]any)["confidence"].(float64); !ok || c != 0.8 {
		t.Errorf("edge confidence is %#v, want the number 0.8", edges[0].(map[string]any)["confidence"])
	}

	// The extracted requirements: the document's creation date (and, for
	// lack of another, update date), else the file's time; status draft
	// unless the document says; the file as source and text.
	q = data(t, call(t, cs, "kb_query", map[string]any{"id": "REQ-2"}))
	ents = q["entities"].([]any)
	if len(ents) != 1 {
		t.Fatalf("kb_query extracted: %v", q)
	}
	x := ents[0].(map[string]any)
	if x["created_at"] != "2026-03-01T00:00:00Z" || x["updated_at"] != "2026-03-01T00:00:00Z" || x["status"] != "draft" ||
		x["source"] != "docs/requirements/req-2.md" || x["text_ref"] != "docs/requirements/req-2.md" || x["origin"] != "docs/requirements/req-2.md" {
		t.Errorf("extracted entity: %v", x)
	}
	x = data(t, call(t, cs, "kb_query", map[string]any{"id": "REQ-3"}))["entities"].([]any)[0].(map[string]any)
	if x["created_at"] != "2026-04-05T06:07:08Z" || x["updated_at"] != "2026-04-05T06:07:08Z" || x["status"] != "stable" {
		t.Errorf("extracted entity without times: %v", x)
	}

	r := data(t, call(t, cs, "kk_read", map[string]any{"id": "REQ-1"}))
	if r["created_at"] != e["created_at"] || r["source"] != "PR 42" || str(r["links"]) != "[https://example.com/req/1]" || r["text_ref"] != "docs/login.md" {
		t.Errorf("kk_read metadata: %v", r)
	}
}

func str(v any) string {
	switch s := v.(type) {
	case string:
		return s
	case []any:
		out := "["
		for i, x := range s {
			if i > 0 {
				out += " "
			}
			out += str(x)
		}
		return out + "]"
	}
	return ""
}
