package indexfiles_test

import (
	"context"
	"testing"

	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func BenchmarkGenerate10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
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
	k := benchkb.Cached(b, 10000)
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkb.Settle()
	for b.Loop() {
		res, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changed) > 0 {
			b.Fatalf("no-change rebuild wrote %v", res.Changed)
		}
	}
}
