// Package benchkb hands benchmarks of any package a generated knowledge
// base with its index files built (benchtree's trees, through the store
// transaction).
package benchkb

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Cached returns a knowledge base of n generated leaves (seed 1) with its
// index files built, generating it once per n in the temporary folder so
// that benchmarks of several packages share it.
func Cached(tb testing.TB, n int) *store.KB {
	tb.Helper()
	dir := filepath.Join(os.TempDir(), "kk-bench-"+strconv.Itoa(n))
	k := store.New(dir)
	if _, err := os.Stat(k.EntryPath()); err != nil {
		_ = os.RemoveAll(dir)
		if _, err := benchtree.Generate(dir, benchtree.Options{Nodes: n, Seed: 1}); err != nil {
			tb.Fatal(err)
		}
		if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "bench"}, txn.RebuildOptions{}); err != nil {
			tb.Fatal(err)
		}
	}
	return k
}

// Settle waits until files written during setup are older than the caches'
// racy window (store.RacyWindow), as they are for every command but the
// first after a write; otherwise a benchmark would measure the re-check of
// "racily clean" files.
func Settle() { time.Sleep(store.RacyWindow + 100*time.Millisecond) }
