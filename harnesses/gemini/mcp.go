package gemini

import "github.com/kk-project/kk/internal/harness"

// mcpConfig registers kk mcp in .gemini/settings.json next to kk's hooks
// (harnesses.md §6): {"mcpServers": {"kk": {"command", "args"}}}.
var mcpConfig = harness.JSONMCP{
	File:  ".gemini/settings.json",
	Key:   "mcpServers",
	Entry: func(s harness.MCPServer) any { return harness.CommandArgsEntry(s) },
	Parse: harness.ParseCommandArgs,
}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return mcpConfig }

var _ harness.MCPRegistrar = (*Adapter)(nil)
