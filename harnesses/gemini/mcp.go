package gemini

import "github.com/kk-project/kk/internal/harness"

// mcpConfig registers kk mcp in .gemini/settings.json next to kk's hooks
// (harnesses.md §6): {"mcpServers": {"kk": {"command", "args"}}}.
var mcpConfig = harness.JSONMCP{
	File:  ".gemini/settings.json",
	Key:   "mcpServers",
	Entry: func(s harness.MCPServer) any { return harness.CommandArgsEntry{Command: s.Command, Args: s.Args} },
	Parse: harness.ParseCommandArgs,
}

// MCPConfig implements harness.MCPRegistrar.
func (*Adapter) MCPConfig() string { return mcpConfig.File }

// RegisterMCP implements harness.MCPRegistrar.
func (*Adapter) RegisterMCP(root string, s harness.MCPServer) ([]harness.Change, error) {
	return mcpConfig.Register(root, s)
}

// UnregisterMCP implements harness.MCPRegistrar.
func (*Adapter) UnregisterMCP(root string) ([]harness.Change, error) {
	return mcpConfig.Unregister(root)
}

// RegisteredMCP implements harness.MCPRegistrar.
func (*Adapter) RegisteredMCP(root string) (harness.MCPServer, bool, error) {
	return mcpConfig.Registered(root)
}

var _ harness.MCPRegistrar = (*Adapter)(nil)
