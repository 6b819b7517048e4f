package indexfiles_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/benchtree/benchkb"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
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

// BenchmarkRebuildNoChange10k is kk index rebuild with nothing to do, as a
// command runs it: a new KB value each time (nothing kept in memory).
func BenchmarkRebuildNoChange10k(b *testing.B) {
	k := benchkb.Cached(b, 10000)
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	benchkb.Settle()
	for b.Loop() {
		res, err := txn.Rebuild(context.Background(), store.New(k.Root), txn.Meta{Command: "test"}, txn.RebuildOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if len(res.Changed) > 0 {
			b.Fatalf("no-change rebuild wrote %v", res.Changed)
		}
	}
}

// BenchmarkWrite10k writes one new leaf per operation into a tree of
// 10,000 (the whole store transaction: tree read, index files, branch
// index, audit), with a new KB value per write as a command does (Cold)
// and with one KB value kept, as kk serve and kk mcp do (Kept). The tree
// is a copy of its own: the writes change it.
func BenchmarkWrite10k(b *testing.B) {
	for _, kept := range []bool{false, true} {
		name := "Cold"
		if kept {
			name = "Kept"
		}
		b.Run(name, func(b *testing.B) {
			k, err := benchtree.Generate(filepath.Join(b.TempDir(), "kb"), benchtree.Options{Nodes: 10000, Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "bench"}, txn.RebuildOptions{}); err != nil {
				b.Fatal(err)
			}
			tags := []string{"api", "cache", "release", "bench"}
			write := func(k *store.KB, i int) {
				in := contracts.NodeInput{Type: "practice", Title: fmt.Sprintf("Bench write %d", i), Description: "d",
					Tags: []string{tags[i%len(tags)]}, Folder: "inbox", Body: "body\n"}
				if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Mode: curate.Create}); err != nil {
					b.Fatal(err)
				}
			}
			if kept { // the first generation of a KB keeps nothing
				write(k, 1_000_001)
				write(k, 1_000_002)
			}
			benchkb.Settle()
			i := 0
			for b.Loop() {
				kb := k
				if !kept {
					kb = store.New(k.Root)
				}
				write(kb, i)
				i++
			}
		})
	}
}
