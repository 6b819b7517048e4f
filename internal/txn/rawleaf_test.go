package txn_test

import (
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A leaf is staged as a node (Put), validated and versioned: WriteFile and
// RemoveFile of a leaf's path fail the transaction with nothing written,
// even with bytes that read as a valid leaf. The raw ways a leaf's file
// changes are named: MoveLeaf moves the file as it is (its bytes, so its
// version, unchanged), MigrateLeaf takes only bytes that read as a leaf.
func TestLeavesAreStagedAsNodes(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	in := contracts.NodeInput{Type: "practice", Title: "Wrap errors", Description: "d", Body: "b", Folder: "go"}
	w, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	rel := strings.TrimPrefix(w.Path, store.DirName+"/nodes/")
	valid, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	before := optest.TreeHash(t, k)
	for _, c := range []struct {
		name  string
		stage func(tx *txn.Tx) error
		want  string
	}{
		{"a leaf's bytes written over it", func(tx *txn.Tx) error { tx.WriteFile("nodes/"+rel, valid); return nil }, "WriteFile .ai/kenkeep/nodes/" + rel + ": a leaf is staged as a node"},
		{"a new leaf written as bytes", func(tx *txn.Tx) error { tx.WriteFile("nodes/go/copy.md", valid); return nil }, "WriteFile .ai/kenkeep/nodes/go/copy.md"},
		{"a leaf removed as a file", func(tx *txn.Tx) error { tx.RemoveFile("nodes/" + rel); return nil }, "RemoveFile .ai/kenkeep/nodes/" + rel + ": a leaf is removed with Remove"},
		{"a migration's bytes that are no leaf", func(tx *txn.Tx) error { return tx.MigrateLeaf(rel, rel, []byte("---\ntitle: x\n---\n")) }, "migrating .ai/kenkeep/nodes/" + rel + ": the converted leaf does not read back"},
		{"a move of no leaf", func(tx *txn.Tx) error { return tx.MoveLeaf("go/none.md", "go/other.md") }, "moving .ai/kenkeep/nodes/go/none.md: it is not a leaf of the tree"},
	} {
		_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, c.stage)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want an error saying %q", c.name, err, c.want)
		}
		if after := optest.TreeHash(t, k); after != before {
			t.Fatalf("%s: the knowledge base changed", c.name)
		}
	}

	res, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error { return tx.MoveLeaf(rel, "moved.md") })
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(k.NodePath("moved.md"))
	if err != nil || !bytes.Equal(got, valid) {
		t.Fatalf("the moved leaf is not the file as it was (%v):\n%s", err, got)
	}
	if _, err := os.Stat(k.NodePath(rel)); !os.IsNotExist(err) {
		t.Fatalf("the leaf's old file is still there: %v", err)
	}
	if idx, _ := os.ReadFile(k.NodePath("index.md")); !bytes.Contains(idx, []byte("Wrap errors")) {
		t.Errorf("the root index.md does not list the moved leaf:\n%s", idx)
	}
	if !strings.Contains(strings.Join(res.Removed, " "), "nodes/"+rel) {
		t.Errorf("removed %v; want nodes/%s among them", res.Removed, rel)
	}
}
