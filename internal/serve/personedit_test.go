package serve

import (
	"context"
	"github.com/kk-project/kk/internal/service"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/store"
)

// TestFaultEditOfALeafWithAPersonsChanges: found by an outside fault
// run. A PUT of a note a person had edited in the work tree and not
// committed committed the person's lines in kk serve's edit(…) commit,
// as the server's work (a metadata-only edit), or replaced them for good
// (an edit of the content: their lines were in no commit and no file);
// so did a DELETE, and an edit of a leaf never committed (kk node write).
// Such a job fails, naming the note and what to do, makes no commit,
// and the person's bytes are back as they were; a job on a note whose
// work tree is its commit's is done as before, and so are the jobs
// after the failed one.
func TestFaultEditOfALeafWithAPersonsChanges(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	c := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
	in := contracts.NodeInput{Type: "map", Title: "Uncommitted note", Description: "d", Body: "Written by kk node write.\n", Folder: "inbox"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "kk node write"}); err != nil {
		t.Fatal(err)
	}
	uncommitted := "inbox/map-uncommitted-note.md"
	committed, err := os.ReadFile(k.NodePath(c.Path))
	if err != nil {
		t.Fatal(err)
	}
	hand := string(committed) + "A person's line, not committed.\n"
	writeFile(t, k.NodePath(c.Path), hand)
	written, err := os.ReadFile(k.NodePath(uncommitted))
	if err != nil {
		t.Fatal(err)
	}
	head := git(t, k, "rev-parse", "HEAD")
	for _, tc := range []struct {
		name string
		post func() (httpapi.JobStatus, error)
		path string
		want string
	}{
		{"metadata-only edit", func() (httpapi.JobStatus, error) {
			return s.Client.Edit(ctx, httpapi.EditRequest{Path: c.Path, Title: "Retitled"})
		}, c.Path, hand},
		{"edit of the content", func() (httpapi.JobStatus, error) {
			return s.Client.Edit(ctx, httpapi.EditRequest{Path: c.Path, Content: "Replaced by a client.\n"})
		}, c.Path, hand},
		{"delete", func() (httpapi.JobStatus, error) {
			return s.Client.Delete(ctx, c.Path)
		}, c.Path, hand},
		{"edit of a leaf never committed", func() (httpapi.JobStatus, error) {
			return s.Client.Edit(ctx, httpapi.EditRequest{Path: uncommitted, Title: "Retitled"})
		}, uncommitted, string(written)},
	} {
		queued, err := tc.post()
		if err != nil {
			t.Fatal(err)
		}
		j := s.wait(t, queued.JobID)
		if j.Status != "failed" || !strings.Contains(j.Error, tc.path) || !strings.Contains(j.Error, "not committed") {
			t.Errorf("%s of a leaf with a person's changes: %+v", tc.name, j)
		}
		if got, _ := os.ReadFile(k.NodePath(tc.path)); string(got) != tc.want {
			t.Errorf("after the %s, %s holds:\n%s\nwant the person's:\n%s", tc.name, tc.path, got, tc.want)
		}
		if got := git(t, k, "rev-parse", "HEAD"); got != head {
			t.Fatalf("the %s made a commit:\n%s", tc.name, git(t, k, "show", "--stat", "HEAD"))
		}
	}
	// Two edits in a row (the second written on the first's files while
	// the first's commit is refused): both fail, the person's bytes back.
	var row []string
	for _, text := range []string{"First of a row.\n", "Second of a row.\n"} {
		q, err := s.Client.Edit(ctx, httpapi.EditRequest{Path: c.Path, Content: text})
		if err != nil {
			t.Fatal(err)
		}
		row = append(row, q.JobID)
	}
	for _, id := range row {
		if j := s.wait(t, id); j.Status != "failed" {
			t.Errorf("an edit in a row of a leaf with a person's changes: %+v", j)
		}
	}
	if got, _ := os.ReadFile(k.NodePath(c.Path)); string(got) != hand {
		t.Errorf("after two edits in a row, %s holds:\n%s\nwant the person's:\n%s", c.Path, got, hand)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("edits in a row made a commit:\n%s", git(t, k, "show", "--stat", "HEAD"))
	}
	// Once the person commits their edit, the client's edit goes through,
	// on the person's lines; so does a post beside.
	git(t, k, "add", store.DirName)
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qm", "the person's edit")
	j := s.edit(t, httpapi.EditRequest{Path: c.Path, Title: "Retitled"})
	if j.Status != "done" {
		t.Fatalf("the edit after the person committed: %+v", j)
	}
	jobCommit(t, k, "edit", j)
	if got, _ := os.ReadFile(k.NodePath(c.Path)); !strings.Contains(string(got), "A person's line") || !strings.Contains(string(got), "title: Retitled") {
		t.Errorf("the edit after the person committed:\n%s", got)
	}
	// Two edits of one note in a row (the second written while the
	// first's commit lands) are both done.
	a, err := s.Client.Edit(ctx, httpapi.EditRequest{Path: c.Path, Content: "First.\n"})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Client.Edit(ctx, httpapi.EditRequest{Path: c.Path, Content: "Second.\n"})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{a.JobID, b.JobID} {
		if j := s.wait(t, id); j.Status != "done" {
			t.Errorf("edits in a row: %+v", j)
		}
	}
	clean(t, k)
	headChecks(t, k)
}

