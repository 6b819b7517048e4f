package mcpserver

import (
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/op"
)

// TestBrokenConfig: a config.yaml that does not parse (a YAML syntax
// error, a setting of the wrong type) made every tool that reads it answer
// INTERNAL_ERROR, which says "not your fault, nothing to do". It is
// CONFIG_ERROR, as the CLI says it, with the message naming the file and
// the line and the details carrying them; the server goes on serving,
// and once the file is fixed the same calls succeed.
func TestBrokenConfig(t *testing.T) {
	k := newKB(t)
	cs := connectBinary(t, k)
	good, err := os.ReadFile(k.ConfigPath())
	if err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"query_graph", map[string]any{"operation": "context", "paths": []string{"src/auth/x.go"}}},
		{"manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": "Auth", "paths": []string{"src/auth/**"}, "knowledge": "Tokens rotate."}},
		{"kk_search", map[string]any{"query": "retry"}},
		{"kb_check", map[string]any{}},
	}
	for _, c := range []struct {
		name, config, message string
		line                  float64
	}{
		{"syntax", "schema_version: 1\ncurationThreshold: [\n", ".ai/kenkeep/config.yaml: invalid YAML: line 2: did not find expected node content", 2},
		{"type", "schema_version: 1\n\ncurationThreshold: many\n", ".ai/kenkeep/config.yaml: line 3: ", 3},
	} {
		t.Run(c.name, func(t *testing.T) {
			if err := os.WriteFile(k.ConfigPath(), []byte(c.config), 0o644); err != nil {
				t.Fatal(err)
			}
			for _, cl := range calls {
				env := call(t, cs, cl.tool, cl.args)
				wantCode(t, env, op.CodeConfig)
				e := env["error"].(map[string]any)
				msg, _ := e["message"].(string)
				details, _ := e["details"].(map[string]any)
				if !strings.HasPrefix(msg, c.message) || details["file"] != ".ai/kenkeep/config.yaml" || details["line"] != c.line {
					t.Errorf("%s: %v", cl.tool, e)
				}
			}
			// The server still serves: kk_entry reads no config.
			data(t, call(t, cs, "kk_entry", map[string]any{}))
		})
	}
	if err := os.WriteFile(k.ConfigPath(), good, 0o644); err != nil {
		t.Fatal(err)
	}
	for _, cl := range calls {
		if env := call(t, cs, cl.tool, cl.args); env["success"] != true {
			t.Errorf("%s after the fix: %v", cl.tool, env)
		}
	}
}
