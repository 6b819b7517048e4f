package index

import (
	"context"
	"fmt"
	"os"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/store"
)

// benchKB generates a 10k-leaf tree whose files are an hour old (outside
// the racy window, as a tree checked out earlier would be).
func benchKB(b *testing.B, n int) *store.KB {
	return benchKBWith(b, benchtree.Options{Nodes: n, Seed: 1})
}

func benchKBWith(b *testing.B, o benchtree.Options) *store.KB {
	b.Helper()
	k, err := benchtree.Generate(b.TempDir(), o)
	if err != nil {
		b.Fatal(err)
	}
	if err := benchtree.Age(k); err != nil {
		b.Fatal(err)
	}
	return k
}

func removeIndex(b *testing.B, path string) {
	for _, suffix := range []string{"", "-wal", "-shm"} {
		if err := os.Remove(path + suffix); err != nil && !os.IsNotExist(err) {
			b.Fatal(err)
		}
	}
}

// go test ./internal/index -run '^$' -bench . -benchtime 5x
func BenchmarkSyncCold10k(b *testing.B) {
	ctx := context.Background()
	k := benchKB(b, 10000)
	path := Path(k, "main")
	for b.Loop() {
		b.StopTimer()
		removeIndex(b, path)
		b.StartTimer()
		st, err := Sync(ctx, k, "main")
		if err != nil || st.Added != 10000 {
			b.Fatalf("%+v, %v", st, err)
		}
	}
}

func BenchmarkSyncNoChange10k(b *testing.B) {
	ctx := context.Background()
	k := benchKB(b, 10000)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	for b.Loop() {
		st, err := db.Sync(ctx, k.NodesDir())
		if err != nil || st.Unchanged != 10000 {
			b.Fatalf("%+v, %v", st, err)
		}
	}
}

// Open as a command would run it: open the database, sync (nothing
// changed), close.
func BenchmarkOpenSyncNoChange10k(b *testing.B) {
	ctx := context.Background()
	k := benchKB(b, 10000)
	if _, err := Sync(ctx, k, "main"); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := Sync(ctx, k, "main"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch10k searches leaves whose bodies use 56 words only, so
// every query word occurs in most of them: the worst case for ranking.
func BenchmarkSearch10k(b *testing.B) { benchSearch(b, benchKB(b, 10000)) }

// BenchmarkSearch10kNaturalText searches leaves whose bodies draw from a
// 5,000-word vocabulary with Zipf frequencies, as natural text does.
func BenchmarkSearch10kNaturalText(b *testing.B) {
	benchSearch(b, benchKBWith(b, benchtree.Options{Nodes: 10000, Seed: 1, Vocabulary: 5000}))
}

func benchSearch(b *testing.B, k *store.KB) {
	ctx := context.Background()
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	queries := []string{"cache timeout", "retry the queue worker", "schema validation error", "auth token", "search index sync"}
	for _, q := range queries {
		if hits, err := Search(ctx, db, q, 10); err != nil || len(hits) == 0 {
			b.Fatalf("%q: %d hits, %v", q, len(hits), err)
		}
	}
	i := 0
	for b.Loop() {
		if _, err := Search(ctx, db, queries[i%len(queries)], 10); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkSyncPaths10k is a kk serve job's index update: one leaf
// written, then SyncPaths with that leaf, as a transaction runs it.
func BenchmarkSyncPaths10k(b *testing.B) {
	ctx := context.Background()
	k := benchKB(b, 10000)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ex, err := ExtractionFor(k)
	if err != nil {
		b.Fatal(err)
	}
	l, err := store.ScanDir(ctx, k.NodesDir())
	if err != nil {
		b.Fatal(err)
	}
	rel := l.Files[len(l.Files)/2].Rel
	orig, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := os.WriteFile(k.NodePath(rel), fmt.Appendf(slices.Clone(orig), "\nEdit %d.\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		st, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{rel})
		if err != nil || st.Updated != 1 || st.Leaves != 10000 {
			b.Fatalf("%+v, %v", st, err)
		}
	}
}

// BenchmarkReadTree10k is a command's tree read (store.BenchmarkReadTree*
// was the leaf cache's): a new KB value each time, so the index is opened,
// synced (nothing changed) and the tree decoded from its leaf state.
func BenchmarkReadTree10k(b *testing.B) {
	k := benchKB(b, 10000)
	if _, err := ReadTree(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		k := store.New(k.Root)
		if _, err := ReadTree(context.Background(), k); err != nil {
			b.Fatal(err)
		}
		if err := k.Close(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReadTreeKept10k is the same read in a long-running process:
// one KB, whose index handle stays open and keeps the leaf state.
func BenchmarkReadTreeKept10k(b *testing.B) {
	k := benchKB(b, 10000)
	if _, err := ReadTree(context.Background(), k); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := ReadTree(context.Background(), k); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTreeAfterWrite10k is a kk serve job's tree read: the job
// before it wrote one leaf (synced by SyncPaths, untimed), then this one
// syncs (a stat per leaf; the written leaf is too recent to trust by its
// stat, so it is read again) and takes the tree. The handle patches the
// tree it kept by the folder that changed and hands out a copy;
// BenchmarkTreeAfterWriteAssembled10k is the same read when the handle
// keeps no tree and assembles every leaf from the leaf state.
func BenchmarkTreeAfterWrite10k(b *testing.B) { benchTreeAfterWrite(b, true) }

func BenchmarkTreeAfterWriteAssembled10k(b *testing.B) { benchTreeAfterWrite(b, false) }

func benchTreeAfterWrite(b *testing.B, keep bool) {
	ctx := context.Background()
	k := benchKB(b, 10000)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	l, err := store.ScanDir(ctx, k.NodesDir())
	if err != nil {
		b.Fatal(err)
	}
	rel := l.Files[len(l.Files)/2].Rel
	orig, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		b.Fatal(err)
	}
	for range 2 { // a handle asked twice keeps the tree
		if _, _, err := db.Tree(ctx, k.NodesDir(), nil); err != nil {
			b.Fatal(err)
		}
	}
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		if err := os.WriteFile(k.NodePath(rel), fmt.Appendf(slices.Clone(orig), "\nEdit %d.\n", i), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{rel}); err != nil {
			b.Fatal(err)
		}
		if !keep {
			db.kept.Lock()
			db.kept.tree.s, db.kept.tree.snap, db.kept.asked = nil, nil, false // as a handle asked once
			db.kept.Unlock()
		}
		b.StartTimer()
		t, _, err := db.Tree(ctx, k.NodesDir(), nil)
		if err != nil || len(t.Leaves) != 10000 {
			b.Fatalf("%v", err)
		}
	}
}
