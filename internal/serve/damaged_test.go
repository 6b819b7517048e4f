package serve

import (
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A git index damaged under a running server (a crash or a full disk
// while another git command wrote it, a disk's fault) is the
// repository's, not a job's: every job's commit reads it, so each would
// fail in turn while /healthz said ok. The job is held, /healthz says
// the index is damaged and how to rebuild it; once it is rebuilt, the
// job is done with its one commit, and a person's file not committed is
// still there. Found by the red team: each job failed ("index file
// smaller than expected") and /healthz said ok.
func TestFaultDamagedGitIndexHoldsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name        string
		bytes       []byte
		beforeStart bool // damaged before the server's start: its first commit meets it
	}{
		{"truncated", []byte("garbage\n"), false},
		{"bad signature", bytes.Repeat([]byte("XXXX"), 1024), false},
		{"before the start", []byte("garbage\n"), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 0)
			index := filepath.Join(k.Root, ".git", "index")
			var s *server
			if tc.beforeStart {
				if err := os.WriteFile(index, tc.bytes, 0o644); err != nil {
					t.Fatal(err)
				}
				s = start(t, k, nil)
			} else {
				s = start(t, k, nil)
				if j := s.post(t, httpapi.PostRequest{Title: "Before", Content: "Before the damage.\n"}); j.Status != "done" {
					t.Fatalf("post before: %+v", j)
				}
			}
			wip := filepath.Join(k.Root, "notes-in-progress.txt")
			if err := os.WriteFile(wip, []byte("a person's work\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(index, tc.bytes, 0o644); err != nil {
				t.Fatal(err)
			}
			id := s.postAsync(t, "Damaged index "+tc.name)
			h := s.waitHealth(t, "git index")
			if !bytes.Contains([]byte(h.WaitingFor), []byte("damaged")) || !bytes.Contains([]byte(h.WaitingFor), []byte("git reset")) {
				t.Errorf("/healthz: %+v", h)
			}
			if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
				t.Fatalf("the job ended while the index was damaged: %+v", j)
			}
			if err := os.Remove(index); err != nil {
				t.Fatal(err)
			}
			git(t, k, "reset", "-q")
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once the index was rebuilt: %+v", j)
			}
			jobCommit(t, k, "store", j)
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			if got, err := os.ReadFile(wip); err != nil || string(got) != "a person's work\n" {
				t.Errorf("the person's file: %q %v", got, err)
			}
			if st := git(t, k, "status", "--porcelain"); st != "?? notes-in-progress.txt" {
				t.Errorf("git status:\n%s", st)
			}
		})
	}
}

