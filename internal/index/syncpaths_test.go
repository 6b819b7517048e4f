package index

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// SyncPaths reads only the leaves a writer names and leaves the index as a
// full sync would; a leaf edited by hand meanwhile is left for the next
// sync, which finds it because its stat no longer matches the cache; a
// fast sync right after trusts the written leaves by their hash.
func TestSyncPaths(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil { // records the stat cache
		t.Fatal(err)
	}

	// The writer's changes: one leaf added, one edited, one removed. And
	// an edit by hand the writer knows nothing of.
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue."))
	writeLeaf(t, k, "cache/render-cache.md", leaf("practice-render-cache", "Render cache", "Cache tags", []string{"cache"}, "", "Use bubbling metadata."))
	if err := os.Remove(k.NodePath("auth/login-flow.md")); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "auth/session-tokens.md", leaf("practice-session-tokens", "Session tokens", "edited by hand", []string{"auth"}, "", "Rotated by the mango job."))
	past := time.Now().Add(-10 * time.Minute)
	if err := os.Chtimes(k.NodePath("auth/session-tokens.md"), past, past); err != nil {
		t.Fatal(err)
	}

	st, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{"jobs/queue.md", "cache/render-cache.md", "auth/login-flow.md"})
	if err != nil {
		t.Fatal(err)
	}
	if st.Added != 1 || st.Updated != 1 || st.Removed != 1 || st.Leaves != 3 || st.Gen == "" {
		t.Fatalf("SyncPaths: %+v; want 1 added, 1 updated, 1 removed, 3 leaves", st)
	}
	if hits, _ := holders(ctx, db, "bubbling", 5); !slices.Equal(ids(hits), []string{"practice-render-cache"}) {
		t.Errorf("the written leaf is not searchable: %v", ids(hits))
	}
	if hits, _ := holders(ctx, db, "mango", 5); len(hits) != 0 {
		t.Errorf("SyncPaths read a leaf it was not given: %v", ids(hits))
	}

	// The next sync finds the hand edit (its stat differs from the cache).
	// (The leaves are aged first, out of the racy window of this sync, as
	// they are two seconds after a write.)
	age(t, k, "jobs/queue.md", "cache/render-cache.md")
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil || st.Updated != 1 {
		t.Fatalf("sync after SyncPaths: %+v, %v; want the hand edit updated", st, err)
	}
	if hits, _ := holders(ctx, db, "mango", 5); len(hits) != 1 {
		t.Errorf("the hand edit is not indexed after the next sync: %v", ids(hits))
	}

	// Right after a write, a sync answers from the cache, checking the
	// written leaf by its hash; a racy same-size edit of it is caught.
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue!"))
	if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{"jobs/queue.md"}); err != nil {
		t.Fatal(err)
	}
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil || st.Changed() || st.Unchanged != 3 {
		t.Fatalf("sync right after SyncPaths: %+v, %v; want every leaf unchanged (from the cache)", st, err)
	}
	fi, _ := os.Stat(k.NodePath("jobs/queue.md"))
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the kiwis"))
	if err := os.Chtimes(k.NodePath("jobs/queue.md"), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil || st.Updated != 1 {
		t.Fatalf("a same-size edit with the same mtime right after SyncPaths: %+v, %v; want 1 updated", st, err)
	}
	if hits, _ := holders(ctx, db, "kiwis", 5); len(hits) != 1 {
		t.Errorf("the racy edit is not indexed: %v", ids(hits))
	}

	// Without a stat cache SyncPaths is a full sync.
	if err := os.Remove(db.statCachePath()); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "jobs/other.md", leaf("map-other", "Other", "o", nil, "", "papaya"))
	if st, err := db.SyncPaths(ctx, k.NodesDir(), nil, nil); err != nil || st.Added != 1 {
		t.Fatalf("SyncPaths without a stat cache: %+v, %v; want the full sync's 1 added", st, err)
	}
}

// paddedKB is seedKB with n more leaves (old ones), so that the stat
// cache's base has room for several patches before it is rewritten.
func paddedKB(t *testing.T, n int) *store.KB {
	k := seedKB(t)
	for i := range n {
		rel := fmt.Sprintf("filler/practice-filler-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-filler-%d", i), fmt.Sprintf("Filler %d", i), "d", nil, "", "Filler."))
		age(t, k, rel)
	}
	return k
}

// openPadded opens the index of paddedKB(t, n), with the extraction a
// transaction syncs with.
func openPadded(t *testing.T, n int) (*store.KB, *DB, *Extraction) {
	t.Helper()
	k := paddedKB(t, n)
	db, _, err := Open(context.Background(), k, "main")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	ex, err := ExtractionFor(k)
	if err != nil {
		t.Fatal(err)
	}
	return k, db, ex
}

// keptCache returns the stat cache db keeps.
func keptCache(db *DB) *statCache {
	db.stat.Lock()
	defer db.stat.Unlock()
	return db.stat.c
}

// cacheDiff tells how stat cache a differs from b; "" when it does not.
func cacheDiff(a, b *statCache) string {
	switch {
	case a == nil || b == nil:
		return fmt.Sprintf("a cache is missing: %v, %v", a, b)
	case a.gen != b.gen:
		return fmt.Sprintf("gen %s, want %s", a.gen, b.gen)
	case a.synced != b.synced:
		return fmt.Sprintf("synced %d, want %d", a.synced, b.synced)
	case a.extract != b.extract || a.entities != b.entities || a.edges != b.edges:
		return fmt.Sprintf("extract %t %d %d, want %t %d %d", a.extract, a.entities, a.edges, b.extract, b.entities, b.edges)
	case !maps.Equal(a.leaves, b.leaves):
		return fmt.Sprintf("leaves %v, want %v", a.leaves, b.leaves)
	case !maps.Equal(a.sources, b.sources) || !slices.Equal(a.problems, b.problems):
		return fmt.Sprintf("sources %v %v, want %v %v", a.sources, a.problems, b.sources, b.problems)
	}
	return ""
}

