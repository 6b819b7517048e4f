package index

import (
	"context"
	"os"
	"testing"
)

// A git clean lists the files it removes first, then removes them by
// name: one that listed the index's write-ahead log and shared memory
// file (left by the last command) but not the database, gone meanwhile,
// removes the log and the memory file kk has just made beside a new
// database, and leaves the database. Opening failed ("disk I/O error",
// "no such file or directory"); it starts over now, as for a database
// removed.
func TestGitCleanRemovesTheLogOfANewIndex(t *testing.T) {
	ctx := context.Background()
	k := gitKB(t)
	removed := 0
	prev := openStep
	openStep = func(s string) {
		if s == "schema" && removed == 0 {
			removed++
			for _, p := range []string{Path(k, "main") + "-wal", Path(k, "main") + "-shm"} {
				if err := os.Remove(p); err != nil {
					t.Errorf("removing %s: %v", p, err)
				}
			}
		}
	}
	t.Cleanup(func() { openStep = prev })
	db, st, err := Open(ctx, k, "main")
	if removed != 1 {
		t.Fatal("the open never reached its schema")
	}
	if err != nil {
		t.Fatalf("opening the index after its log was removed: %v", err)
	}
	defer func() { _ = db.Close() }()
	if st.Added != 3 {
		t.Errorf("the first sync: %+v; want the three leaves added", st)
	}
	if hits, err := holders(ctx, db, "refresh", 5); err != nil || len(hits) != 1 {
		t.Fatalf("search after the open: %v, %v", ids(hits), err)
	}
}

// `git clean -fdX` (or -fdx) removes .ai/kenkeep/.state, the index folder
// with it, at any moment, also while kk opens the branch's index: between
// the folder's creation and the probe of it, between the probe and the
// database's creation, between the database's creation and its schema,
// and once the database is open. Opening failed ("creating the index
// folder: …: no such file or directory", "unable to open database file",
// "disk I/O error"); the index is derived, so kk now makes it again, and
// the search that follows finds the notes.
func TestGitCleanWhileTheIndexOpens(t *testing.T) {
	for _, step := range []string{"folder", "probed", "created", "schema", "readers"} {
		t.Run(step, func(t *testing.T) {
			ctx := context.Background()
			k := gitKB(t)
			git(t, k.Root, "add", "-A")
			git(t, k.Root, "commit", "-q", "-m", "seed")
			// A first open, so that the clean removes an index that was there.
			db, _, err := Open(ctx, k, "main")
			if err != nil {
				t.Fatal(err)
			}
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
			cleaned := 0
			prev := openStep
			openStep = func(s string) {
				if s == step && cleaned == 0 {
					cleaned++
					git(t, k.Root, "clean", "-fdXq")
				}
			}
			t.Cleanup(func() { openStep = prev })
			db, st, err := Open(ctx, k, "main")
			if cleaned != 1 {
				t.Fatalf("the open never reached step %q", step)
			}
			if err != nil {
				t.Fatalf("opening the index after git clean at step %q: %v", step, err)
			}
			defer func() { _ = db.Close() }()
			if st.Unchanged+st.Added != 3 {
				t.Errorf("the sync after the clean: %+v; want the three leaves", st)
			}
			hits, err := holders(ctx, db, "refresh", 5)
			if err != nil || len(hits) != 1 || hits[0].ID != "practice-session-tokens" {
				t.Fatalf("search after the clean: %v, %v", ids(hits), err)
			}
			openStep = prev
			// The next command finds (or makes) the index again.
			db2, _, err := Open(ctx, k, "main")
			if err != nil {
				t.Fatalf("the next open: %v", err)
			}
			_ = db2.Close()
			if _, err := os.Stat(Path(k, "main")); err != nil {
				t.Errorf("the index after the next open: %v", err)
			}
		})
	}
}
