package store_test

import (
	"context"
	"testing"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/workpool"
)

// BenchmarkReadTreeCold10k reads and parses every leaf: the reference a
// read through the branch index (index.BenchmarkReadTree10k) is compared
// with.
func BenchmarkReadTreeCold10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	for b.Loop() {
		if _, err := k.ReadTree(store.LoadOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScanDir10k is the walk every sync makes: each folder read once,
// its leaves stat'ed relative to it, a level of folders at a time on
// every core (workpool). BenchmarkScanDir10kOneWorker is the same walk on
// one goroutine: what the parallel walk saves.
func BenchmarkScanDir10k(b *testing.B) { benchScan(b, 0) }

func BenchmarkScanDir10kOneWorker(b *testing.B) { benchScan(b, 1) }

func benchScan(b *testing.B, workers int) {
	k := benchkb.Cached(b, 10000)
	workpool.Limit(workers)
	defer workpool.Limit(0)
	for b.Loop() {
		if _, err := store.ScanDir(context.Background(), k.NodesDir()); err != nil {
			b.Fatal(err)
		}
	}
}
