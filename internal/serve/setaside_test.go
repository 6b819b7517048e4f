package serve

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/jobqueue"
	"github.com/kk-project/kk/internal/service"
	"github.com/kk-project/kk/internal/txn"
)

// TestFaultDamagedQueueRecordIsSetAside: a job record of the queue
// damaged while kk serve was down (cut short by a crash or a full disk,
// overwritten) no longer keeps the server from starting. With real git:
// the record of a job done is damaged, and so is that of a job a kill
// left written and not committed. The next start sets both aside, kept,
// beside the queue's folder; the job done is still done, at its path (its
// commit is found); the other has its files put back (the work tree as
// before it, nothing uncommitted) and fails, saying where its record
// went; later posts are done. Found by the serve red team, round 5.
func TestFaultDamagedQueueRecordIsSetAside(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	done := s.post(t, httpapi.PostRequest{Title: "Done before", Content: "Done.\n"})
	s.stop()
	qdir := filepath.Join(k.StateDir(), "queue")
	q, err := jobqueue.Open(qdir, jobqueue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	payload, _ := json.Marshal(service.JobRequest{Title: "Half done", Content: "Half.\n"})
	half, _, err := q.Enqueue(jobqueue.Request{Op: service.OpStore, Payload: payload})
	if err != nil {
		t.Fatal(err)
	}
	b := New(Options{KB: k})
	killed := make(chan struct{})
	go func() {
		defer close(killed)
		_ = q.Run(context.Background(), func(ctx context.Context, w *jobqueue.Work) (string, error) {
			job := &service.Job{ID: w.Job.ID, Op: w.Job.Op, Request: service.JobRequest{Title: "Half done", Content: "Half.\n"}, Created: w.Job.Created}
			job.OnTouch(w.Touch)
			job.OnDefer(func(func(context.Context) error) { runtime.Goexit() }) // killed before its commit
			return b.Apply(ctx, job)
		})
	}()
	<-killed
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	if !txn.HasOriginals(k, half.ID) || git(t, k, "status", "--porcelain") == "" {
		t.Fatal("the simulated kill left nothing written")
	}
	for id, data := range map[string]string{done.JobID: "\x00\x00\x00\x00", half.ID: `{"id":"` + half.ID[:10]} {
		if err := os.WriteFile(filepath.Join(qdir, id+".json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s = start(t, k, nil)
	aside := jobqueue.SetAsideDir(qdir)
	for _, id := range []string{done.JobID, half.ID} {
		if _, err := os.Stat(filepath.Join(aside, id+".json")); err != nil {
			t.Errorf("the damaged record of %s was not kept: %v", id, err)
		}
	}
	if j := s.waitJob(t, done.JobID, 30*time.Second); j.Status != "done" || j.Path != done.Path {
		t.Errorf("the job done before, its record damaged: %+v; want done at %s", j, done.Path)
	}
	if j := s.waitJob(t, half.ID, 30*time.Second); j.Status != "failed" || !strings.Contains(j.Error, aside) {
		t.Errorf("the job written and not committed, its record damaged: %+v", j)
	}
	if st := git(t, k, "status", "--porcelain"); st != "" {
		t.Errorf("the files of the job whose record was damaged were not put back:\n%s", st)
	}
	if next := s.post(t, httpapi.PostRequest{Title: "After", Content: "Served.\n"}); next.Status != "done" {
		t.Errorf("a post after the start: %+v", next)
	}
}
