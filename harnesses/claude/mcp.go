package claude

import "github.com/kk-project/kk/internal/harness"

// mcpConfig registers kk mcp in the project's .mcp.json (harnesses.md §1.6):
// {"mcpServers": {"kk": {"command", "args"}}}. Claude Code asks once before
// starting a project server.
var mcpConfig = harness.JSONMCP{
	File:  ".mcp.json",
	Key:   "mcpServers",
	Entry: func(s harness.MCPServer) any { return harness.CommandArgsEntry(s) },
	Parse: harness.ParseCommandArgs,
}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return mcpConfig }

var _ harness.MCPRegistrar = (*Adapter)(nil)
