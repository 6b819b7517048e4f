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

// TestMCPBlockMarkerLines: kk's block in .codex/config.toml is its start
// line and the first whole end line after it. A start line whose table
// and end line were deleted by hand got a new block appended, which the
// next init then cut back to from the old start line, deleting the user's
// settings between; such a file is now refused, naming it, and left as it
// is. A comment that ends like the end marker is the user's. (The rule of
// kenkeep's tests/lib/managed-block.test.ts for files kk keeps a block in.)
func TestMCPBlockMarkerLines(t *testing.T) {
	root := t.TempDir()
	path := filepath.Join(root, ".codex", "config.toml")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	a := New()
	broken := "model = \"o3\"\n" + mcpBlockStart + "\n[profiles.work]\nmodel = \"gpt\"\n"
	if err := os.WriteFile(path, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MCP().Register(root, harness.MCPServerFor("kk")); err == nil {
		t.Fatal("register over a start line without its end line succeeded")
	}
	if _, err := a.MCP().Unregister(root); err == nil {
		t.Fatal("unregister over a start line without its end line succeeded")
	}
	if data, _ := os.ReadFile(path); string(data) != broken {
		t.Fatalf("the file changed:\n%s", data)
	}

	user := "[tools]\nweb = true # kk:end\n"
	if err := os.WriteFile(path, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MCP().Register(root, harness.MCPServerFor("kk")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MCP().Register(root, harness.MCPServerFor("kk")); err != nil {
		t.Fatal(err)
	}
	if _, err := a.MCP().Unregister(root); err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != user {
		t.Fatalf("register then unregister changed the user's lines:\n%q", data)
	}
}
