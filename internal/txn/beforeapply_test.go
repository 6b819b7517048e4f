package txn_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// BeforeApply hands over every path the changeset writes, the leaf and
// the regenerated index files, before any is written; its error ends the
// transaction with nothing written.
func TestBeforeApply(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	in := contracts.NodeInput{Type: "practice", Title: "Announce paths", Description: "d", Body: "b", Folder: "f"}
	var announced []string
	sawFile := true
	res, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		tx.BeforeApply(func(paths []string) error {
			announced = slices.Clone(paths)
			_, err := os.Stat(k.NodePath("f/practice-announce-paths.md"))
			sawFile = err == nil
			return nil
		})
		_, _, err := curate.WriteInTx(tx, in, curate.WriteOptions{Mode: curate.Create})
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	if sawFile {
		t.Error("the leaf was written before BeforeApply ran")
	}
	changed := append(slices.Clone(res.Written), res.Removed...)
	slices.Sort(changed)
	slices.Sort(announced)
	if !slices.Equal(announced, changed) || !slices.Contains(announced, "nodes/f/practice-announce-paths.md") || !slices.Contains(announced, "GRAPH.md") {
		t.Fatalf("announced %q, the changeset changed %q", announced, changed)
	}

	refuse := errors.New("no room in the job record")
	in.Title = "Never written"
	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		tx.BeforeApply(func([]string) error { return refuse })
		_, _, err := curate.WriteInTx(tx, in, curate.WriteOptions{Mode: curate.Create})
		return err
	})
	if !errors.Is(err, refuse) {
		t.Fatalf("err = %v, want BeforeApply's", err)
	}
	if _, err := os.Stat(k.NodePath("f/practice-never-written.md")); err == nil {
		t.Fatal("a transaction whose BeforeApply failed wrote its leaf")
	}
	if left, err := os.ReadDir(txn.JournalDir(k)); err == nil && len(left) > 0 {
		t.Fatalf("left in the journal folder: %v", left)
	}
}
