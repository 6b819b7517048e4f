package indexfiles_test

import (
	"context"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
)

func BenchmarkGenerate10k(b *testing.B) {
	k := benchtree.Cached(b, 10000)
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		b.Fatal(err)
	}
	s, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := indexfiles.Generate(t, s); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRebuildNoChange10k(b *testing.B) {
	k := benchtree.Cached(b, 10000)
	if _, err := indexfiles.Rebuild(context.Background(), k, indexfiles.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	benchtree.Settle()
	for b.Loop() {
		res, err := indexfiles.Rebuild(context.Background(), k, indexfiles.RebuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changed) > 0 {
			b.Fatalf("no-change rebuild wrote %v", res.Changed)
		}
	}
}
