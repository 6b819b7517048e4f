package serve

import (
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/jobqueue"
)

// TestABranchIndexOnAFullDiskHoldsTheJob: found on a full tmpfs. A job
// whose transaction found the disk full when its branch index (SQLite)
// synced failed ("syncing index …: database or disk is full (13)"), and
// the post with it: SQLite reports the full disk as SQLITE_FULL, not as
// the ENOSPC kk's own writes get. It is the machine's, as ENOSPC is: the
// job is held (put back, /healthz saying the disk is full) and runs once
// there is room. The error here is SQLite's own, from a database that
// may not grow (max_page_count), wrapped as the index wraps it.
func TestABranchIndexOnAFullDiskHoldsTheJob(t *testing.T) {
	path := filepath.Join(t.TempDir(), "full.db")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	for _, q := range []string{"PRAGMA page_size=512", "CREATE TABLE t(x BLOB)", "PRAGMA max_page_count=4"} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	var full error
	for i := 0; i < 100 && full == nil; i++ {
		_, full = db.Exec("INSERT INTO t VALUES (zeroblob(400))")
	}
	if full == nil || !strings.Contains(full.Error(), "full") {
		t.Fatalf("SQLite never reported the database full: %v", full)
	}
	b := New(Options{KB: newRepo(t, 0)})
	err = b.unwritable(fmt.Errorf("syncing index %s: %w", path, full))
	if !errors.Is(err, jobqueue.ErrHeld) || !strings.Contains(err.Error(), "the disk is full") {
		t.Fatalf("a branch index on a full disk: %v", err)
	}
}
