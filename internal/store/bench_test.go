package store_test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// benchKB generates (once per size) a synthetic knowledge base with an
// up-to-date index, and returns it.
func benchKB(b *testing.B, n int) *store.KB {
	b.Helper()
	dir := filepath.Join(os.TempDir(), "kk-bench-"+strconv.Itoa(n))
	k := store.New(dir)
	if _, err := os.Stat(k.EntryPath()); err != nil {
		os.RemoveAll(dir)
		if _, err := benchtree.Generate(dir, benchtree.Options{Nodes: n, Seed: 1}); err != nil {
			b.Fatal(err)
		}
		if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	return k
}

// settle waits until files written during setup are older than the
// caches' racy window, as they are for every command but the first after a
// write; otherwise the benchmark would measure the re-check of "racily
// clean" files.
func settle() { time.Sleep(2100 * time.Millisecond) }

func BenchmarkReadTreeCold10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	for b.Loop() {
		if _, err := k.ReadTree(store.LoadOptions{NoCache: true, NoSave: true}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReadTreeCached10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	if _, err := k.ReadTree(store.LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkb.Settle()
	for b.Loop() {
		if _, err := k.ReadTree(store.LoadOptions{NoSave: true}); err != nil {
			b.Fatal(err)
		}
	}
}
