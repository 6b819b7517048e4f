package install

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
)

// MCPDoctorTimeout bounds how long kk doctor waits for a registered MCP
// server to start and list its tools.
var MCPDoctorTimeout = 10 * time.Second

// registerMCP registers `<command> mcp` in the project MCP configuration
// of a harness whose adapter supports it.
func registerMCP(a harness.Adapter, root, command string) ([]harness.Change, error) {
	r, ok := a.(harness.MCPRegistrar)
	if !ok {
		return nil, nil
	}
	changes, err := r.MCP().Register(root, harness.MCPServerIn(root, command))
	if err != nil {
		return changes, fmt.Errorf("registering kk's MCP server in %s: %w", r.MCP().ConfigFile(), err)
	}
	return changes, nil
}

// unregisterMCP takes kk's MCP server out of a harness's configuration.
func unregisterMCP(a harness.Adapter, root string) ([]harness.Change, error) {
	r, ok := a.(harness.MCPRegistrar)
	if !ok {
		return nil, nil
	}
	changes, err := r.MCP().Unregister(root)
	if err != nil {
		return changes, fmt.Errorf("removing kk's MCP server from %s: %w", r.MCP().ConfigFile(), err)
	}
	return changes, nil
}

// checkMCP checks a harness's MCP registration: present, naming the
// command kk's hooks use, and answering tools/list with kk's tools when
// started from the repository root. ok is false for a harness without MCP
// support.
func checkMCP(ctx context.Context, k *store.KB, id string, a harness.Adapter, command string) (c checks.DoctorCheck, ok bool) {
	r, ok := a.(harness.MCPRegistrar)
	if !ok {
		return c, false
	}
	c.Name = id + "/mcp"
	file := r.MCP().ConfigFile()
	fix := "run `kk init --upgrade`, which registers `kk mcp` again and keeps the rest of the file"
	s, found, err := r.MCP().Registered(k.Root)
	switch {
	case err != nil:
		c.Level, c.Message, c.Fix = checks.DoctorError, fmt.Sprintf("%s cannot be read: %v", file, err), "fix the file, then run `kk init --upgrade`"
		return c, true
	case !found:
		c.Level, c.Message, c.Fix = checks.DoctorWarn, fmt.Sprintf("%s does not register kk's MCP server, so the agent has no kk tools", file), fix
		return c, true
	}
	switch ours, err := ownServer(k.Root, s); {
	case err != nil:
		c.Level, c.Message = checks.DoctorError, fmt.Sprintf("the MCP server registered in %s (%s) does not answer: %v", file, s, err)
		c.Fix = "check that `" + s.String() + "` runs from the repository root, or " + strings.TrimPrefix(fix, "run ")
		return c, true
	case !ours:
		c.Level, c.Message = checks.DoctorWarn, fmt.Sprintf("%s registers `%s`, which is not this kk binary with its mcp command; kk doctor does not start it", file, s)
		c.Fix = "a repository's files can name any program: check that it is what you want and start it yourself, or " + fix
		return c, true
	}
	tools, err := listTools(ctx, k.Root, s)
	if err != nil {
		c.Level, c.Message = checks.DoctorError, fmt.Sprintf("the MCP server registered in %s (%s) does not answer: %v", file, s, err)
		c.Fix = "check that `" + s.String() + "` runs from the repository root, or " + strings.TrimPrefix(fix, "run ")
		return c, true
	}
	if !slices.Contains(tools, "query_graph") {
		c.Level, c.Message, c.Fix = checks.DoctorError, fmt.Sprintf("the MCP server registered in %s (%s) is not kk's: it lists %s", file, s, strings.Join(tools, ", ")), fix
		return c, true
	}
	if want := harness.MCPServerIn(k.Root, command); !slices.Equal(append([]string{s.Command}, s.Args...), append([]string{want.Command}, want.Args...)) {
		c.Level, c.Message, c.Fix = checks.DoctorWarn, fmt.Sprintf("%s starts `%s`, not `%s` as kk's hooks would; it answers with %d tools", file, s, want, len(tools)), fix
		return c, true
	}
	c.Level, c.Message = checks.DoctorOK, fmt.Sprintf("%s registers `%s`, which answers tools/list with %d tools", file, s, len(tools))
	return c, true
}

// ownServer reports whether s is this kk binary (the program running,
// found as s's command would be from root) serving MCP: its arguments
// are "mcp" and mcp's flags, after an optional --root. kk doctor starts
// nothing else: the file registering s is the repository's, and a
// cloned repository's files are anyone's, where a harness asks before it
// starts a project's server. err is set when s's command cannot be found.
func ownServer(root string, s harness.MCPServer) (bool, error) {
	path := s.Command
	switch {
	case path == "":
		return false, fmt.Errorf("no command")
	case !strings.ContainsRune(path, '/') && !strings.ContainsRune(path, filepath.Separator):
		p, err := exec.LookPath(path)
		if err != nil {
			return false, err
		}
		path = p
	case !filepath.IsAbs(path):
		path = filepath.Join(root, path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return false, err
	}
	self, err := os.Executable()
	if err != nil {
		return false, nil
	}
	me, err := os.Stat(self)
	if err != nil || !os.SameFile(fi, me) {
		return false, nil
	}
	args := s.Args
	switch {
	case len(args) >= 2 && args[0] == "--root":
		args = args[2:]
	case len(args) >= 1 && strings.HasPrefix(args[0], "--root="):
		args = args[1:]
	}
	if len(args) == 0 || args[0] != "mcp" {
		return false, nil
	}
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "--log-level":
			i++ // its value
		case !strings.HasPrefix(a, "-"):
			return false, nil // mcp takes no arguments
		}
	}
	return true, nil
}

// listTools starts s in root, lists its tools and stops it.
func listTools(ctx context.Context, root string, s harness.MCPServer) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, MCPDoctorTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.Command, s.Args...)
	cmd.Dir = root
	client := mcp.NewClient(&mcp.Implementation{Name: "kk-doctor", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: time.Second}, nil)
	if err != nil {
		return nil, err
	}
	defer func() { _ = cs.Close() }()
	var names []string
	for t, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return nil, err
		}
		names = append(names, t.Name)
	}
	slices.Sort(names)
	return names, nil
}
