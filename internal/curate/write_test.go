package curate

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/contracts"
)

func newTestKB(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Unix(0, 0), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return k
}

// Writers in one process serialise on the flock too (each Acquire opens
// its own file description), so concurrent writes lose nothing.
func TestWriteNodeConcurrent(t *testing.T) {
	k := newTestKB(t)
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Node %d", i), Description: "d", Tags: []string{"t"}, Folder: fmt.Sprintf("f%d", i%3), Body: "b\n"}
			if _, err := WriteNode(context.Background(), k, in, WriteOptions{Mode: Create}); err != nil {
				t.Error(err)
			}
		}()
	}
	wg.Wait()
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.Leaves) != 8 {
		t.Fatalf("%d leaves, want 8", len(tr.Leaves))
	}
	res, err := indexfiles.Check(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed)+len(res.Removed) != 0 || res.NodeCount != 8 {
		t.Fatalf("index not consistent after concurrent writes: %+v", res)
	}
}

func TestWriteNodeModes(t *testing.T) {
	k := newTestKB(t)
	ctx := context.Background()
	in := contracts.NodeInput{Type: "map", Title: "Clients", Description: "d", Body: "b"}
	if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Create}); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Create}); err == nil || !strings.Contains(err.Error(), "duplicate id map-clients") {
		t.Fatalf("duplicate create: %v", err)
	}
	res, err := WriteNode(ctx, k, in, WriteOptions{Mode: Unique})
	if err != nil || res.ID != "map-clients-2" {
		t.Fatalf("unique: %+v %v", res, err)
	}
	in.Folder = "moved"
	in.Description = "new"
	res, err = WriteNode(ctx, k, in, WriteOptions{Mode: Update})
	if err != nil || res.Action != "updated" || res.Path != ".ai/kenkeep/nodes/moved/map-clients.md" {
		t.Fatalf("update: %+v %v", res, err)
	}
	if _, err := os.Stat(k.NodePath("map-clients.md")); !os.IsNotExist(err) {
		t.Fatal("the old file of a moved node is still there")
	}
	// --update creates the node when the id is new.
	in.Type, in.Title, in.Folder = "practice", "Fresh", ""
	res, err = WriteNode(ctx, k, in, WriteOptions{Mode: Update})
	if err != nil || res.Action != "created" || res.ID != "practice-fresh" {
		t.Fatalf("update of a new id: %+v %v", res, err)
	}
}

func TestInitIdempotentAndGitignoreMerge(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.Dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.GitignorePath(), []byte("my-own\n_sessions/\nhooks/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := txn.Init(ctx, k, store.InitOptions{Version: "1", Now: time.Unix(0, 0)})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Created) == 0 {
		t.Fatal("nothing created")
	}
	gi, _ := os.ReadFile(k.GitignorePath())
	if want := "/_sessions/\n/_logs/\n/hooks/\n.state/*\n!.state/installed-version\nmy-own\n"; string(gi) != want {
		t.Fatalf(".gitignore = %q", gi)
	}
	res, err = txn.Init(ctx, k, store.InitOptions{Version: "1", Now: time.Unix(99, 0)})
	if err != nil || !res.Unchanged {
		t.Fatalf("second init: %+v %v", res, err)
	}
	res, err = txn.Init(ctx, k, store.InitOptions{Version: "2", Now: time.Unix(99, 0), Upgrade: true})
	if err != nil || len(res.Updated) != 1 {
		t.Fatalf("upgrade to a new version: %+v %v", res, err)
	}
	in, _ := k.ReadInstalled()
	if in.Version != "2" {
		t.Fatalf("installed version %q", in.Version)
	}
}

// An edge to a retired id links to its successor's path when the leaf is
// written again, as it does after a rebalance.
func TestWriteNodeLinksThroughRedirects(t *testing.T) {
	k := newTestKB(t)
	ctx := context.Background()
	succ := contracts.NodeInput{Type: "map", Title: "Successor", Description: "d", Folder: "new", Body: "b"}
	if _, err := WriteNode(ctx, k, succ, WriteOptions{Mode: Create}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.RedirectsPath(), []byte("{\n  \"map-retired\": [\n    \"map-successor\"\n  ]\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	in := contracts.NodeInput{Type: "practice", Title: "Linker", Description: "d", RelatesTo: []string{"map-retired"}, Body: "b"}
	if _, err := WriteNode(ctx, k, in, WriteOptions{Mode: Create}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(k.NodePath("practice-linker.md"))
	if !strings.Contains(string(data), "- Related: [map-retired](/new/map-successor.md)") {
		t.Fatalf("link not resolved through the redirect:\n%s", data)
	}
}

// List values are trimmed, as kenkeep's CLI trims them: --tags "a, b"
// stores the tag b, not " b".
func TestWriteNodeTrimsListValues(t *testing.T) {
	k := newTestKB(t)
	in := contracts.NodeInput{Type: "practice", Title: "Trimmed", Description: "d", Body: "b\n",
		Tags: []string{"a", " b ", "\tc"}, RelatesTo: []string{" map-x"}, DerivedFrom: []string{"docs/a.md "}}
	res, err := WriteNode(context.Background(), k, in, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, err := k.ReadLeaf(strings.TrimPrefix(res.Path, store.DirName+"/nodes/"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(n.Tags, "|") != "a|b|c" || strings.Join(n.RelatesTo, "|") != "map-x" || strings.Join(n.DerivedFrom, "|") != "docs/a.md" {
		t.Fatalf("tags %q relates_to %q derived_from %q", n.Tags, n.RelatesTo, n.DerivedFrom)
	}
	if _, err := WriteNode(context.Background(), k, contracts.NodeInput{Type: "practice", Title: "Blank tag", Description: "d", Body: "b", Tags: []string{"a", "  "}}, WriteOptions{}); err == nil {
		t.Fatal("a blank tag was accepted")
	}
}
