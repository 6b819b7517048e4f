package graph

import (
	"context"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
)

// benchGraphKB is a 10k-node tree: 5k atoms with 1–20 patterns each, 100
// molecules, the rest practices and maps without patterns.
func benchGraphKB(b *testing.B) *store.KB {
	b.Helper()
	k, err := benchtree.Generate(filepath.Join(b.TempDir(), "repo"), benchtree.Options{Nodes: 9900, Atoms: 5000, Molecules: 100, Seed: 7})
	if err != nil {
		b.Fatal(err)
	}
	if err := benchtree.Age(k); err != nil {
		b.Fatal(err)
	}
	return k
}

func benchPaths(n int) PathList {
	rng := rand.New(rand.NewPCG(11, 13))
	out := make(PathList, n)
	for i := range out {
		out[i] = benchtree.RepoPath(rng, 5000)
	}
	return out
}

// BenchmarkContext100 is query_graph context for 100 paths at 10k nodes,
// warm (the tree and its index read once before timing).
func BenchmarkContext100(b *testing.B) {
	k := benchGraphKB(b)
	ctx := context.Background()
	p := ContextParams{Paths: benchPaths(100)}
	if _, err := Context(ctx, k, p); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Context(ctx, k, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGet is query_graph get of one atom at 10k nodes, warm.
func BenchmarkGet(b *testing.B) {
	k := benchGraphKB(b)
	ctx := context.Background()
	r, err := Search(ctx, k, SearchParams{EntityType: KindAtom})
	if err != nil {
		b.Fatal(err)
	}
	g := GetParams{EntityType: KindAtom, ID: r.Atoms[0].ID}
	b.ResetTimer()
	for b.Loop() {
		if _, err := Get(ctx, k, g); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkContext100Resync is BenchmarkContext100 with the tree's files
// stat'ed on every call, as each command-line run does: each call is
// preceded by a sync that trusts no earlier look (the call's own sync then
// finds it just done).
func BenchmarkContext100Resync(b *testing.B) {
	k := benchGraphKB(b)
	ctx := context.Background()
	p := ContextParams{Paths: benchPaths(100)}
	if _, err := Context(ctx, k, p); err != nil {
		b.Fatal(err)
	}
	db, err := BranchIndex(ctx, k)
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	b.ResetTimer()
	for b.Loop() {
		if _, err := syncWithin(ctx, k, db, 0); err != nil {
			b.Fatal(err)
		}
		if _, err := Context(ctx, k, p); err != nil {
			b.Fatal(err)
		}
	}
}
