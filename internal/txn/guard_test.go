package txn_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// The symlink guard of a leaf write resolves nodes/ once per transaction,
// not once per leaf: a changeset of many leaves (a rebalance, a pack
// import, kb_upsert of 1000 entities) walked the links of nodes/ for each.
// Not parallel: it counts through a package variable.
func TestLeafGuardResolvesNodesOncePerTransaction(t *testing.T) {
	k := optest.NewKB(t)
	ctx := context.Background()
	stop := txn.CountNodesResolutions(k.NodesDir())
	_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		for i := range 6 {
			in := contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Leaf %d", i), Description: "d", Body: "b", Folder: fmt.Sprintf("f%d", i%2)}
			if _, _, err := curate.WriteInTx(tx, in, curate.WriteOptions{}); err != nil {
				return err
			}
		}
		return nil
	})
	n := stop()
	if err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("nodes/ resolved %d times for 6 leaves; want once", n)
	}
}
