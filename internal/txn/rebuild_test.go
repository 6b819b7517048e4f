package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// A rebuild that finds the generated files already current records the
// generation cache, so the next rebuild skips generating: without it,
// every "nothing to do" rebuild of a fresh clone renders the whole tree
// again.
func TestRebuildWithNothingToWriteRecordsTheGenerationCache(t *testing.T) {
	k := optest.NewKB(t)
	ctx := context.Background()
	for _, title := range []string{"One", "Two"} {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b", Folder: "f"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(k.StateDir(), "index.cache")
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	res, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 {
		t.Fatalf("the generated files were current, yet %v changed", res.Changed)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("a rebuild with nothing to write left no generation cache: %v", err)
	}
}
