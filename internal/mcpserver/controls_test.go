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
	title := "Deploy \u202Eevil\u202C \u009b2J \u2066x\u2069 retry\U000E0049\U000E0047"
	yamlTitle := `Deploy \u202Eevil\u202C \x9b2J \u2066x\u2069 retry\U000E0049\U000E0047` // the YAML escapes of title
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
		for _, r := range []string{"\u202E", "\u202C", "\u009b", "\u2066", "\u2069", "\U000E0049"} {
			if strings.Contains(text, r) {
				t.Errorf("%s: the result text holds %U raw:\n%.400s", c.tool, []rune(r)[0], text)
			}
		}
		if !strings.Contains(text, `\u202e`) {
			t.Errorf("%s: the override is not in the text as an escape:\n%.400s", c.tool, text)
		}
		if !strings.Contains(text, `\udb40\udc49`) {
			t.Errorf("%s: the tag character is not in the text as an escape:\n%.400s", c.tool, text)
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

// TestResourceTextHoldsNoRawControls: a resource read (kk://node/…,
// kk://entry, kk://index/…) returns a file's markdown, which the harness
// shows or hands the model as the tool results' text is. A hand-written
// note's ESC sequences, BEL, C1 controls and bidirectional overrides, and
// those of an ENTRY.md or index.md kk did not write (kenkeep's, a hand
// edit), were in it raw, while the tool results carry none (see
// TestResultTextHoldsNoRawControls). Markdown has no escape for them:
// each is written as U+FFFD, as the hooks write hook context; tab and
// line ends, letters outside ASCII and emoji are kept, and a file
// without controls is returned byte for byte.
func TestResourceTextHoldsNoRawControls(t *testing.T) {
	k := newKB(t)
	leaf := "---\ntype: practice\ntitle: \"Deploy \\u202Eevil\\u202C \\x9b2J retry é 🙂\"\ndescription: retry deploys with backoff\ntags: [deploy]\nkk_schema_version: 3\nkk_id: practice-deploy-retry\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n\nRetry \x1b]0;pwned\a\x1b[2J deploys\t\u2066with\u2069 backoff.\r\nTwo.\n"
	if err := os.WriteFile(k.NodePath("practice-deploy-retry.md"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer("\x1b", "\uFFFD", "\a", "\uFFFD", "\u2066", "\uFFFD", "\u2069", "\uFFFD").Replace(leaf)
	entry := "# kenkeep\n\n- Open [**Deploy \u202Eevil\u202C \u009b2J \x1b[31mred\x1b[0m**](nodes/practice-deploy-retry.md) é 🙂\n"
	if err := os.WriteFile(k.EntryPath(), []byte(entry), 0o644); err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(k.NodePath("index.md"))
	if err != nil {
		t.Fatal(err)
	}
	cs := connect(t, k)
	for _, c := range []struct{ uri, want string }{
		{NodeURIPrefix + "practice-deploy-retry", want},
		{EntryURI, "# kenkeep\n\n- Open [**Deploy \uFFFDevil\uFFFD \uFFFD2J \uFFFD[31mred\uFFFD[0m**](nodes/practice-deploy-retry.md) é 🙂\n"},
		{IndexURIPrefix + "index.md", string(index)}, // no control: as it is
	} {
		res, err := cs.ReadResource(context.Background(), &mcp.ReadResourceParams{URI: c.uri})
		if err != nil {
			t.Fatalf("%s: %v", c.uri, err)
		}
		text := res.Contents[0].Text
		if text != c.want {
			t.Errorf("%s: the text is\n%q\nwant\n%q", c.uri, text, c.want)
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
