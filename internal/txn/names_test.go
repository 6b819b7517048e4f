package txn_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A write that creates a folder (or a leaf file) a Windows clone could
// not check out, or whose index links would break, is refused naming the
// folder and why, whichever face wrote it; nothing is written.
func TestNewFolderNamesMustBePortable(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	before := optest.TreeHash(t, k)
	for _, c := range []struct{ path, want string }{
		{"CON/practice-x.md", `folder "CON": CON is a device name on Windows`},
		{"ok/nul.txt/practice-x.md", `folder "ok/nul.txt": nul.txt is a device name on Windows`},
		{"Com1/practice-x.md", `folder "Com1": Com1 is a device name`},
		{"a b/practice-x.md", `folder "a b": a b holds a space`},
		{"trail./practice-x.md", `folder "trail.": trail. ends with a dot`},
	} {
		n := newLeaf("practice-x", "X", "b\n")
		n.Path = c.path
		_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
			tx.Put(n)
			return nil
		})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.path, err, c.want)
		}
		if optest.TreeHash(t, k) != before {
			t.Fatalf("%s: the tree changed", c.path)
		}
	}
	// A leaf file named as a device: an id kept as a writer gave it.
	n := newLeaf("practice-x", "X", "b\n")
	n.Type, n.ID, n.Path = "adr", "aux", "decisions/aux.md"
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error { tx.Put(n); return nil }); err == nil || !strings.Contains(err.Error(), "aux.md is a device name on Windows") {
		t.Errorf("decisions/aux.md: error %v", err)
	}
}

// A tree that already holds such a folder is read, and written into: the
// folder is there already, and kk does not create it.
func TestExistingUnportableFolderStaysUsable(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	if err := os.MkdirAll(k.NodePath("a b"), 0o755); err != nil {
		t.Fatal(err)
	}
	leaf := "---\ntype: practice\ntitle: Hand\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-hand\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n\nBody.\n"
	if err := os.WriteFile(k.NodePath("a b/practice-hand.md"), []byte(leaf), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := tree.ByID("practice-hand"); !ok {
		t.Fatal("the leaf in a b/ was not read")
	}
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		n := newLeaf("practice-new", "New", "b\n")
		n.Path = "a b/practice-new.md"
		tx.Put(n)
		h, err := tx.LeafAt("a b/practice-hand.md")
		if err != nil {
			return err
		}
		h.Status = "stable"
		tx.Put(h)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// A move (kk rebalance) into such a folder is refused too.
func TestMoveIntoUnportableFolderIsRefused(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error { tx.Put(newLeaf("practice-x", "X", "b\n")); return nil }); err != nil {
		t.Fatal(err)
	}
	before := optest.TreeHash(t, k)
	_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		return tx.MoveLeaf("t/practice-x.md", "t/lpt1/practice-x.md")
	})
	if err == nil || !strings.Contains(err.Error(), `folder "t/lpt1": lpt1 is a device name on Windows`) {
		t.Fatalf("error %v", err)
	}
	if optest.TreeHash(t, k) != before {
		t.Fatal("the tree changed")
	}
}
