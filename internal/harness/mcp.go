package harness

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// MCPServerName is the name kk's MCP server is registered under in every
// harness's MCP configuration.
const MCPServerName = "kk"

// MCPServer is the command a harness runs to start kk's MCP server.
type MCPServer struct {
	Command string
	Args    []string
}

// String renders the command line, for messages.
func (s MCPServer) String() string { return strings.Join(append([]string{s.Command}, s.Args...), " ") }

// MCPServerFor is the server command for an install whose hooks invoke kk
// as kkCommand ("kk", a path, or a command line such as "go run ./cmd/kk"):
// that command followed by "mcp".
func MCPServerFor(kkCommand string) MCPServer {
	f := strings.Fields(kkCommand)
	if len(f) == 0 {
		f = []string{"kk"}
	}
	return MCPServer{Command: f[0], Args: append(slices.Clone(f[1:]), "mcp")}
}

// MCPServerIn is MCPServerFor for an install in the repository at root:
// a kk command holding a space that names a file there (a path such as
// "tools/my bin/kk", which the hooks quote as one word) is that file, not
// a command line split at the space.
func MCPServerIn(root, kkCommand string) MCPServer {
	if strings.ContainsAny(kkCommand, " \t") {
		p := kkCommand
		if !filepath.IsAbs(p) {
			p = filepath.Join(root, filepath.FromSlash(p))
		}
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			return MCPServer{Command: kkCommand, Args: []string{"mcp"}}
		}
	}
	return MCPServerFor(kkCommand)
}

// MCPRegistrar is implemented by adapters whose harness reads a project MCP
// configuration: kk init registers `kk mcp` there, kk uninstall takes it
// out again, and kk doctor starts what is registered when it is kk itself
// (install.ownServer).
type MCPRegistrar interface {
	MCP() MCPConfig
}

// MCPConfig is a harness's project MCP configuration file.
type MCPConfig interface {
	// ConfigFile is the file holding the registration, relative to the
	// repository root, slash-separated.
	ConfigFile() string
	// Register registers s under MCPServerName, keeping everything else in
	// the file. Registering the same server twice changes nothing.
	Register(root string, s MCPServer) ([]Change, error)
	// Unregister removes what Register added: the user's file is left as it
	// was before, and a file kk created is removed.
	Unregister(root string) ([]Change, error)
	// Registered returns the server registered under MCPServerName; ok is
	// false when there is none.
	Registered(root string) (s MCPServer, ok bool, err error)
}

// JSONMCP registers kk's server in a JSON settings file holding servers by
// name under one key ("mcpServers" for most harnesses).
type JSONMCP struct {
	// File is the settings file, relative to the repository root.
	File string
	// Key is the object holding the servers by name.
	Key string
	// Entry is the value stored for s, in the harness's shape.
	Entry func(s MCPServer) any
	// Parse reads a server back from an entry; ok is false when the entry
	// has no command.
	Parse func(raw json.RawMessage) (s MCPServer, ok bool)
}

// CommandArgsEntry is the usual server entry: {"command", "args"}.
type CommandArgsEntry struct {
	Command string   `json:"command"`
	Args    []string `json:"args"`
}

// ParseCommandArgs reads a {"command", "args"} entry.
func ParseCommandArgs(raw json.RawMessage) (MCPServer, bool) {
	var e CommandArgsEntry
	if json.Unmarshal(raw, &e) != nil || e.Command == "" {
		return MCPServer{}, false
	}
	return MCPServer(e), true
}

// ConfigFile implements MCPConfig.
func (j JSONMCP) ConfigFile() string { return j.File }

var _ MCPConfig = JSONMCP{}

func (j JSONMCP) path(root string) string { return filepath.Join(root, filepath.FromSlash(j.File)) }

// Register sets the kk entry under Key.
func (j JSONMCP) Register(root string, s MCPServer) ([]Change, error) {
	entry, err := json.Marshal(j.Entry(s))
	if err != nil {
		return nil, err
	}
	action, err := EditJSONFile(root, j.path(root), func(doc *Object) error {
		servers, err := j.servers(doc)
		if err != nil {
			return err
		}
		if old, ok := servers.Get(MCPServerName); ok {
			if same, _ := sameJSON(old, entry); same {
				return nil
			}
		}
		if err := servers.Set(MCPServerName, json.RawMessage(entry)); err != nil {
			return err
		}
		return doc.Set(j.Key, servers)
	}, false)
	return changes(j.File, action), err
}

// Unregister deletes the kk entry, then Key when no server is left, then
// the file when nothing is left in it.
func (j JSONMCP) Unregister(root string) ([]Change, error) {
	if _, err := os.Stat(j.path(root)); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	action, err := EditJSONFile(root, j.path(root), func(doc *Object) error {
		if _, ok := doc.Get(j.Key); !ok {
			return nil
		}
		servers, err := j.servers(doc)
		if err != nil {
			return err
		}
		if _, ok := servers.Get(MCPServerName); !ok {
			return nil
		}
		servers.Delete(MCPServerName)
		if servers.Len() == 0 {
			doc.Delete(j.Key)
			return nil
		}
		return doc.Set(j.Key, servers)
	}, true)
	return changes(j.File, action), err
}

// Registered reads the kk entry.
func (j JSONMCP) Registered(root string) (MCPServer, bool, error) {
	data, err := os.ReadFile(j.path(root))
	if errors.Is(err, fs.ErrNotExist) {
		return MCPServer{}, false, nil
	}
	if err != nil {
		return MCPServer{}, false, err
	}
	doc, err := ParseObject(data)
	if err != nil {
		return MCPServer{}, false, fmt.Errorf("%s: %v", j.File, err)
	}
	if _, ok := doc.Get(j.Key); !ok {
		return MCPServer{}, false, nil
	}
	servers, err := j.servers(doc)
	if err != nil {
		return MCPServer{}, false, err
	}
	raw, ok := servers.Get(MCPServerName)
	if !ok {
		return MCPServer{}, false, nil
	}
	s, ok := j.Parse(raw)
	return s, ok, nil
}

func (j JSONMCP) servers(doc *Object) (*Object, error) {
	raw, _ := doc.Get(j.Key)
	servers, err := ParseObject(raw)
	if err != nil {
		return nil, fmt.Errorf("%s: %q is not an object of servers: %v", j.File, j.Key, err)
	}
	return servers, nil
}

func changes(file, action string) []Change {
	if action == "" {
		return nil
	}
	return []Change{{Path: file, Action: action}}
}
