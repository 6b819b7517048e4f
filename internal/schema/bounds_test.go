package schema

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/trace"
)

// The JSON Schemas tell agents the bounds the core enforces; the core
// enforces them from Go constants. This test ties each schema bound to its
// constant, so the two cannot drift apart: change a constant and the
// schema's struct tag must follow.
func TestSchemaBoundsMatchTheCore(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		schema, property, keyword string
		want                      int
	}{
		{"kb-upsert", "entities", "maxItems", trace.MaxChangesetEntities},
		{"kb-upsert", "edges", "maxItems", trace.MaxChangesetEdges},
		{"kb-upsert", "created_by", "maxLength", trace.MaxShortFieldChars},
		{"kb-upsert", "source", "maxLength", trace.MaxRefChars},
		{"kb-upsert", "id", "maxLength", node.MaxIDLen},
		{"kb-upsert", "title", "maxLength", trace.MaxShortFieldChars},
		{"kb-upsert", "owner", "maxLength", trace.MaxShortFieldChars},
		{"kb-upsert", "priority", "maxLength", trace.MaxCodeChars},
		{"kb-upsert", "severity", "maxLength", trace.MaxCodeChars},
		{"kb-upsert", "kind", "maxLength", trace.MaxCodeChars},
		{"kb-upsert", "text_ref", "maxLength", trace.MaxRefChars},
		{"kb-upsert", "description", "maxLength", trace.MaxDescriptionChars},
		{"kb-upsert", "tags", "maxItems", trace.MaxTags},
		{"kb-upsert", "links", "maxItems", trace.MaxLinks},
		{"kb-delete", "entities", "maxItems", trace.MaxChangesetEntities},
		{"kb-delete", "edges", "maxItems", trace.MaxChangesetEdges},
		{"kb-delete", "created_by", "maxLength", trace.MaxShortFieldChars},
		{"kb-delete", "source", "maxLength", trace.MaxRefChars},
		{"node-input", "description", "maxLength", node.MaxDescriptionChars},
		{"kb-query", "limit", "maximum", graph.MaxLimit},
		{"kk-read", "changelogLimit", "maximum", graph.MaxLimit},
		{"kk-search", "limit", "maximum", search.MaxSearchLimit},
	} {
		t.Run(c.schema+"/"+c.property+"/"+c.keyword, func(t *testing.T) {
			raw, err := JSON(c.schema)
			if err != nil {
				t.Fatal(err)
			}
			var doc any
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
			got := boundsOf(doc, c.property, c.keyword)
			if len(got) == 0 {
				t.Fatalf("schema %s has no %s on any property %q", c.schema, c.keyword, c.property)
			}
			for _, g := range got {
				if g != fmt.Sprint(c.want) {
					t.Errorf("schema %s: %s.%s is %s; the core enforces %d", c.schema, c.property, c.keyword, g, c.want)
				}
			}
		})
	}
}

// boundsOf collects the keyword's value on every property of that name,
// wherever it is defined in the schema ($defs included).
func boundsOf(v any, property, keyword string) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		if props, ok := v["properties"].(map[string]any); ok {
			if p, ok := props[property].(map[string]any); ok {
				if b, ok := p[keyword]; ok {
					out = append(out, fmt.Sprint(b))
				}
			}
		}
		for _, x := range v {
			out = append(out, boundsOf(x, property, keyword)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, boundsOf(x, property, keyword)...)
		}
	}
	return out
}
