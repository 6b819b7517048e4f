package codex

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// A [mcp_servers.kk] table the user wrote is theirs: kk neither adds a
// second one (invalid TOML) nor removes it.
func TestMCPUserTable(t *testing.T) {
	root := t.TempDir()
	user := "[mcp_servers.kk]\ncommand = '/usr/local/bin/kk'\nargs = [\"mcp\", \"--log-file\"]\n"
	path := filepath.Join(root, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New()
	if ch, err := a.MCP().Register(root, harness.MCPServerFor("kk")); err != nil || len(ch) != 0 {
		t.Fatalf("register: %v %v", ch, err)
	}
	if s, ok, err := a.MCP().Registered(root); err != nil || !ok || s.String() != "/usr/local/bin/kk mcp --log-file" {
		t.Fatalf("registered: %v %v %v", s, ok, err)
	}
	if ch, err := a.MCP().Unregister(root); err != nil || len(ch) != 0 {
		t.Fatalf("unregister: %v %v", ch, err)
	}
	if data, _ := os.ReadFile(path); string(data) != user {
		t.Fatalf("the user's table changed:\n%s", data)
	}
}
