package harnesstest

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// CheckMCPRegistrar runs the contract every MCP registration keeps, with
// user holding a file the user wrote at the registrar's path before kk
// (in the layout the harness's own tools write), and want a piece of text
// the registration must put into the file:
//   - into a missing file: created, readable back, a second registration
//     changes nothing, unregistering removes the file;
//   - into the user's file: updated, and unregistering gives back the
//     user's bytes;
//   - a new command replaces the old one.
func CheckMCPRegistrar(t *testing.T, a harness.MCPRegistrar, user []byte, want string) {
	r := a.MCP()
	t.Helper()
	srv := harness.MCPServerFor("kk")
	file := r.ConfigFile()

	root := t.TempDir()
	path := filepath.Join(root, filepath.FromSlash(file))
	ch, err := r.Register(root, srv)
	if err != nil || !slices.Equal(ch, []harness.Change{{Path: file, Action: "created"}}) {
		t.Fatalf("register into a missing file: %v %v", ch, err)
	}
	data, err := os.ReadFile(path)
	if err != nil || !bytes.Contains(data, []byte(want)) {
		t.Fatalf("%s after registering: %v\n%s", file, err, data)
	}
	got, ok, err := r.Registered(root)
	if err != nil || !ok || got.String() != "kk mcp" {
		t.Fatalf("registered: %v %v %v", got, ok, err)
	}
	if ch, err := r.Register(root, srv); err != nil || len(ch) != 0 {
		t.Fatalf("second registration changed %v (%v)", ch, err)
	}
	if ch, err := r.Unregister(root); err != nil || !slices.Equal(ch, []harness.Change{{Path: file, Action: "removed"}}) {
		t.Fatalf("unregister: %v %v", ch, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("%s is still there after unregistering: %v", file, err)
	}
	if ch, err := r.Unregister(root); err != nil || len(ch) != 0 {
		t.Fatalf("unregistering twice: %v %v", ch, err)
	}
	if _, ok, err := r.Registered(root); ok || err != nil {
		t.Fatalf("registered after unregistering: %v %v", ok, err)
	}

	root = t.TempDir()
	path = filepath.Join(root, filepath.FromSlash(file))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, user, 0o644); err != nil {
		t.Fatal(err)
	}
	if ch, err := r.Register(root, srv); err != nil || !slices.Equal(ch, []harness.Change{{Path: file, Action: "updated"}}) {
		t.Fatalf("register into the user's file: %v %v", ch, err)
	}
	other := harness.MCPServerFor("/opt/kk/bin/kk --root .")
	if ch, err := r.Register(root, other); err != nil || len(ch) != 1 {
		t.Fatalf("register a new command: %v %v", ch, err)
	}
	if got, ok, err := r.Registered(root); err != nil || !ok || got.String() != "/opt/kk/bin/kk --root . mcp" {
		t.Fatalf("registered after the new command: %v %v %v", got, ok, err)
	}
	if ch, err := r.Unregister(root); err != nil || !slices.Equal(ch, []harness.Change{{Path: file, Action: "updated"}}) {
		t.Fatalf("unregister from the user's file: %v %v", ch, err)
	}
	if data, _ := os.ReadFile(path); !bytes.Equal(data, user) {
		t.Fatalf("unregistering did not give back the user's bytes:\n%s\nwant:\n%s", data, user)
	}
}
