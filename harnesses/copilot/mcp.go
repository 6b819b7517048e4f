package copilot

import "github.com/kk-project/kk/internal/harness"

// mcpConfig registers kk mcp in .github/mcp.json (harnesses.md §5.6), not
// in .mcp.json, which Claude Code reads too in its own shape:
// {"mcpServers": {"kk": {"type": "local", "command", "args", "tools": ["*"]}}}.
var mcpConfig = harness.JSONMCP{
	File: ".github/mcp.json",
	Key:  "mcpServers",
	Entry: func(s harness.MCPServer) any {
		return mcpEntry{Type: "local", Command: s.Command, Args: s.Args, Tools: []string{"*"}}
	},
	Parse: harness.ParseCommandArgs,
}

// mcpEntry is one local server of Copilot CLI's MCP configuration.
type mcpEntry struct {
	Type    string   `json:"type"`
	Command string   `json:"command"`
	Args    []string `json:"args"`
	Tools   []string `json:"tools"`
}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return mcpConfig }

var _ harness.MCPRegistrar = (*Adapter)(nil)
