package index

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestStatCache checks that a sync of an unchanged tree is answered from
// the stat cache without writing the database, and that any change, a
// stale generation or a damaged cache falls back to the full sync.
func TestStatCache(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ex, err := ExtractionFor(k)
	if err != nil {
		t.Fatal(err)
	}
	// The first sync wrote synced_at_ns just now; the leaves are an hour old.
	lastSync := func() string {
		t.Helper()
		v, err := db.Meta(ctx, "last_sync")
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	if _, err := os.Stat(db.statCachePath()); err != nil {
		t.Fatalf("no stat cache after a sync: %v", err)
	}
	before := lastSync()
	time.Sleep(5 * time.Millisecond)
	st, err := db.SyncWith(ctx, k.NodesDir(), ex)
	if err != nil || st.Unchanged != 3 || st.Leaves != 3 || st.Changed() {
		t.Fatalf("unchanged sync = %+v, %v", st, err)
	}
	if lastSync() != before {
		t.Fatal("a sync of an unchanged tree wrote the database (the stat cache was not used)")
	}

	// An edit is seen.
	writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow v2", "Pages and handlers of the login", []string{"auth"}, "", "Changed."))
	age(t, k, "auth/login-flow.md")
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("edit: %+v, %v", st, err)
	}
	// A removed leaf is seen.
	if err := os.Remove(k.NodePath("cache/render-cache.md")); err != nil {
		t.Fatal(err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Removed != 1 || st.Leaves != 2 {
		t.Fatalf("removal: %+v, %v", st, err)
	}

	// A cache of another generation is not trusted: after a leaf changes
	// behind an old cache's back, the sync still sees it.
	old, err := os.ReadFile(db.statCachePath())
	if err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "auth/session-tokens.md", leaf("practice-session-tokens", "Session tokens v2", "d", nil, "", "b"))
	age(t, k, "auth/session-tokens.md")
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("edit: %+v, %v", st, err)
	}
	if err := os.WriteFile(db.statCachePath(), old, 0o644); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "auth/session-tokens.md", leaf("practice-session-tokens", "Session tokens v1", "d", nil, "", "b"))
	age(t, k, "auth/session-tokens.md")
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("stale cache: %+v, %v", st, err)
	}

	// A damaged cache only costs the full sync.
	if err := os.WriteFile(db.statCachePath(), []byte("kk-stat-cache 1\ngarbage\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Unchanged != 2 || st.Changed() {
		t.Fatalf("damaged cache: %+v, %v", st, err)
	}
	if c := readStatCache(db.statCachePath()); c == nil || len(c.leaves) != 2 {
		t.Fatalf("the full sync did not rewrite the cache: %+v", c)
	}
}

// TestBulkSyncKeepsSearch: a sync of many files rebuilds the full-text
// table in one pass; search then finds every leaf, and later small syncs
// (row by row again) keep it current.
func TestBulkSyncKeepsSearch(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	var rels []string
	for i := range bulkRows + 20 {
		rel := fmt.Sprintf("bulk/practice-item-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-item-%d", i), fmt.Sprintf("Item %d", i), "d", nil, "", fmt.Sprintf("Body word%d here.", i)))
		rels = append(rels, rel)
	}
	age(t, k, rels...)
	db, st, err := Open(ctx, k, "main")
	if err != nil || st.Added != bulkRows+20 {
		t.Fatalf("first sync: %+v, %v", st, err)
	}
	defer func() { _ = db.Close() }()
	for _, q := range []string{"word0", fmt.Sprintf("word%d", bulkRows+19)} {
		if hits, err := holders(ctx, db, q, 5); err != nil || len(hits) != 1 {
			t.Fatalf("%s after the bulk sync: %v, %v", q, ids(hits), err)
		}
	}
	writeLeaf(t, k, rels[3], leaf("practice-item-3", "Item 3", "d", nil, "", "Body replaced."))
	age(t, k, rels[3])
	if st, err := db.Sync(ctx, k.NodesDir()); err != nil || st.Updated != 1 {
		t.Fatalf("small sync: %+v, %v", st, err)
	}
	if hits, _ := holders(ctx, db, "word3", 5); len(hits) != 0 {
		t.Fatalf("word3 still found after the edit: %v", ids(hits))
	}
	if hits, _ := holders(ctx, db, "replaced", 5); len(hits) != 1 || hits[0].ID != "practice-item-3" {
		t.Fatalf("the edit is not searchable: %v", ids(hits))
	}
}

