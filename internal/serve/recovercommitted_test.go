package serve

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// TestRecoveryKeepsAnEditAPersonCommitted: kk serve killed between an
// edit's write and its commit, and a person's git commit -a while it was
// down, which took the job's edit as the person's commit. Found by the
// serve10 red team (kill -9, then git commit -a, then a restart): the
// restart put back the note's bytes from before the job, an uncommitted
// change reverting the person's commit (their next git commit -a would
// have committed it), and the job, run again, failed on that change as a
// person's edit. The note the person committed is theirs: recovery
// leaves it, and the job, run again on the person's commit, is done with
// its one commit, the work tree clean. So for a deletion: the note the
// person's commit removed is not put back.
func TestRecoveryKeepsAnEditAPersonCommitted(t *testing.T) {
	for _, c := range []struct {
		op, content string
	}{
		{service.OpEdit, "Edited by the job.\n"},
		{service.OpDelete, ""},
	} {
		t.Run(c.op, func(t *testing.T) {
			k := newRepo(t, 0)
			s := start(t, k, nil)
			note := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
			s.stop()
			b := New(Options{KB: k})
			t.Cleanup(func() { _ = b.Close() })
			var touched []string
			id := "job-killed-before-its-commit-" + c.op
			job := &service.Job{ID: id, Op: c.op, Request: service.JobRequest{Path: note.Path, Content: c.content}, Created: time.Now()}
			withTouch(job, &touched)
			job.OnDefer(func(func(context.Context) error) {}) // killed: the commit never runs
			if _, err := b.Apply(ctx, job); err != nil {
				t.Fatal(err)
			}
			git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qam", "the person's commit -a")
			want, wantErr := os.ReadFile(k.NodePath(note.Path))
			// The restart: the job is found processing, with no commit of
			// its own.
			if _, found, err := b.Committed(ctx, id); err != nil || found {
				t.Fatalf("Committed: %v %v", found, err)
			}
			err := b.Restore(ctx, jobqueue.Job{ID: id, Op: c.op, Path: note.Path, Status: jobqueue.Processing, Touched: touched})
			// A deletion cannot run again: it is done
			// (TestRecoveryEndsADeletionAPersonCommittedDone).
			if err != nil && (c.op != service.OpDelete || !errors.Is(err, jobqueue.ErrCommittedMeanwhile)) {
				t.Fatal(err)
			}
			got, gotErr := os.ReadFile(k.NodePath(note.Path))
			if string(got) != string(want) || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("recovery changed the note the person committed:\n%s\nwas:\n%s", got, want)
			}
			if st := git(t, k, "status", "--porcelain", "--", ".ai/kenkeep/nodes"); st != "" {
				t.Errorf("recovery left the notes differing from the person's commit:\n%s", st)
			}
			if c.op != service.OpEdit {
				return
			}
			var last func(context.Context) error
			job.OnDefer(func(fn func(context.Context) error) { last = fn })
			if _, err := b.Apply(ctx, job); err != nil {
				t.Fatalf("the job run again: %v", err)
			}
			if err := last(ctx); err != nil {
				t.Fatalf("its commit: %v", err)
			}
			jobCommit(t, k, "edit", httpapi.JobStatus{JobID: id, Path: note.Path})
			if got, _ := os.ReadFile(k.NodePath(note.Path)); !strings.Contains(string(got), "Edited by the job.") {
				t.Errorf("the note after the job:\n%s", got)
			}
			clean(t, k)
			headChecks(t, k)
		})
	}
}

