package serve

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/service"
)

// TestTheJobAfterAFailedCommitRunsAgain: a job's commit fails (git that
// fails, a hook of the person's that refuses it) while the next job,
// an edit, was already written on its files. The worker puts the edit
// back, then the failed job, and runs the edit again. Found by the
// serve11 red team (git failing at random under a stream of posts and
// edits): the edit, run again on a clean work tree, failed with "the
// note has changes in the work tree that are not committed (a person's
// edit)", naming changes no one made: the edit's first transaction was
// still taken for the one whose commit was in flight, and its bytes for
// what the branch would hold. A job put back is in flight no more.
func TestTheJobAfterAFailedCommitRunsAgain(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	note := s.post(t, httpapi.PostRequest{Title: "Base", Content: "Base.\n"})
	s.stop()
	b := New(Options{KB: k})
	t.Cleanup(func() { _ = b.Close() })
	var touchedS, touchedE []string
	post := &service.Job{ID: "job-whose-commit-fails", Op: service.OpStore, Request: service.JobRequest{Title: "Refused", Content: "Refused.\n"}, Created: time.Now()}
	edit := &service.Job{ID: "job-written-behind-it", Op: service.OpEdit, Request: service.JobRequest{Path: note.Path, Content: "Edited.\n"}, Created: time.Now()}
	withTouch(post, &touchedS)
	withTouch(edit, &touchedE)
	var lastS, lastE func(context.Context) error
	post.OnDefer(func(fn func(context.Context) error) { lastS = fn })
	edit.OnDefer(func(fn func(context.Context) error) { lastE = fn })
	if _, err := b.Apply(ctx, post); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Apply(ctx, edit); err != nil {
		t.Fatal(err)
	}
	allow := rejectCommits(t, k)
	if err := lastS(ctx); err == nil {
		t.Fatal("the refused commit landed")
	}
	allow()
	// The worker's order: the job behind first, then the failed one.
	for _, j := range []jobqueue.Job{
		{ID: edit.ID, Op: edit.Op, Path: note.Path, Status: jobqueue.Processing, Touched: touchedE},
		{ID: post.ID, Op: post.Op, Status: jobqueue.Processing, Touched: touchedS},
	} {
		if err := b.Restore(ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	clean(t, k)
	edit.OnDefer(func(fn func(context.Context) error) { lastE = fn })
	if _, err := b.Apply(ctx, edit); err != nil {
		t.Fatalf("the edit run again: %v", err)
	}
	if err := lastE(ctx); err != nil {
		t.Fatalf("its commit: %v", err)
	}
	jobCommit(t, k, service.OpEdit, httpapi.JobStatus{JobID: edit.ID, Path: note.Path})
	if got := git(t, k, "show", "HEAD:.ai/kenkeep/nodes/"+note.Path); !strings.Contains(got, "Edited.") {
		t.Errorf("the note committed:\n%s", got)
	}
	clean(t, k)
	headChecks(t, k)
}
