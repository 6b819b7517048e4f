package store_test

import (
	"testing"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/store"
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
