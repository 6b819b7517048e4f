package store_test

import (
	"testing"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/store"
)

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
