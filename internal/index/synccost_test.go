package index

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"testing"
	"time"
)

// readWalk returns the recorded walk_ns and walk_leaves ("" when unset).
func readWalk(t *testing.T, db *DB) (ns, leaves string) {
	t.Helper()
	ctx := context.Background()
	var err error
	if ns, err = db.Meta(ctx, "walk_ns"); err != nil {
		t.Fatal(err)
	}
	if leaves, err = db.Meta(ctx, "walk_leaves"); err != nil {
		t.Fatal(err)
	}
	return ns, leaves
}

// setWalkRow writes the recorded walk as another process would have left it.
func setWalkRow(t *testing.T, db *DB, ns int64, leaves int) {
	t.Helper()
	if _, err := db.w.Exec(`INSERT INTO meta(key, value) VALUES ('walk_ns', ?), ('walk_leaves', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`,
		strconv.FormatInt(ns, 10), strconv.Itoa(leaves)); err != nil {
		t.Fatal(err)
	}
}

// A sync records what its walk of the tree cost and for how many leaves;
// ExpectedSync scales it to the leaves the index holds now, which writes
// through kk (SyncPaths) change without a walk. A sync that finds nothing
// to do records its walk only when the recorded one is missing, or slower
// or faster than it by the bounds (walkFaster, walkSlower), and never
// waits for another writer to do so.
func TestExpectedSync(t *testing.T) {
	ctx := context.Background()
	k, db, ex := openPadded(t, 20)
	ns, leaves := readWalk(t, db)
	if n, err := strconv.ParseInt(ns, 10, 64); err != nil || n <= 0 || leaves != "23" {
		t.Fatalf("after the first sync: walk_ns %q, walk_leaves %q; want a duration for 23 leaves", ns, leaves)
	}
	if d, ok := db.ExpectedSync(ctx); !ok || d <= 0 {
		t.Fatalf("ExpectedSync: %v %v", d, ok)
	}

	// A recorded walk of a second for 23 leaves, then 23 leaves written
	// through kk: the expected sync doubles, no walk made.
	setWalkRow(t, db, int64(time.Second), 23)
	var rels []string
	for i := range 23 {
		rel := fmt.Sprintf("more/practice-more-%d.md", i)
		writeLeaf(t, k, rel, leaf(fmt.Sprintf("practice-more-%d", i), fmt.Sprintf("More %d", i), "d", nil, "", "More."))
		rels = append(rels, rel)
	}
	if _, err := db.SyncPaths(ctx, k.NodesDir(), ex, rels); err != nil {
		t.Fatal(err)
	}
	if d, ok := db.ExpectedSync(ctx); !ok || d != 2*time.Second {
		t.Fatalf("ExpectedSync after 23 leaves written through kk: %v %v; want 2s", d, ok)
	}
	if ns, leaves := readWalk(t, db); ns != strconv.FormatInt(int64(time.Second), 10) || leaves != "23" {
		t.Fatalf("SyncPaths recorded a walk: %s %s", ns, leaves)
	}

	// A sync that finds nothing to do while another writer holds the
	// lock: it does not wait for it, and records nothing.
	age(t, k, rels...)
	if _, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil { // reads the aged leaves
		t.Fatal(err)
	}
	setWalkRow(t, db, int64(time.Hour), 46)
	holder, err := sql.Open("sqlite", dsn(db.Path, false))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = holder.Close() }()
	tx, err := holder.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Changed() || st.Unchanged != 46 {
		t.Fatalf("quiet sync with the lock held: %+v %v", st, err)
	}
	if ns, _ := readWalk(t, db); ns != strconv.FormatInt(int64(time.Hour), 10) {
		t.Fatalf("a quiet sync recorded its walk under another writer's lock: %s", ns)
	}
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}

	// The lock free, a quiet sync replaces a recorded hour (the machine
	// was loaded, or the tree was on a cold disk) with what it measured.
	if st, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil || st.Changed() {
		t.Fatalf("quiet sync: %+v %v", st, err)
	}
	ns, leaves = readWalk(t, db)
	if n, err := strconv.ParseInt(ns, 10, 64); err != nil || n <= 0 || n >= int64(time.Hour) || leaves != "46" {
		t.Fatalf("after a quiet sync: walk_ns %q, walk_leaves %q; want its own walk of 46 leaves", ns, leaves)
	}
	// A recorded walk far faster than the walk (a nanosecond) is replaced
	// too: the machine got slower, or busier.
	setWalkRow(t, db, 1, 46)
	if _, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil {
		t.Fatal(err)
	}
	if ns, _ := readWalk(t, db); ns == "1" {
		t.Fatal("a quiet sync kept a recorded walk far below its own")
	}

	// An index without a recorded walk (an older kk wrote it) has no
	// expectation until a sync records one.
	if _, err := db.w.Exec(`DELETE FROM meta WHERE key IN ('walk_ns', 'walk_leaves')`); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.ExpectedSync(ctx); ok {
		t.Fatal("ExpectedSync without a recorded walk")
	}
	if _, err := db.SyncWith(ctx, k.NodesDir(), ex); err != nil {
		t.Fatal(err)
	}
	if _, ok := db.ExpectedSync(ctx); !ok {
		t.Fatal("a quiet sync did not record the missing walk")
	}
}
