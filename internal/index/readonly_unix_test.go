//go:build unix

package index

import (
	"context"
	"os"
	"testing"

	"github.com/kk-project/kk/internal/nobodytest"
)

// TestOpenBesideAReadOnlyWriteAheadLog: an index whose write-ahead log and
// shared-memory file may not be written, in a folder that may (a CI cache
// restored with its files read-only), is searched in a scratch index like
// one whose folder may not be written. Before, the sync failed with
// SQLite's "attempt to write a readonly database" and kk search with an
// internal error.
func TestOpenBesideAReadOnlyWriteAheadLog(t *testing.T) {
	if !nobodytest.Unprivileged(t) {
		return
	}
	ctx := context.Background()
	k := seedKB(t)
	db, _, err := Open(ctx, k, "main")
	if err != nil {
		t.Fatal(err)
	}
	path := db.Path
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{path + "-wal", path + "-shm"} {
		if err := os.WriteFile(f, nil, 0o444); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(f, 0o444); err != nil {
			t.Fatal(err)
		}
	}
	// A leaf written since: the sync has something to write.
	writeLeaf(t, k, "db/pool.md", leaf("practice-pool", "Connection pool", "Size the pool", nil, "", "The pool holds twenty connections."))
	db, _, err = Open(ctx, k, "main")
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Sync(ctx, k.NodesDir()); err != nil {
		t.Fatalf("sync: %v", err)
	}
	hits, err := db.Search(ctx, Request{Text: "twenty connections", Limit: 5})
	if err != nil {
		t.Fatalf("search: %v", err)
	}
	if len(hits) == 0 || hits[0].ID != "practice-pool" {
		t.Fatalf("hits %+v", hits)
	}
}
