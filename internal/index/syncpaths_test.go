package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// SyncPaths reads only the leaves a writer names and leaves the index as a
// full sync would; a leaf edited by hand meanwhile is left for the next
// sync, which finds it because its stat no longer matches the leaf
// state.
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

	// Right after a write, a sync reads the written leaf again (it is too
	// recent to trust by its stat) and finds it as SyncPaths recorded it;
	// a racy same-size edit of it is caught.
	writeLeaf(t, k, "jobs/queue.md", leaf("map-queue", "Queue workers", "Background queue", []string{"jobs"}, "", "Workers drain the queue!"))
	if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{"jobs/queue.md"}); err != nil {
		t.Fatal(err)
	}
	st, err = db.Sync(ctx, k.NodesDir())
	if err != nil || st.Changed() || st.Unchanged+st.Touched != 3 {
		t.Fatalf("sync right after SyncPaths: %+v, %v; want every leaf unchanged", st, err)
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

	// Without a leaf state (an index never synced) SyncPaths is a full
	// sync.
	writeLeaf(t, k, "jobs/other.md", leaf("map-other", "Other", "o", nil, "", "papaya"))
	bare, err := openFile(ctx, filepath.Join(t.TempDir(), "bare.db"), "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = bare.Close() }()
	if st, err := bare.SyncPaths(ctx, k.NodesDir(), nil, nil); err != nil || st.Added != 4 {
		t.Fatalf("SyncPaths without a leaf state: %+v, %v; want the full sync's 4 added", st, err)
	}
}

// paddedKB is seedKB with n more leaves (old ones).
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

// TestHashAfter: the nodes hash a writer gets from the handle for the
// tree it read and the leaves it changes is the hash of every leaf after
// the change, as a sync of the change records it and as ReadTree's
// hashes give it.
func TestHashAfter(t *testing.T) {
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	names := []string{"a.md", "auth/b.md", "x/y/d.md", "auth/login-flow.md", "new/folder/e.md"}
	for step := range 30 {
		before := db.kept.s.hash
		rel := names[step%len(names)]
		var gone []string
		put := map[string]string{}
		if step%4 == 3 {
			_ = os.Remove(k.NodePath(rel))
			gone = append(gone, rel)
		} else {
			content := leaf(fmt.Sprintf("practice-s%d", step), "S", "d", nil, "", fmt.Sprint(step))
			writeLeaf(t, k, rel, content)
			sum := sha256.Sum256([]byte(content))
			put[rel] = hex.EncodeToString(sum[:])
			if step%3 == 0 {
				gone = append(gone, rel) // written over: gone and put
			}
		}
		after, ok := db.HashAfter(before, gone, put)
		if !ok {
			t.Fatalf("step %d: the handle does not know the lines of the tree it recorded", step)
		}
		if _, err := db.SyncPaths(ctx, k.NodesDir(), nil, []string{rel}); err != nil {
			t.Fatal(err)
		}
		tree, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if want := store.HashLeaves(tree.Hashes); after != want || db.kept.s.hash != want {
			t.Fatalf("step %d: HashAfter %s, recorded %s, want %s", step, after, db.kept.s.hash, want)
		}
		if _, ok := db.HashAfter("other", nil, nil); ok {
			t.Fatal("HashAfter answered for a tree the handle did not record")
		}
	}
}