// patchBlocks reads the stat cache file at path and counts its patches.
func patchBlocks(t *testing.T, path string) ([]byte, int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data, strings.Count(string(data), "\npatch\t")
}

// TestSyncPathsAppendsToStatCache: each SyncPaths appends a patch to the
// stat cache file instead of rewriting it, and the file read back is the
// cache the writer keeps; another handle's sync is answered from it.
func TestSyncPathsAppendsToStatCache(t *testing.T) {
	ctx := context.Background()
	k, db, ex := openPadded(t, 20)
	path := db.statCachePath()
	base, _ := patchBlocks(t, path)
	steps := []struct {
		name, rel string
		do        func()
	}{
		{"added", "jobs/queue.md", func() {
			writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue."))
		}},
		{"changed", "auth/login-flow.md", func() {
			writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", "The kumquat form."))
		}},
		{"removed", "cache/render-cache.md", func() { _ = os.Remove(k.NodePath("cache/render-cache.md")) }},
	}
	for i, s := range steps {
		s.do()
		st, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{s.rel})
		if err != nil || st.Added+st.Updated+st.Removed != 1 {
			t.Fatalf("%s: SyncPaths = %+v, %v", s.name, st, err)
		}
		data, blocks := patchBlocks(t, path)
		if !bytes.HasPrefix(data, base) || blocks != i+1 {
			t.Fatalf("%s: the stat cache was rewritten, or has not one more patch:\n%s", s.name, data)
		}
		got := readStatCache(path)
		if d := cacheDiff(got, keptCache(db)); d != "" || got.gen != st.Gen {
			t.Fatalf("%s: the file read back differs from the kept cache: %s (gen %s)", s.name, d, st.Gen)
		}
	}
	c := readStatCache(path)
	if _, ok := c.leaves["cache/render-cache.md"]; ok || c.leaves["jobs/queue.md"].sha == "" || c.leaves["auth/login-flow.md"].sha == "" || len(c.leaves) != 23 {
		t.Fatalf("leaves read back: %v", c.leaves)
	}

	// Another process's handle syncs from the file: no write.
	before, _ := db.Meta(ctx, "last_sync")
	b, st, err := Open(ctx, k, "main")
	if err != nil || st.Changed() || st.Unchanged != 23 {
		t.Fatalf("another handle's sync: %+v, %v", st, err)
	}
	defer func() { _ = b.Close() }()
	if after, _ := b.Meta(ctx, "last_sync"); after != before {
		t.Fatal("another handle's sync wrote the database (the patched stat cache was not used)")
	}
	if hits, _ := holders(ctx, b, "kumquat", 5); !slices.Equal(ids(hits), []string{"map-login-flow"}) {
		t.Fatalf("kumquat: %v", ids(hits))
	}
}

// TestStatCacheTornPatch: a last patch that is torn (a write in progress,
// a crash) or damaged is not applied: the reader gets the generation
// before it, which is not the database's, and the next sync takes the
// full path.
func TestStatCacheTornPatch(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(data []byte) []byte
	}{
		{"cut in the middle", func(d []byte) []byte {
			last := bytes.LastIndex(d, []byte("\npatch\t"))
			return d[:(last+len(d))/2]
		}},
		{"no end line", func(d []byte) []byte {
			return d[:bytes.LastIndex(d, []byte("\nend\t"))+1]
		}},
		{"an end of another generation", func(d []byte) []byte {
			d[bytes.LastIndex(d, []byte("\nend\t"))+5] = 'x'
			return d
		}},
		{"a byte changed", func(d []byte) []byte {
			i := bytes.LastIndex(d, []byte("\nH\t")) + 3 // the leaf's size
			if d[i] == '1' {
				d[i] = '2'
			} else {
				d[i] = '1'
			}
			return d
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			k, db, ex := openPadded(t, 20)
			writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue."))
			st1, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{"jobs/queue.md"})
			if err != nil {
				t.Fatal(err)
			}
			writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", "The kumquat form."))
			st2, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{"auth/login-flow.md"})
			if err != nil {
				t.Fatal(err)
			}
			path := db.statCachePath()
			data, blocks := patchBlocks(t, path)
			if blocks != 2 {
				t.Fatalf("%d patches, want 2:\n%s", blocks, data)
			}
			if err := os.WriteFile(path, tc.damage(data), 0o644); err != nil {
				t.Fatal(err)
			}
			if c := readStatCache(path); c == nil || c.gen != st1.Gen || c.gen == st2.Gen || c.file != nil {
				t.Fatalf("read %+v; want the first patch's generation %s, and no file to append to", c, st1.Gen)
			}
			// Another handle's sync takes the full path, and is right.
			before, _ := db.Meta(ctx, "last_sync")
			b, st, err := Open(ctx, k, "main")
			if err != nil || st.Changed() || st.Leaves != 24 {
				t.Fatalf("another handle's sync: %+v, %v", st, err)
			}
			defer func() { _ = b.Close() }()
			if after, _ := b.Meta(ctx, "last_sync"); after == before {
				t.Fatal("the sync after a damaged patch did not take the full path")
			}
			if hits, _ := holders(ctx, b, "kumquat", 5); !slices.Equal(ids(hits), []string{"map-login-flow"}) {
				t.Fatalf("kumquat: %v", ids(hits))
			}
		})
	}
}
