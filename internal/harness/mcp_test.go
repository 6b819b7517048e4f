package harness

import (
	"os"
	"path/filepath"
	"testing"
)

// A kk command holding a space is a path when it names a file in the
// repository (the hooks quote it as one word): the MCP registration runs
// that file. Before, it was split at the space ("tools/my" with the args
// "bin/kk mcp"), and every harness's MCP server failed to start. A command
// line naming no file is split as before.
func TestMCPServerInTakesAPathWithASpaceWhole(t *testing.T) {
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "tools", "my bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(root, "tools", "my bin", "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		command string
		want    MCPServer
	}{
		{"tools/my bin/kk", MCPServer{Command: "tools/my bin/kk", Args: []string{"mcp"}}},
		{filepath.Join(root, "tools", "my bin", "kk"), MCPServer{Command: filepath.Join(root, "tools", "my bin", "kk"), Args: []string{"mcp"}}},
		{"go run ./cmd/kk", MCPServer{Command: "go", Args: []string{"run", "./cmd/kk", "mcp"}}},
		{"kk", MCPServer{Command: "kk", Args: []string{"mcp"}}},
	} {
		if got := MCPServerIn(root, tc.command); got.String() != tc.want.String() || got.Command != tc.want.Command {
			t.Errorf("MCPServerIn(%q) = %q %q, want %q %q", tc.command, got.Command, got.Args, tc.want.Command, tc.want.Args)
		}
	}
}
