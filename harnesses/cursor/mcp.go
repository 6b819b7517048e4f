package cursor

import "github.com/kk-project/kk/internal/harness"

// mcpConfig registers kk mcp in .cursor/mcp.json (harnesses.md §3.6):
// {"mcpServers": {"kk": {"command", "args"}}}.
var mcpConfig = harness.JSONMCP{
	File:  ".cursor/mcp.json",
	Key:   "mcpServers",
	Entry: func(s harness.MCPServer) any { return harness.CommandArgsEntry(s) },
	Parse: harness.ParseCommandArgs,
}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return mcpConfig }

var _ harness.MCPRegistrar = (*Adapter)(nil)