// TestKeptStatCacheFollowsOtherSyncs: a handle keeps the stat cache it
// wrote, and must drop it once another handle (another process) has
// synced: here the other sync records a change that is then undone with
// the original size and mtime, which the kept cache would take for
// "unchanged".
func TestKeptStatCacheFollowsOtherSyncs(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	a, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = a.Close() }()
	b, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = b.Close() }()
	ex, err := ExtractionFor(k)
	if err != nil {
		t.Fatal(err)
	}
	// a writes and keeps a cache.
	writeLeaf(t, k, "cache/new-leaf.md", leaf("practice-new-leaf", "New leaf", "d", nil, "", "b"))
	if st, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"cache/new-leaf.md"}); err != nil || st.Added != 1 {
		t.Fatalf("SyncPaths: %+v, %v", st, err)
	}
	rel := "auth/login-flow.md"
	fi, err := os.Stat(k.NodePath(rel))
	if err != nil {
		t.Fatal(err)
	}
	v1, _ := os.ReadFile(k.NodePath(rel))
	// b syncs a same-size edit with another mtime.
	v2 := []byte(strings.Replace(string(v1), "Login flow", "Login flaw", 1))
	writeLeaf(t, k, rel, string(v2))
	age(t, k, rel)
	if err := os.Chtimes(k.NodePath(rel), fi.ModTime().Add(time.Minute), fi.ModTime().Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if st, err := b.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("b: %+v, %v", st, err)
	}
	// The edit is undone, with the stat a's kept cache recorded.
	writeLeaf(t, k, rel, string(v1))
	if err := os.Chtimes(k.NodePath(rel), fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	if st, err := a.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("a after b's sync: %+v, %v (the handle trusted the cache it kept)", st, err)
	}
	if hits, err := holders(ctx, a, "flaw", 5); err != nil || len(hits) != 0 {
		t.Fatalf("the undone edit is still indexed: %v, %v", ids(hits), err)
	}
}

// TestStatCachePatchOfOtherGen: a patch that does not start from the
// generation read so far (appended to a file another sync had just
// replaced) is not applied.
func TestStatCachePatchOfOtherGen(t *testing.T) {
	ctx := context.Background()
	k, a, ex := openPadded(t, 20)
	path := a.statCachePath()
	base, _ := patchBlocks(t, path)
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue."))
	if _, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"jobs/queue.md"}); err != nil {
		t.Fatal(err)
	}
	data, blocks := patchBlocks(t, path)
	if blocks != 1 {
		t.Fatalf("%d patches, want 1:\n%s", blocks, data)
	}
	patch := data[len(base):]

	// Another handle's full sync replaces the file.
	writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", "The kumquat form."))
	age(t, k, "auth/login-flow.md")
	b, st, err := Open(ctx, k, "main")
	if err != nil || st.Updated != 1 {
		t.Fatalf("another handle's sync: %+v, %v", st, err)
	}
	defer func() { _ = b.Close() }()
	want := readStatCache(path)
	if want == nil || want.gen != st.Gen {
		t.Fatalf("the full sync's cache: %+v, want gen %s", want, st.Gen)
	}
	// a's patch lands on it, as an append racing the replace would.
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.Write(patch); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	got := readStatCache(path)
	if d := cacheDiff(got, want); d != "" || got.file != nil {
		t.Fatalf("a patch of another generation was applied: %s", d)
	}
}

