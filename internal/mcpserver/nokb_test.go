package mcpserver

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// TestNoKnowledgeBaseUntilInit starts the server in a folder with no
// knowledge base: the session starts, tools and resources answer with
// store.Find's error (run kk init), and once the knowledge base exists the
// next call finds and uses it, with no restart.
func TestNoKnowledgeBaseUntilInit(t *testing.T) {
	root := filepath.Join(t.TempDir(), "proj")
	if err := os.MkdirAll(root, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	st, ct := mcp.NewInMemoryTransports()
	srv := NewFinding(func() (*store.KB, error) { return store.Find(root) }, Options{Version: "test"})
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close(); _ = ss.Wait() })
	if !strings.Contains(cs.InitializeResult().Instructions, "kk init") {
		t.Fatalf("instructions do not say what to run: %q", cs.InitializeResult().Instructions)
	}
	list, err := cs.ListTools(ctx, nil)
	if err != nil || len(list.Tools) != len(Tools()) {
		t.Fatalf("tools/list: %d tools, %v", len(list.Tools), err)
	}
	env := call(t, cs, "kk_search", map[string]any{"query": "auth"})
	wantCode(t, env, op.CodeConfig)
	if msg := env["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "no knowledge base found") || !strings.Contains(msg, "kk init") {
		t.Fatalf("message: %q", msg)
	}
	if _, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: EntryURI}); err == nil || !strings.Contains(err.Error(), "kk init") {
		t.Fatalf("kk://entry without a knowledge base: %v", err)
	}

	k := store.New(root)
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	if env := call(t, cs, "kk_entry", map[string]any{}); env["success"] != true {
		t.Fatalf("kk_entry after kk init: %v", env)
	}
	if res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: EntryURI}); err != nil || len(res.Contents) != 1 {
		t.Fatalf("kk://entry after kk init: %v %v", res, err)
	}
}
