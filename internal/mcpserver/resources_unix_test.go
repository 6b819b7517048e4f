//go:build unix

package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestResourcesStayInTree: a folder index is read only when it is a
// regular file inside the knowledge tree. A folder linked out of the tree
// (which the tree's reader skips) is not read through, a FIFO named
// index.md would block the read for ever and a link to /dev/zero would
// never end: each is refused, with a message that does not show the
// repository's absolute path, and the session goes on.
func TestResourcesStayInTree(t *testing.T) {
	k := newKB(t)
	cs := connect(t, k)
	ctx := context.Background()
	outside := t.TempDir()
	if err := os.WriteFile(filepath.Join(outside, "index.md"), []byte("# outside\nTOKEN=secret\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	nodes := filepath.Dir(k.NodePath("x"))
	if err := os.Symlink(outside, filepath.Join(nodes, "ext")); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{"fifo", "zero"} {
		if err := os.MkdirAll(filepath.Join(nodes, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := syscall.Mkfifo(filepath.Join(nodes, "fifo", "index.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("/dev/zero", filepath.Join(nodes, "zero", "index.md")); err != nil {
		t.Fatal(err)
	}
	for _, uri := range []string{"kk://index/ext/index.md", "kk://index/fifo/index.md", "kk://index/zero/index.md"} {
		res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		if err == nil {
			t.Errorf("%s: read %.80q, want a refusal", uri, res.Contents[0].Text)
			continue
		}
		if strings.Contains(err.Error(), k.Root) {
			t.Errorf("%s: the error shows the repository's path: %v", uri, err)
		}
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: EntryURI}); err != nil {
		t.Fatalf("the session did not go on: %v", err)
	}
}

// TestEntryToolReadsOnlyAFile: the kk_entry tool read ENTRY.md whole, so
// one linked to /dev/zero (a broken or hostile checkout) grew the server
// past 16 GB without an answer, and a named pipe held the call for ever.
// Such an ENTRY.md is an INVARIANT_VIOLATION naming the file, at once, as
// the kk://entry resource already refused it.
func TestEntryToolReadsOnlyAFile(t *testing.T) {
	for name, make := range map[string]func(path string) error{
		"fifo":      func(p string) error { return syscall.Mkfifo(p, 0o600) },
		"/dev/zero": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			k := newKB(t)
			_ = os.Remove(k.EntryPath())
			if err := make(k.EntryPath()); err != nil {
				t.Fatal(err)
			}
			env := call(t, connect(t, k), "kk_entry", map[string]any{})
			wantCode(t, env, "INVARIANT_VIOLATION")
			if msg := env["error"].(map[string]any)["message"].(string); !strings.Contains(msg, ".ai/kenkeep/ENTRY.md is not a regular file") {
				t.Fatalf("message %q", msg)
			}
		})
	}
}