// TestStatCacheCompaction: the patches a cache file collects are bounded
// (as many bytes as its base, maxLogLines lines); past that, SyncPaths
// rewrites the file whole.
func TestStatCacheCompaction(t *testing.T) {
	ctx := context.Background()
	k, db, ex := openPadded(t, 20)
	path := db.statCachePath()
	rel := "auth/login-flow.md"
	edit := func(i int) Stats {
		t.Helper()
		writeLeaf(t, k, rel, leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", fmt.Sprintf("Edit %d.", i)))
		st, err := db.SyncPaths(ctx, k.NodesDir(), ex, []string{rel})
		if err != nil || st.Updated != 1 {
			t.Fatalf("edit %d: %+v, %v", i, st, err)
		}
		return st
	}
	edit(0)
	// A log of maxLogLines lines is rewritten however big the base.
	from := *keptCache(db)
	if _, blocks := patchBlocks(t, path); blocks != 1 || from.file == nil {
		t.Fatalf("%d patches after one SyncPaths, file %v", blocks, from.file)
	}
	to := from
	to.gen = newGen()
	from.logLines = maxLogLines - 1
	if db.appendStatPatch(&from, &to, nil, nil) {
		t.Fatal("a patch was appended past maxLogLines")
	}

	data, _ := patchBlocks(t, path)
	base := len(data) // the base's size, at most; set at each rewrite
	appends, rewrites, last := 0, 0, 1
	for i := 1; i <= 40; i++ {
		st := edit(i)
		data, blocks := patchBlocks(t, path)
		switch blocks {
		case 0:
			rewrites++
			base = len(data)
		case last + 1:
			appends++
		default:
			t.Fatalf("edit %d: %d patches after %d", i, blocks, last)
		}
		last = blocks
		if len(data) > 2*base {
			t.Fatalf("edit %d: the file is %d bytes, its base %d", i, len(data), base)
		}
		if c := readStatCache(path); c == nil || c.gen != st.Gen {
			t.Fatalf("edit %d: the file read back is not at the sync's generation", i)
		}
	}
	if appends == 0 || rewrites == 0 {
		t.Fatalf("%d appends, %d rewrites; want both", appends, rewrites)
	}
}

// TestStatCacheReplacedBehindHandle: when the cache file is no longer the
// one the handle last wrote (another process's sync replaced it late,
// with an older generation), SyncPaths rewrites it instead of appending
// to it, and the next reader's sync is still answered from it.
func TestStatCacheReplacedBehindHandle(t *testing.T) {
	ctx := context.Background()
	k, a, ex := openPadded(t, 20)
	path := a.statCachePath()
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue."))
	if _, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"jobs/queue.md"}); err != nil {
		t.Fatal(err)
	}
	stale, _ := patchBlocks(t, path)
	writeLeaf(t, k, "auth/login-flow.md", leaf("map-login-flow", "Login flow", "Pages and handlers of the login", []string{"auth"}, "", "The kumquat form."))
	if _, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"auth/login-flow.md"}); err != nil {
		t.Fatal(err)
	}
	if _, blocks := patchBlocks(t, path); blocks != 2 {
		t.Fatalf("%d patches, want 2", blocks)
	}
	// The older cache comes back, as a new file renamed into place.
	if err := os.WriteFile(path+".tmp", stale, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(path+".tmp", path); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, "cache/render-cache.md", leaf("practice-render-cache", "Render cache", "Cache tags", []string{"cache"}, "", "Use bubbling metadata."))
	st, err := a.SyncPaths(ctx, k.NodesDir(), ex, []string{"cache/render-cache.md"})
	if err != nil || st.Updated != 1 {
		t.Fatalf("SyncPaths: %+v, %v", st, err)
	}
	data, blocks := patchBlocks(t, path)
	if blocks != 0 {
		t.Fatalf("SyncPaths appended to a file it did not write:\n%s", data)
	}
	if d := cacheDiff(readStatCache(path), keptCache(a)); d != "" || keptCache(a).gen != st.Gen {
		t.Fatalf("the rewritten file differs from the kept cache: %s", d)
	}
	before, _ := a.Meta(ctx, "last_sync")
	b, st, err := Open(ctx, k, "main")
	if err != nil || st.Changed() || st.Unchanged != 24 {
		t.Fatalf("another handle's sync: %+v, %v", st, err)
	}
	defer func() { _ = b.Close() }()
	if after, _ := b.Meta(ctx, "last_sync"); after != before {
		t.Fatal("another handle's sync wrote the database (the rewritten stat cache was not used)")
	}
	for q, want := range map[string]string{"kumquat": "map-login-flow", "bubbling": "practice-render-cache", "drain": "map-queue"} {
		if hits, _ := holders(ctx, b, q, 5); !slices.Equal(ids(hits), []string{want}) {
			t.Errorf("%s: %v, want %s", q, ids(hits), want)
		}
	}
}