// A file every job writes (ENTRY.md and GRAPH.md, in .ai/kenkeep itself)
// that kk serve's user may not write (made read-only or immutable,
// another user's: EACCES, EPERM) would fail every job in turn, as a full
// disk would: the job is held, /healthz names the file, and once it can
// be written the job is done with its one commit. A note's folder that
// cannot be written still fails only the job that writes there, and the
// next job runs. Found by the red team: with ENTRY.md made immutable
// (chattr +i), each job failed ("rename …/.ENTRY.md.tmp-… …/ENTRY.md:
// operation not permitted") while /healthz said ok.
func TestFaultUnwritableGeneratedFileHoldsTheJob(t *testing.T) {
	for _, tc := range []struct {
		name string
		file string
		err  func(k *store.KB) error
	}{
		{"ENTRY.md immutable", "ENTRY.md", func(k *store.KB) error {
			return &os.LinkError{Op: "rename", Old: filepath.Join(k.Dir, ".ENTRY.md.tmp-1"), New: k.EntryPath(), Err: syscall.EPERM}
		}},
		{"GRAPH.md read-only", "GRAPH.md", func(k *store.KB) error {
			return &fs.PathError{Op: "open", Path: k.GraphPath(), Err: syscall.EACCES}
		}},
		{"kb folder read-only", "ENTRY.md", func(k *store.KB) error {
			return &fs.PathError{Op: "open", Path: filepath.Join(k.Dir, ".ENTRY.md.tmp-2"), Err: syscall.EACCES}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			k := newRepo(t, 0)
			var refused atomic.Bool
			refused.Store(true)
			faulty := txn.WithFaults(context.Background(), txn.Faults{Write: func(rel string) error {
				if refused.Load() && rel == tc.file {
					return tc.err(k)
				}
				return nil
			}})
			s := startWith(t, faulty, k, nil)
			id := s.postAsync(t, "Unwritable "+tc.name)
			if h := s.waitHealth(t, "cannot be written"); !strings.Contains(h.WaitingFor, filepath.Join(k.Dir, tc.file)+" cannot be written") {
				t.Errorf("/healthz does not name %s: %+v", tc.file, h)
			}
			if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
				t.Fatalf("the job ended while %s could not be written: %+v", tc.file, j)
			}
			refused.Store(false)
			j := s.waitJob(t, id, 30*time.Second)
			if j.Status != "done" {
				t.Fatalf("the job once %s could be written: %+v", tc.file, j)
			}
			jobCommit(t, k, "store", j)
			if h := s.health(t); h.Status != "ok" {
				t.Errorf("health after: %+v", h)
			}
			clean(t, k)
		})
	}

	// A note's folder refused: that job fails alone, the next is done.
	k := newRepo(t, 0)
	faulty := txn.WithFaults(context.Background(), txn.Faults{Write: func(rel string) error {
		if rel == "nodes/locked/map-a.md" {
			return &fs.PathError{Op: "open", Path: filepath.Join(k.NodesDir(), "locked", ".map-a.md.tmp-1"), Err: syscall.EACCES}
		}
		return nil
	}})
	s := startWith(t, faulty, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "First in locked", Content: "First.\n"})
	if first.Status != "done" {
		t.Fatalf("a post before: %+v", first)
	}
	edit := s.edit(t, httpapi.EditRequest{Path: first.Path, Content: "Edited.\n"})
	if !strings.HasPrefix(first.Path, "inbox/") || edit.Status != "done" {
		t.Fatalf("edit: %+v %+v", first, edit)
	}
	if err := os.MkdirAll(filepath.Join(k.NodesDir(), "locked"), 0o755); err != nil {
		t.Fatal(err)
	}
	handNote(t, k, "locked/map-a.md", "Locked A", "in a folder kk may not write", nil, "", "A.\n")
	commitAll(t, k, "a note in locked/")
	if j := s.edit(t, httpapi.EditRequest{Path: "locked/map-a.md", Content: "Changed.\n"}); j.Status != "failed" || !strings.Contains(j.Error, "permission denied") {
		t.Errorf("an edit in the refused folder: %+v", j)
	}
	if j := s.post(t, httpapi.PostRequest{Title: "After", Content: "After.\n"}); j.Status != "done" {
		t.Errorf("the next post: %+v", j)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
}

