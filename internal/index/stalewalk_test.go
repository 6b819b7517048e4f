package index

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// TestAStaleWalkDoesNotUndoANewerSync: a process whose walk of the tree
// began before another process synced a change (a hook's sync beside kk
// node write, which records the leaf it wrote) does not write the tree as
// its walk saw it over the newer state: the stored index never goes
// back, so a reader that answers from it without a sync (a hook on a busy
// machine) still finds the leaf just written.
func TestAStaleWalkDoesNotUndoANewerSync(t *testing.T) {
	ctx := context.Background()
	for _, how := range []string{"a sync", "the writer's record"} {
		t.Run(how, func(t *testing.T) {
			k := seedKB(t)
			slow, _, err := Open(ctx, store.New(k.Root), "main")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = slow.Close() }()
			if _, err := slow.Sync(ctx, k.NodesDir()); err != nil {
				t.Fatal(err)
			}
			// The slow process lists the tree...
			l, base, start, err := slow.listAll(ctx, k.NodesDir())
			if err != nil {
				t.Fatal(err)
			}
			// ... a writer adds a leaf and removes another, and another
			// process records both ...
			writeLeaf(t, k, "auth/added.md", leaf("practice-added", "Added meanwhile", "d", nil, "", "b"))
			if err := os.Remove(k.NodePath("cache/render-cache.md")); err != nil {
				t.Fatal(err)
			}
			fast, _, err := Open(ctx, store.New(k.Root), "main")
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = fast.Close() }()
			if how == "a sync" {
				_, err = fast.Sync(ctx, k.NodesDir())
			} else {
				_, err = fast.SyncPaths(ctx, k.NodesDir(), nil, []string{"auth/added.md", "cache/render-cache.md"})
			}
			if err != nil {
				t.Fatal(err)
			}
			want := nodeRows(t, fast)
			// ... and the slow process's sync lands last.
			if _, _, err := slow.syncListed(ctx, k.NodesDir(), start, nil, l, nil, base, false); err != nil {
				t.Fatal(err)
			}
			if got := nodeRows(t, fast); !slices.Equal(got, want) {
				t.Fatalf("a walk older than the index's state was written over it:\n got %q\nwant %q", got, want)
			}
			checkLikeAWalk(t, fast, k, "after the slow sync")
		})
	}
}