// TestRestoreWhileGitCannotReadTheRepository: an edit's undo, while git
// cannot read its configuration (a person's ~/.gitconfig with a typo),
// puts the note's bytes back, as before the branch was asked whether a
// person committed the change: asking git failed, and the undo failed
// with it, failing for good a job the environment holds.
func TestRestoreWhileGitCannotReadTheRepository(t *testing.T) {
	global := filepath.Join(t.TempDir(), "gitconfig")
	if err := os.WriteFile(global, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GIT_CONFIG_GLOBAL", global)
	k, path, before, b, rj := killedEdit(t, "job-undone-while-git-cannot-read")
	if err := os.WriteFile(global, []byte("[core\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.Restore(ctx, rj); err != nil {
		t.Fatalf("the undo while git cannot read its configuration: %v", err)
	}
	if got, _ := os.ReadFile(k.NodePath(path)); string(got) != string(before) {
		t.Errorf("the note after the undo:\n%s\nwant:\n%s", got, before)
	}
}

// TestRecoveryEndsADeletionAPersonCommittedDone: kk serve killed between
// a deletion's write and its commit, and a person's git commit -a while
// it was down, which took the deletion as the person's commit. Found by
// the serve10 red team: the restart left the note deleted, as the
// person's commit has it, but queued the job again, and its run failed
// with "file not found": the job ended failed although the branch holds
// exactly what it would have committed. Recovery ends it done, at its
// path, with nothing put back and no commit of its own.
func TestRecoveryEndsADeletionAPersonCommittedDone(t *testing.T) {
	for _, c := range []struct {
		name   string
		person []string // what the person does while kk serve is down
		done   bool     // the job ends done at recovery; else it is queued again
	}{
		{"committed", []string{"commit", "-qam", "the person's commit -a"}, true},
		// The person put the note back (git checkout): the deletion is
		// in no commit, and the job runs again.
		{"undone", []string{"checkout", "--", "."}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			recoverDeletionAfter(t, c.person, c.done)
		})
	}
}

// recoverDeletionAfter kills a deletion before its commit, runs person
// (a git command) and recovers the job: done or queued again.
func recoverDeletionAfter(t *testing.T, person []string, done bool) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	note := s.post(t, httpapi.PostRequest{Title: "Deleted note", Content: "To be deleted.\n"})
	s.stop()
	b := New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	dir := filepath.Join(k.StateDir(), "queue")
	q, err := jobqueue.Open(dir, b.QueueOptions())
	if err != nil {
		t.Fatal(err)
	}
	req := service.JobRequest{Path: note.Path}
	payload, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	queued, _, err := q.Enqueue(jobqueue.Request{Op: service.OpDelete, Path: note.Path, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	var touched []string
	job := &service.Job{ID: queued.ID, Op: service.OpDelete, Request: req, Created: time.Now()}
	withTouch(job, &touched)
	job.OnDefer(func(func(context.Context) error) {}) // killed: the commit never runs
	if _, err := b.Apply(ctx, job); err != nil {
		t.Fatal(err)
	}
	git(t, k, append([]string{"-c", "user.name=p", "-c", "user.email=p@p"}, person...)...)
	head := git(t, k, "rev-parse", "HEAD")
	// The record as the kill left it: in processing, its paths announced.
	rec := filepath.Join(dir, queued.ID+".json")
	data, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	var j jobqueue.Job
	if err := json.Unmarshal(data, &j); err != nil {
		t.Fatal(err)
	}
	j.Status, j.Attempts, j.Touched = jobqueue.Processing, 1, touched
	if data, err = json.Marshal(j); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rec, data, 0o644); err != nil {
		t.Fatal(err)
	}
	q, err = jobqueue.Open(dir, b.QueueOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := q.Recover(ctx); err != nil {
		t.Fatal(err)
	}
	got, _ := q.Get(queued.ID)
	_, statErr := os.Stat(k.NodePath(note.Path))
	switch {
	case done && (got.Status != jobqueue.Done || got.Path != note.Path || got.Error != ""):
		t.Errorf("the job after recovery: %+v", got)
	case done && !errors.Is(statErr, fs.ErrNotExist):
		t.Errorf("recovery put back the note the person's commit deleted: %v", statErr)
	case !done && got.Status != jobqueue.Queued:
		t.Errorf("a deletion the person undid, in no commit, ended at recovery: %+v", got)
	case !done && statErr != nil:
		t.Errorf("the note the person put back: %v", statErr)
	}
	if now := git(t, k, "rev-parse", "HEAD"); now != head {
		t.Errorf("recovery moved the branch from %s to %s", head, now)
	}
	clean(t, k)
	headChecks(t, k)
}

// TestRecoveryIgnoresAPersonsCommitWithAJobsSubject: kk serve killed
// between a post's write and its commit, and a person's commit whose
// subject copies the job's ("store(<id>): <path>": pasted from the log,
// or made by a script). Found by the serve10 red team: recovery took
// any commit whose subject names the job for the job's own, so the job
// was done with its note never committed (its files left as uncommitted
// changes), and /posts/recents listed the person's commit as a post.
// Only kk serve's commits (its author) are a job's: the job is put back
// and run again, and lands with its one commit.
func TestRecoveryIgnoresAPersonsCommitWithAJobsSubject(t *testing.T) {
	k := newRepo(t, 0)
	b := New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	var touched []string
	id := "job-killed-before-its-commit"
	job := &service.Job{ID: id, Op: service.OpStore, Request: service.JobRequest{Title: "Copied subject", Content: "Posted.\n"}, Created: time.Now()}
	withTouch(job, &touched)
	job.OnDefer(func(func(context.Context) error) {}) // killed: the commit never runs
	leaf, err := b.Apply(ctx, job)
	if err != nil {
		t.Fatal(err)
	}
	for _, who := range [][2]string{{"p", "p@p"}, {"kk serve", "someone@else"}, {"someone", "kk-serve@kk.invalid"}} {
		git(t, k, "-c", "user.name="+who[0], "-c", "user.email="+who[1], "commit", "-q", "--allow-empty", "-m", gitx.JobSubject(service.OpStore, id, leaf))
	}
	if c, found, err := b.Committed(ctx, id); err != nil || found {
		t.Fatalf("a person's commit copying the job's subject was taken for the job's: %q %v %v", c, found, err)
	}
	if posts, err := b.Recent(ctx, 10); err != nil || len(posts) != 0 {
		t.Errorf("recent posts list a person's commits: %+v %v", posts, err)
	}
	if err := b.Restore(ctx, jobqueue.Job{ID: id, Op: job.Op, Status: jobqueue.Processing, Touched: touched}); err != nil {
		t.Fatal(err)
	}
	clean(t, k)
	var last func(context.Context) error
	job.OnDefer(func(fn func(context.Context) error) { last = fn })
	again, err := b.Apply(ctx, job)
	if err != nil {
		t.Fatalf("the job run again: %v", err)
	}
	if err := last(ctx); err != nil {
		t.Fatalf("its commit: %v", err)
	}
	if c, found, err := b.Committed(ctx, id); err != nil || !found || c != again {
		t.Errorf("the job's own commit: %q %v %v", c, found, err)
	}
	clean(t, k)
	headChecks(t, k)
}

// TestRecoveryAfterARecoveryKilledHalfway: kk serve killed between an
// edit's write and its commit, then killed again while its restart put
// the note's bytes back (the undo's transaction applied, its journal not
// yet dropped). The next start asked git whether the branch holds the
// note as the work tree does before that transaction's journal was
// rolled back: it read the half-done undo's bytes (the branch's), took
// the edit for a person's commit and left the note, the rollback then
// brought the job's bytes back, and the job, run again, found nothing to
// change: done with no change of the note, which stayed modified in the
// work tree (TestServeSoakKill9, seed 601 iteration 114). The question is
// now asked inside the undo's transaction, after the rollback.
func TestRecoveryAfterARecoveryKilledHalfway(t *testing.T) {
	id := "job-killed-twice"
	k, path, before, b, rj := killedEdit(t, id)

	// The restart's undo, killed once its files are written.
	done := make(chan struct{})
	go func() {
		defer close(done)
		killed := txn.WithFaults(ctx, txn.Faults{At: func(point string) {
			if point == "applied" {
				runtime.Goexit()
			}
		}})
		_ = b.Restore(killed, rj)
		t.Error("the undo was not killed")
	}()
	<-done
	if got, _ := os.ReadFile(k.NodePath(path)); string(got) != string(before) {
		t.Fatalf("the killed undo had not put the note back:\n%s", got)
	}

	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// The next start's undo.
	b2 := New(Options{KB: k})
	t.Cleanup(func() { _ = b2.Close() })
	if err := b2.Restore(ctx, rj); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(k.NodePath(path)); string(got) != string(before) {
		t.Errorf("the note after the second undo:\n%s\nwant it as before the job:\n%s", got, before)
	}
	if st := git(t, k, "status", "--porcelain", "--", ".ai/kenkeep/nodes"); st != "" {
		t.Errorf("the undo left the notes differing from the branch:\n%s", st)
	}
	if txn.HasOriginals(k, id) {
		t.Error("the originals kept for the job are left")
	}
}

// killedEdit is kk serve killed between an edit's write and its commit:
// a note committed by a server, then edit job id applied by a new
// backend whose commit never runs. It returns the repository, the
// note's path and its bytes before the job, the backend, and the job as
// the next start's recovery finds it.
func killedEdit(t *testing.T, id string) (k *store.KB, path string, before []byte, b *Backend, rj jobqueue.Job) {
	t.Helper()
	k = newRepo(t, 0)
	s := start(t, k, nil)
	note := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
	s.stop()
	before, err := os.ReadFile(k.NodePath(note.Path))
	if err != nil {
		t.Fatal(err)
	}
	b = New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	var touched []string
	job := &service.Job{ID: id, Op: service.OpEdit, Request: service.JobRequest{Path: note.Path, Content: "Edited by the job.\n"}, Created: time.Now()}
	withTouch(job, &touched)
	job.OnDefer(func(func(context.Context) error) {}) // killed: the commit never runs
	if _, err := b.Apply(ctx, job); err != nil {
		t.Fatal(err)
	}
	return k, note.Path, before, b, jobqueue.Job{ID: id, Op: service.OpEdit, Path: note.Path, Status: jobqueue.Processing, Touched: touched}
}