// A required clean filter (.gitattributes filter=NAME with
// filter.NAME.required: git-crypt, git-lfs, a person's own) that fails
// (its program missing, the tool locked) fails git's every write of the
// files it covers: each job whose commit meets it would fail in turn
// while /healthz said ok. The job is held, /healthz names the filter
// and the file; once the filter runs, the job is done with its one
// commit. Found by the red team: with `*.md filter=bad` and a clean
// command that exits 1, each post failed ("clean filter 'bad' failed").
func TestFaultFailingRequiredFilterHoldsTheJob(t *testing.T) {
	k := newRepo(t, 0)
	flag := filepath.Join(t.TempDir(), "broken")
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	attrs := filepath.Join(k.Root, ".git", "info", "attributes")
	if err := os.MkdirAll(filepath.Dir(attrs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(attrs, []byte("*.md filter=crypt\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git(t, k, "config", "filter.crypt.clean", "sh -c 'test ! -e "+flag+" && cat'")
	git(t, k, "config", "filter.crypt.smudge", "cat")
	git(t, k, "config", "filter.crypt.required", "true")
	s := start(t, k, nil)
	id := s.postAsync(t, "Behind a broken filter")
	h := s.waitHealth(t, "clean filter")
	if !strings.Contains(h.WaitingFor, "crypt") {
		t.Errorf("/healthz does not name the filter: %+v", h)
	}
	if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
		t.Fatalf("the job ended while the filter failed: %+v", j)
	}
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job once the filter ran: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}

// A repository git stops trusting under the running server (its owner
// changed: a chown -R by an administrator or a deploy script, kk serve's
// service user changed; git's safe.directory check) refuses every git
// command, so each job would fail in turn while /healthz said ok (a start
// is refused with the same words: TestRepositoryOfAnotherUserIsRefusedAsSuch).
// The job is held, /healthz names the repository and the two ways out;
// once git trusts it again, the job is done with its one commit. git's
// own check is made to fail with its test knob
// GIT_TEST_ASSUME_DIFFERENT_OWNER (a chown needs root). Found by the red
// team: after chown -R of the served repository, each post failed
// ("detected dubious ownership in repository").
//
// An edit queued behind it is checked (is the note the branch's?) while
// the post's commit runs: git's refusal there was read as "the note is
// not committed on the branch", and the edit failed for good with that
// false reason; it is held too, and done once git works.
func TestFaultRepositoryGitStopsTrustingHoldsTheJob(t *testing.T) {
	ownGitConfig(t)
	k := newRepo(t, 0)
	s := start(t, k, nil)
	if j := s.post(t, httpapi.PostRequest{Title: "Trusted", Content: "Before the owner changed.\n"}); j.Status != "done" {
		t.Fatalf("post before: %+v", j)
	}
	t.Setenv("GIT_TEST_ASSUME_DIFFERENT_OWNER", "1")
	id := s.postAsync(t, "Owner changed")
	edit, err := s.Client.Edit(ctx, httpapi.EditRequest{Path: "inbox/map-trusted.md", Content: "Edited while the owner changed.\n"})
	if err != nil {
		t.Fatal(err)
	}
	h := s.waitHealth(t, "safe.directory")
	if !strings.Contains(h.WaitingFor, k.Root) {
		t.Errorf("/healthz does not name the repository: %+v", h)
	}
	if j, _ := s.Client.Job(ctx, id); j.Status == "failed" || j.Status == "done" {
		t.Fatalf("the job ended while git refused the repository: %+v", j)
	}
	if err := os.Unsetenv("GIT_TEST_ASSUME_DIFFERENT_OWNER"); err != nil {
		t.Fatal(err)
	}
	j := s.waitJob(t, id, 30*time.Second)
	if j.Status != "done" {
		t.Fatalf("the job once git trusted the repository: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if e := s.waitJob(t, edit.JobID, 30*time.Second); e.Status != "done" {
		t.Fatalf("the edit once git trusted the repository: %+v", e)
	} else {
		jobCommit(t, k, "edit", e)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}

// The branch index (.state/branches/<branch>/index.db, derived from the
// tree) damaged under a running server (a disk's fault, a copy restored
// half way): kk serve keeps it open, and SQLite found it malformed on
// every read and every placement from then on, so each search, tag
// search, /tags and /posts/recents answered 500 and each post failed,
// while /healthz said ok, until a restart (whose open builds a damaged
// index again). Now the damaged index is dropped and built again from the
// tree: the read that met it answers, and the job runs again and is done.
// Found by the red team (pages of index.db overwritten: "database disk
// image is malformed (11)").
func TestFaultDamagedBranchIndexIsBuiltAgain(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	var first httpapi.JobStatus
	for i := range 40 {
		j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Before %d", i), Content: strings.Repeat(fmt.Sprintf("Goroutines and channels, note %d. ", i), 40) + "\n", Tags: []string{"golang"}})
		if j.Status != "done" {
			t.Fatalf("post before: %+v", j)
		}
		if i == 0 {
			first = j
		}
	}
	branch := git(t, k, "branch", "--show-current")
	db := index.Path(k, branch)
	// Its pages written to the database file (the write-ahead log, which
	// SQLite checks by checksums, is left as it is): moved there first.
	checkpoint(t, db)
	f, err := os.OpenFile(db, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	if fi.Size() <= 8192 {
		t.Fatalf("the index holds %d bytes: nothing past its first pages to damage", fi.Size())
	}
	if _, err := f.WriteAt(bytes.Repeat([]byte{0xde, 0xad, 0xbe, 0xef}, int(fi.Size()-4096)/4), 4096); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/tags", "/search?tag=golang", "/search?query=goroutines", "/posts/recents"} {
		if code, body := s.call(t, "GET", path, ""); code != 200 || !strings.Contains(body, "golang") && !strings.Contains(body, first.Path) {
			t.Errorf("GET %s after the damage: %d %.300s", path, code, body)
		}
	}
	j := s.post(t, httpapi.PostRequest{Title: "After the damage", Content: "Goroutines and channels once more.\n", Tags: []string{"golang"}})
	if j.Status != "done" {
		t.Fatalf("post after the damage: %+v", j)
	}
	jobCommit(t, k, "store", j)
	if code, body := s.call(t, "GET", "/search?tag=golang", ""); code != 200 || strings.Count(body, `"path"`) != 41 {
		t.Errorf("tag search after the rebuild: %d %.300s", code, body)
	}
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
	clean(t, k)
}

// checkpoint moves the write-ahead log of the SQLite database at path
// into the database file.
func checkpoint(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	if _, err := db.Exec("PRAGMA wal_checkpoint(FULL)"); err != nil {
		t.Fatal(err)
	}
}
