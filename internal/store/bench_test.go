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

// BenchmarkReadTreeCached10k is a command's first read: a new KB value
// each time, so the leaf cache file is decoded.
func BenchmarkReadTreeCached10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	if _, err := k.ReadTree(store.LoadOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkb.Settle()
	for b.Loop() {
		if _, err := store.New(k.Root).ReadTree(store.LoadOptions{NoSave: true}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTreeKept10k is a long-running process's read: one KB value,
// whose memo keeps the leaf cache (every leaf is still stat'ed).
func BenchmarkReadTreeKept10k(b *testing.B) {
	k := store.New(benchkb.Cached(b, 10000).Root)
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
