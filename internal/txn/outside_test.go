package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// A change made by another program inside a transaction (Outside) is
// what the transaction then reads and generates from; one after the
// transaction has read the tree is refused.
func TestOutside(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	in := contracts.NodeInput{Type: "practice", Title: "Pulled from elsewhere", Description: "d", Body: "b", Folder: "f"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	leaf := k.NodePath("f/practice-pulled-from-elsewhere.md")
	data, err := os.ReadFile(leaf)
	if err != nil {
		t.Fatal(err)
	}
	moved := k.NodePath("g/practice-pulled-from-elsewhere.md")
	res, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		if err := tx.Outside(func() error {
			if err := os.MkdirAll(filepath.Dir(moved), 0o755); err != nil {
				return err
			}
			if err := os.WriteFile(moved, data, 0o644); err != nil {
				return err
			}
			return os.RemoveAll(filepath.Dir(leaf))
		}); err != nil {
			return err
		}
		tx.Regenerate()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	graph, err := os.ReadFile(filepath.Join(k.Dir, "GRAPH.md"))
	if err != nil || !strings.Contains(string(graph), "g/practice-pulled-from-elsewhere.md") {
		t.Fatalf("GRAPH.md does not follow the outside change (%v)", err)
	}
	if len(res.Written) == 0 {
		t.Error("the regenerated index files are not in the result")
	}

	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		if _, err := tx.Tree(); err != nil {
			return err
		}
		return tx.Outside(func() error { t.Error("ran after the tree was read"); return nil })
	})
	if err == nil || !strings.Contains(err.Error(), "before the transaction reads") {
		t.Fatalf("err = %v, want the refusal", err)
	}
}
