package index

import (
	"context"
	"fmt"
	"os"
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
	defer db.Close()
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
	defer db.Close()
	for _, q := range []string{"word0", fmt.Sprintf("word%d", bulkRows+19)} {
		if hits, err := Search(ctx, db, q, 5); err != nil || len(hits) != 1 {
			t.Fatalf("%s after the bulk sync: %v, %v", q, ids(hits), err)
		}
	}
	writeLeaf(t, k, rels[3], leaf("practice-item-3", "Item 3", "d", nil, "", "Body replaced."))
	age(t, k, rels[3])
	if st, err := db.Sync(ctx, k.NodesDir()); err != nil || st.Updated != 1 {
		t.Fatalf("small sync: %+v, %v", st, err)
	}
	if hits, _ := Search(ctx, db, "word3", 5); len(hits) != 0 {
		t.Fatalf("word3 still found after the edit: %v", ids(hits))
	}
	if hits, _ := Search(ctx, db, "replaced", 5); len(hits) != 1 || hits[0].ID != "practice-item-3" {
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
	defer a.Close()
	b, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
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
	os.Chtimes(k.NodePath(rel), fi.ModTime().Add(time.Minute), fi.ModTime().Add(time.Minute))
	if st, err := b.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("b: %+v, %v", st, err)
	}
	// The edit is undone, with the stat a's kept cache recorded.
	writeLeaf(t, k, rel, string(v1))
	os.Chtimes(k.NodePath(rel), fi.ModTime(), fi.ModTime())
	if st, err := a.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Updated != 1 {
		t.Fatalf("a after b's sync: %+v, %v (the handle trusted the cache it kept)", st, err)
	}
	if hits, err := Search(ctx, a, "flaw", 5); err != nil || len(hits) != 0 {
		t.Fatalf("the undone edit is still indexed: %v, %v", ids(hits), err)
	}
}
