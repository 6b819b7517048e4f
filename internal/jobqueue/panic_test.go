package jobqueue

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// TestAJobThatPanicsFailsAlone: a job whose run panics (a bug of kk's on
// an input no one foresaw), in its apply or in its deferred last step.
// Found by the serve11 red team: the panic ended the worker's process,
// so kk serve stopped serving for every other client over one job (and,
// restarted, ran it again up to MaxAttempts times, stopping each time).
// The job fails with the reason, its files put back; the worker goes on
// with the next job.
func TestAJobThatPanicsFailsAlone(t *testing.T) {
	var mu sync.Mutex
	var restored []string
	q := open(t, t.TempDir(), Options{Restore: func(_ context.Context, j Job) error {
		mu.Lock()
		defer mu.Unlock()
		restored = append(restored, j.ID)
		return nil
	}})
	inApply := enqueue(t, q, "store", "panics in apply", "")
	inLast := enqueue(t, q, "store", "panics in its last step", "")
	after := enqueue(t, q, "store", "after", "")
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) {
		switch string(w.Payload) {
		case "panics in apply":
			var s []string
			_ = s[len(w.Payload)] // a bug: an index out of range
		case "panics in its last step":
			w.Defer(func(context.Context) error { panic("a bug in the commit") })
		}
		return "p.md", nil
	}, inApply.ID, inLast.ID, after.ID)
	for _, id := range []string{inApply.ID, inLast.ID} {
		j, _ := q.Get(id)
		if j.Status != Failed || !strings.Contains(j.Error, "panic") {
			t.Errorf("the job that panicked: %+v", j)
		}
	}
	if j, _ := q.Get(after.ID); j.Status != Done {
		t.Errorf("the job after: %+v", j)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(restored) < 2 {
		t.Errorf("the files of the jobs that panicked were not put back: %v", restored)
	}
}
