package serve

import (
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
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

// TestAFileSizeLimitHoldsTheJob: found with kk serve run under a
// file-size limit (ulimit -f, systemd's LimitFSIZE): once the branch
// index's write-ahead log reached it, every job failed ("syncing index
// …: disk I/O error (778)", SQLite's SQLITE_IOERR_WRITE for the EFBIG
// its write got), and each post with it, while /healthz said ok. A disk
// I/O error of the branch index, and a write of kk's own past the limit
// (EFBIG), are the machine's: the job is held, /healthz saying what to
// check, and runs once the writes land. The errors here are the kernel's
// and SQLite's own, under a limit this test sets on itself for a moment.
func TestAFileSizeLimitHoldsTheJob(t *testing.T) {
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "limited.db")
	db, err := sql.Open("sqlite", path+"?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	db.SetMaxOpenConns(1)
	if _, err := db.Exec("CREATE TABLE t(x BLOB)"); err != nil {
		t.Fatal(err)
	}
	var ioerr, efbig error
	func() {
		limit := syscall.Rlimit{Cur: 64 << 10, Max: old.Max}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatal(err)
		}
		defer func() {
			if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &old); err != nil {
				t.Fatal(err)
			}
		}()
		for i := 0; i < 100 && ioerr == nil; i++ {
			_, ioerr = db.Exec("INSERT INTO t VALUES (zeroblob(8000))")
		}
		efbig = os.WriteFile(filepath.Join(dir, "big"), make([]byte, 128<<10), 0o644)
	}()
	if ioerr == nil || efbig == nil {
		t.Fatalf("the limit stopped no write: %v, %v", ioerr, efbig)
	}
	b := New(Options{KB: newRepo(t, 0)})
	for _, err := range []error{fmt.Errorf("syncing index %s: %w", path, ioerr), efbig} {
		if got := b.unwritable(err); !errors.Is(got, jobqueue.ErrHeld) {
			t.Errorf("a write past the file-size limit: %v", got)
		}
	}
}
