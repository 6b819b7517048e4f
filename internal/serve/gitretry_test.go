package serve

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
)

// TestFaultGitFailurePartwayThroughACommitIsRetried: a git command that
// fails partway through a job's commit (here git update-index, after the
// commit's objects are written), for a reason git does not say is the
// job's, failed the job at once with git's words, though the next try
// would have worked (a git process of the person's holding a file a
// moment, a git killed): the post was lost. Such a job is held as for a
// lock (docs/serve.md): its files put back, queued again first, and run
// again after the queue's back-off, so a failure that passes leaves it
// done with its one commit and a clean tree; one that does not pass fails
// it after gitTries tries, with git's words, its files put back and no
// commit, and the next job is done.
func TestFaultGitFailurePartwayThroughACommitIsRetried(t *testing.T) {
	const says = "fatal: unable to write new index file"
	flag := gitThatFails(t, "update-index", "--index-info", says)
	k := newRepo(t, 0)
	s := start(t, k, nil)
	first := s.post(t, httpapi.PostRequest{Title: "Before", Content: "Committed before git fails.\n"})
	if first.Status != "done" {
		t.Fatalf("post: %+v", first)
	}
	// git fails twice, then works.
	if err := os.WriteFile(flag, []byte("2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	j := s.post(t, httpapi.PostRequest{Title: "Passing failure", Content: "Committed once git works again.\n"})
	if j.Status != "done" {
		t.Fatalf("the job whose commit git failed twice: %+v", j)
	}
	if left, _ := os.ReadFile(flag); strings.TrimSpace(string(left)) != "0" {
		t.Fatalf("git's failures left: %q (the commit did not meet them)", left)
	}
	jobCommit(t, k, "store", j)
	clean(t, k)
	// git fails every time: the job fails with git's words, its note
	// gone, no commit.
	if err := os.WriteFile(flag, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	head := git(t, k, "rev-parse", "HEAD")
	f := s.post(t, httpapi.PostRequest{Title: "Lasting failure", Content: "Never committed.\n"})
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	if f.Status != "failed" || !strings.Contains(f.Error, says) {
		t.Fatalf("the job whose commit git always failed: %+v", f)
	}
	if _, err := os.Stat(k.NodePath("inbox/map-lasting-failure.md")); !os.IsNotExist(err) {
		t.Errorf("the failed job's note is still there: %v", err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the failed job made a commit:\n%s", git(t, k, "show", "--stat", "HEAD"))
	}
	clean(t, k)
	next := s.post(t, httpapi.PostRequest{Title: "After", Content: "Committed after.\n"})
	if next.Status != "done" {
		t.Fatalf("the next job: %+v", next)
	}
	jobCommit(t, k, "store", next)
	if h := s.health(t); h.Status != "ok" {
		t.Errorf("health after: %+v", h)
	}
}

// TestFaultGitFailureTriesAreCountedAcrossARestart: the tries of a job
// whose commit git fails for no reason kk can name were counted in the
// running server only, so a server that stopped (a crash loop, a
// service manager's restarts) between two tries started the count again
// each time, and the job was tried for ever. The count is kept in the
// job's record in the queue: the job fails after gitTries failures in
// all, however many starts they span, its files put back each time and
// no commit made.
func TestFaultGitFailureTriesAreCountedAcrossARestart(t *testing.T) {
	const says = "fatal: unable to write new index file"
	const budget = 100
	flag := gitThatFails(t, "update-index", "--index-info", says)
	k := newRepo(t, 0)
	if err := os.WriteFile(flag, []byte(fmt.Sprintln(budget)), 0o644); err != nil {
		t.Fatal(err)
	}
	failures := func() int {
		data, err := os.ReadFile(flag)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			return 0 // the wrapper is writing it
		}
		return budget - n
	}
	head := git(t, k, "rev-parse", "HEAD")
	s := start(t, k, nil)
	j, err := s.Client.Post(ctx, httpapi.PostRequest{Title: "Lasting failure", Content: "Never committed.\n"})
	if err != nil {
		t.Fatal(err)
	}
	// Two tries fail, then the server stops, between two tries.
	for failures() < 2 {
		time.Sleep(5 * time.Millisecond)
	}
	s.stop()
	before := failures()
	if got, _ := s.Queue.Get(j.JobID); got.Status != jobqueue.Queued || before >= gitTries {
		t.Fatalf("after %d failures the job is %+v, not queued for its next try", before, got)
	}
	if _, err := os.Stat(k.NodePath("inbox/map-lasting-failure.md")); !os.IsNotExist(err) {
		t.Errorf("the held job's note is still there: %v", err)
	}
	clean(t, k)
	s = start(t, k, nil)
	f := s.wait(t, j.JobID)
	if f.Status != "failed" || !strings.Contains(f.Error, says) {
		t.Fatalf("the job whose commit git always failed: %+v", f)
	}
	if n := failures(); n != gitTries {
		t.Errorf("git failed %d times (%d before the restart), want %d in all", n, before, gitTries)
	}
	if _, err := os.Stat(k.NodePath("inbox/map-lasting-failure.md")); !os.IsNotExist(err) {
		t.Errorf("the failed job's note is still there: %v", err)
	}
	if got := git(t, k, "rev-parse", "HEAD"); got != head {
		t.Fatalf("the failed job made a commit:\n%s", git(t, k, "show", "--stat", "HEAD"))
	}
	clean(t, k)
	if err := os.Remove(flag); err != nil {
		t.Fatal(err)
	}
	next := s.post(t, httpapi.PostRequest{Title: "After", Content: "Committed after.\n"})
	if next.Status != "done" {
		t.Fatalf("the next job: %+v", next)
	}
	jobCommit(t, k, "store", next)
}
