package txn_test

import (
	"context"
	"os"
	"testing"

	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A transaction reads config.yaml once: the branch index it opens for the
// first time in the process (its default branch, its embedding provider)
// takes the transaction's reading, not a second one. Here config.yaml is
// made invalid after the transaction read it; a second reading would fail.
func TestTransactionReadsConfigOnce(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	fresh := store.New(k.Root) // no index handle opened yet in this value
	ctx := context.Background()
	_, err := txn.Update(ctx, fresh, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		if _, err := tx.Config(); err != nil {
			return err
		}
		if err := os.WriteFile(fresh.ConfigPath(), []byte("curationThreshold: [\n"), 0o644); err != nil {
			return err
		}
		_, err := tx.Tree()
		return err
	})
	if err != nil {
		t.Fatalf("the transaction read config.yaml again: %v", err)
	}
}