// TestEditCommittedByThePersonBeforeItsCommit: a person's git commit -a
// between a job's write and its commit (the job's edit committed as the
// person's) leaves the tip holding what the job wrote: the job is done
// with its commit (no check refuses it as the person's changes), and the
// work tree is the tip's.
func TestEditCommittedByThePersonBeforeItsCommit(t *testing.T) {
	k, path := raceAJobWithAPersonsCommit(t, "job-raced-by-a-person", service.OpEdit, "Edited by the job.\n", "its edit")
	jobCommit(t, k, "edit", httpapi.JobStatus{JobID: "job-raced-by-a-person", Path: path})
	if got, _ := os.ReadFile(k.NodePath(path)); !strings.Contains(string(got), "Edited by the job.") {
		t.Errorf("the note after the job:\n%s", got)
	}
	clean(t, k)
}

// TestDeleteCommittedByThePersonBeforeItsCommit: as
// TestEditCommittedByThePersonBeforeItsCommit, for a deletion: the
// person's git commit -a committed the job's removal of the note, whose
// bytes the branch held; the job is done with its commit.
func TestDeleteCommittedByThePersonBeforeItsCommit(t *testing.T) {
	k, path := raceAJobWithAPersonsCommit(t, "job-delete-raced-by-a-person", service.OpDelete, "", "its deletion")
	jobCommit(t, k, "delete", httpapi.JobStatus{JobID: "job-delete-raced-by-a-person", Path: path})
	if _, err := os.Stat(k.NodePath(path)); err == nil {
		t.Errorf("the note is back after its deletion")
	}
	clean(t, k)
}

// raceAJobWithAPersonsCommit posts a note, then runs job id (op on that
// note, with content) up to its commit, lets a person's git commit -a
// take the job's change, and runs the job's commit, which must succeed.
// It returns the repository and the note's path.
func raceAJobWithAPersonsCommit(t *testing.T, id, op, content, what string) (*store.KB, string) {
	t.Helper()
	k := newRepo(t, 0)
	s := start(t, k, nil)
	c := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
	s.stop()
	b := New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	var touched []string
	var last func(context.Context) error
	job := &service.Job{ID: id, Op: op, Request: service.JobRequest{Path: c.Path, Content: content}, Created: time.Now()}
	withTouch(job, &touched)
	job.OnDefer(func(fn func(context.Context) error) { last = fn })
	if _, err := b.Apply(ctx, job); err != nil {
		t.Fatal(err)
	}
	git(t, k, "-c", "user.name=p", "-c", "user.email=p@p", "commit", "-qam", "the person's commit -a")
	if err := last(ctx); err != nil {
		t.Fatalf("the job's commit after the person committed %s: %v", what, err)
	}
	return k, c.Path
}

// TestAnEditOfANoteWithAPersonsChangesWritesNothing: found by a chaos
// run (posts, edits, a person appending lines to a note and committing
// now and then, kill -9): a person's lines were lost with no kill at
// all. An edit of a note with the person's uncommitted line A was
// written (A gone from the file), the person appended line B to the
// file as the job left it, the commit refused the person's changes, and
// the undo left the file alone (it held neither the job's bytes nor the
// original): B stayed, A was in no file and no commit (so with a
// deletion). (Before the undo kept later edits, it was B that was
// lost.) The edit or deletion now fails before it writes anything, the
// branch taken as the commit in flight leaves it, so both lines stay.
func TestAnEditOfANoteWithAPersonsChangesWritesNothing(t *testing.T) {
	for _, op := range []string{service.OpEdit, service.OpDelete} {
		t.Run(op, func(t *testing.T) {
			k := newRepo(t, 0)
			s := start(t, k, nil)
			c := s.post(t, httpapi.PostRequest{Title: "Committed note", Content: "Committed.\n"})
			s.stop()
			appendLine(t, k, c.Path)
			b := New(Options{KB: k})
			t.Cleanup(func() { _ = b.Close() })
			var touched []string
			var last func(context.Context) error
			job := &service.Job{ID: "job-" + op + "-of-a-persons-note", Op: op, Request: service.JobRequest{Path: c.Path, Content: "Replaced by a client.\n"}, Created: time.Now()}
			withTouch(job, &touched)
			job.OnDefer(func(fn func(context.Context) error) { last = fn })
			_, err := b.Apply(ctx, job)
			if err == nil {
				// The job wrote: the person appends to the note again
				// (echo … >> note), the commit fails, and the job's files
				// are put back.
				appendTo(t, k.NodePath(c.Path), "The person's second line.\n")
				if err := last(ctx); err == nil {
					t.Fatal("the commit of a note with the person's changes was made")
				}
				if err := b.Restore(ctx, jobFrom(job, touched)); err != nil {
					t.Fatal(err)
				}
			} else {
				if !strings.Contains(err.Error(), c.Path) || !strings.Contains(err.Error(), "not committed") {
					t.Errorf("the job's error does not name the note and its changes: %v", err)
				}
				appendTo(t, k.NodePath(c.Path), "The person's second line.\n")
			}
			got := readFile(t, k.NodePath(c.Path))
			if !strings.Contains(got, "A person's line, not committed.") || !strings.Contains(got, "The person's second line.") {
				t.Errorf("the person's lines are not both in the note:\n%s", got)
			}
		})
	}
}

// appendTo appends text to the file at path, as echo … >> path does.
func appendTo(t *testing.T, path, text string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteString(text); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}
