package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
)

// Codex reads MCP servers from [mcp_servers.<name>] tables of
// .codex/config.toml (harnesses.md §2.6). kk keeps its table in a block
// between two comment lines at the end of the file, so that uninstall can
// take out exactly what init put in and leave the user's TOML byte for
// byte.
const (
	mcpBlockStart = "# kk:start (kk's MCP server; kk init writes and kk uninstall removes this block)"
	mcpBlockEnd   = "# kk:end"
)

// tomlMCP is Codex's MCP configuration: a block of .codex/config.toml.
type tomlMCP struct{}

// MCP implements harness.MCPRegistrar.
func (*Adapter) MCP() harness.MCPConfig { return tomlMCP{} }

// ConfigFile implements harness.MCPConfig.
func (tomlMCP) ConfigFile() string { return configFile }

func configPath(root string) string { return filepath.Join(root, filepath.FromSlash(configFile)) }

// Register writes kk's [mcp_servers.kk] block. A [mcp_servers.kk]
// table the user wrote outside kk's block is theirs: it is left alone and
// nothing is written (two tables of one name are invalid TOML).
func (tomlMCP) Register(root string, s harness.MCPServer) ([]harness.Change, error) {
	path, err := atomicfile.Follow(root, configPath(root))
	if err != nil {
		return nil, err
	}
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	exists := err == nil
	rest, _, err := cutMCPBlock(string(old))
	if err != nil {
		return nil, err
	}
	if userTable(rest) {
		return nil, nil
	}
	text := rest
	block := mcpBlock(s)
	switch {
	case text == "":
		text = block
	case strings.HasSuffix(text, "\n"):
		text += "\n" + block
	default:
		text += "\n\n" + block
	}
	if exists && text == string(old) {
		return nil, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(path, []byte(text), 0o644); err != nil {
		return nil, err
	}
	action := "created"
	if exists {
		action = "updated"
	}
	return []harness.Change{{Path: configFile, Action: action}}, nil
}

// Unregister removes kk's block, and the file when nothing else is in it.
func (tomlMCP) Unregister(root string) ([]harness.Change, error) {
	path, err := atomicfile.Follow(root, configPath(root))
	if err != nil {
		return nil, err
	}
	linked := path != configPath(root) // a link stays, emptied or not
	old, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rest, found, err := cutMCPBlock(string(old))
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, nil
	}
	if rest == "" && !linked {
		if err := os.Remove(path); err != nil {
			return nil, err
		}
		return []harness.Change{{Path: configFile, Action: "removed"}}, nil
	}
	if err := atomicfile.Write(path, []byte(rest), 0o644); err != nil {
		return nil, err
	}
	return []harness.Change{{Path: configFile, Action: "updated"}}, nil
}

// Registered reads the [mcp_servers.kk] table, kk's or the user's.
func (tomlMCP) Registered(root string) (harness.MCPServer, bool, error) {
	data, err := os.ReadFile(configPath(root))
	if errors.Is(err, fs.ErrNotExist) {
		return harness.MCPServer{}, false, nil
	}
	if err != nil {
		return harness.MCPServer{}, false, err
	}
	var s harness.MCPServer
	_, entries := scanTOML(string(data))
	for _, e := range entries {
		full := append(slices.Clone(e.table), e.key...)
		if len(full) != 3 || full[0] != "mcp_servers" || full[1] != harness.MCPServerName {
			continue
		}
		switch full[2] {
		case "command":
			cmd, ok := tomlString(e.value)
			if !ok {
				return s, false, fmt.Errorf("%s line %d: command must be a string", configFile, e.line)
			}
			s.Command = cmd
		case "args":
			if err := json.Unmarshal([]byte(e.value), &s.Args); err != nil {
				return s, false, fmt.Errorf("%s line %d: args: %v", configFile, e.line, err)
			}
		}
	}
	return s, s.Command != "", nil
}

// mcpBlock is kk's block for s, with a final newline.
func mcpBlock(s harness.MCPServer) string {
	args := make([]string, len(s.Args))
	for i, a := range s.Args {
		args[i] = tomlQuote(a)
	}
	return mcpBlockStart + "\n[mcp_servers." + harness.MCPServerName + "]\ncommand = " + tomlQuote(s.Command) +
		"\nargs = [" + strings.Join(args, ", ") + "]\n" + mcpBlockEnd + "\n"
}

// cutMCPBlock returns text without kk's block and the blank line
// Register put before it, and whether there was a block. The block is its
// start line and the first whole end line after it: a comment that merely
// ends like the end marker is the user's. A start line without an end line
// after it is an error: which lines are kk's cannot be told, and a block
// appended after it would be cut back to that start line the next time,
// taking the user's lines between.
func cutMCPBlock(text string) (string, bool, error) {
	start, off := -1, 0
	for _, l := range strings.SplitAfter(text, "\n") {
		switch strings.TrimSpace(l) {
		case mcpBlockStart:
			if start < 0 {
				start = off
			}
		case mcpBlockEnd:
			if start >= 0 {
				end := off + len(l)
				if strings.HasSuffix(text[:start], "\n\n") {
					start--
				}
				return text[:start] + text[end:], true, nil
			}
		}
		off += len(l)
	}
	if start >= 0 {
		return text, false, fmt.Errorf("%s has the line %q but no %q line after it; kk left it unchanged: put the end line back after kk's [mcp_servers.kk] table (or delete the start line), then run kk again", configFile, mcpBlockStart, mcpBlockEnd)
	}
	return text, false, nil
}

// userTable reports whether text defines [mcp_servers.kk] itself.
func userTable(text string) bool {
	headers, entries := scanTOML(text)
	for _, h := range headers {
		if slices.Equal(h.path, []string{"mcp_servers", harness.MCPServerName}) {
			return true
		}
	}
	for _, e := range entries {
		if full := append(slices.Clone(e.table), e.key...); len(full) >= 2 && full[0] == "mcp_servers" && full[1] == harness.MCPServerName {
			return true
		}
	}
	return false
}

// tomlString quotes s as a TOML basic string.
func tomlQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

var _ harness.MCPRegistrar = (*Adapter)(nil)
