package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/service"
)

// TestRecoveryUndoesTheLaterOfTwoJobsFirst: two edits of one note, the
// second applied on the first's file while the first's commit ran (the
// worker overlaps them), and kk serve killed before either commit. The
// worker undoes such a pair the later first (an undo puts back the bytes
// its job found); recovery undid them oldest first: the first's undo
// found the second's bytes in the note and left them as a person's edit
// (dropping its originals), the second's then put back the first's bytes,
// which stayed in the work tree as an uncommitted change, and both jobs,
// run again, took it for a person's edit. Recovery now undoes the jobs a
// crash left in processing newest first: the note is as the branch holds
// it, and both edits run again and land, one commit each.
func TestRecoveryUndoesTheLaterOfTwoJobsFirst(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	note := s.post(t, httpapi.PostRequest{Title: "Twice edited", Content: "Before both edits.\n"})
	s.stop()
	path := k.NodePath(note.Path)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{KB: k})
	dir := filepath.Join(k.StateDir(), "queue")
	q, err := jobqueue.Open(dir, b.QueueOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, content := range []string{"The first edit.\n", "The second edit.\n"} {
		req := service.JobRequest{Path: note.Path, Content: content}
		payload, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		queued, _, err := q.Enqueue(jobqueue.Request{Op: service.OpEdit, Path: note.Path, Payload: payload})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, queued.ID)
		var touched []string
		job := &service.Job{ID: queued.ID, Op: service.OpEdit, Request: req, Created: time.Now()}
		withTouch(job, &touched)
		job.OnDefer(func(func(context.Context) error) {}) // killed: the commit never lands
		if _, err := b.Apply(ctx, job); err != nil {
			t.Fatalf("applying %q: %v", content, err)
		}
		// The record as the kill left it: in processing, its paths
		// announced.
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
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	// The next start.
	s = start(t, k, nil)
	for _, id := range ids {
		if j := s.wait(t, id); j.Status != "done" {
			t.Errorf("job %s after recovery: %+v", id, j)
		}
	}
	if got, err := os.ReadFile(path); err != nil || !strings.Contains(string(got), "The second edit.") {
		t.Errorf("the note after both edits ran again: %q %v (before them: %q)", got, err, before)
	}
	for i, id := range ids {
		if n := strings.Count(git(t, k, "log", "--format=%s"), "("+id+")"); n != 1 {
			t.Errorf("edit %d has %d commits", i+1, n)
		}
	}
	clean(t, k)
	headChecks(t, k)
}
