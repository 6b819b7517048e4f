package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResultTextHoldsNoRawControls: a note's words reach a tool result's
// text, which the harness shows in its terminal UI. JSON escapes C0
// controls, but not C1 controls (U+009B reads as CSI in an 8-bit
// terminal) nor the bidirectional overrides that show text in another
// order than the model reads it: a hand-written note held them raw in the
// result. They are written as \u escapes, which decode to the same
// characters: the note's words are kept.
func TestResultTextHoldsNoRawControls(t *testing.T) {
	k := newKB(t)
	title := "Deploy \u202Eevil\u202C \u009b2J \u2066x\u2069 retry"
	yamlTitle := `Deploy \u202Eevil\u202C \x9b2J \u2066x\u2069 retry` // the YAML escapes of title
	leaf := "---\ntype: practice\ntitle: \"" + yamlTitle + "\"\ndescription: retry deploys with backoff\ntags: [deploy]\nkk_schema_version: 3\nkk_id: practice-deploy-retry\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n\nRetry deploys \u202E with backoff.\n"
	if err := os.WriteFile(k.NodePath("practice-deploy-retry.md"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	cs := connect(t, k)
	for _, c := range []struct {
		tool string
		args map[string]any
	}{
		{"kk_read", map[string]any{"id": "practice-deploy-retry"}},
		{"kk_search", map[string]any{"query": "deploy backoff"}},
	} {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: c.tool, Arguments: c.args})
		if err != nil {
			t.Fatal(err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		for _, r := range []string{"\u202E", "\u202C", "\u009b", "\u2066", "\u2069"} {
			if strings.Contains(text, r) {
				t.Errorf("%s: the result text holds %U raw:\n%.400s", c.tool, []rune(r)[0], text)
			}
		}
		if !strings.Contains(text, `\u202e`) {
			t.Errorf("%s: the override is not in the text as an escape:\n%.400s", c.tool, text)
		}
		var env struct {
			Success bool            `json:"success"`
			Data    json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(text), &env); err != nil || !env.Success {
			t.Fatalf("%s: %v %.300s", c.tool, err, text)
		}
		var v any
		if err := json.Unmarshal(env.Data, &v); err != nil {
			t.Fatal(err)
		}
		if !containsString(v, title) {
			t.Errorf("%s: the decoded data lost the title %q", c.tool, title)
		}
	}
}

// containsString reports whether s is a string value anywhere in v.
func containsString(v any, s string) bool {
	switch v := v.(type) {
	case string:
		return v == s
	case []any:
		for _, e := range v {
			if containsString(e, s) {
				return true
			}
		}
	case map[string]any:
		for _, e := range v {
			if containsString(e, s) {
				return true
			}
		}
	}
	return false
}
