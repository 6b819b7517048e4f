package opencode

import (
	"encoding/json"

	"github.com/kk-project/kk/internal/harness"
)

// mcpConfig registers kk mcp in .opencode/opencode.json, the config file
// kk already keeps its plugin in (harnesses.md §4.6):
// {"mcp": {"kk": {"type": "local", "command": ["kk", "mcp"], "enabled": true}}}.
var mcpConfig = harness.JSONMCP{
	File: configFile,
	Key:  "mcp",
	Entry: func(s harness.MCPServer) any {
		return mcpEntry{Type: "local", Command: append([]string{s.Command}, s.Args...), Enabled: true}
	},
	Parse: func(raw json.RawMessage) (harness.MCPServer, bool) {
		var e mcpEntry
		if json.Unmarshal(raw, &e) != nil || len(e.Command) == 0 || e.Command[0] == "" {
			return harness.MCPServer{}, false
		}
		return harness.MCPServer{Command: e.Command[0], Args: e.Command[1:]}, true
	},
}

// mcpEntry is one local server of OpenCode's "mcp" setting: the command
// and its arguments in one list.
type mcpEntry struct {
	Type    string   `json:"type"`
	Command []string `json:"command"`
	Enabled bool     `json:"enabled"`
}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return mcpConfig }

var _ harness.MCPRegistrar = (*Adapter)(nil)
