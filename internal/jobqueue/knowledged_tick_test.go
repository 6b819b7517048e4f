package jobqueue

// Ports of knowledged's TestNextPushDelay_UsesPersistedLastAttempt and
// TestNextPushDelay_DueImmediatelyWhenMissingOrExpired
// (wiztools/knowledged internal/queue/queue_test.go at da946d4): the
// period of the push tick carries over a restart, so a server restarted
// more often than --push-every still pushes.

import (
	"context"
	"testing"
	"time"
)

// runTicks runs q's worker with OnTick counting into a channel, enqueues
// one job and waits for it, and returns the channel and a stop function.
func runTicks(t *testing.T, o Options) (<-chan struct{}, func()) {
	t.Helper()
	ticks := make(chan struct{}, 16)
	o.OnTick = func(context.Context) { ticks <- struct{}{} }
	q := open(t, t.TempDir(), o)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- q.Run(ctx, func(context.Context, *Work) (string, error) { return "x.md", nil }) }()
	j := enqueue(t, q, "store", "x", "")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if got, _ := q.Get(j.ID); got.Status == Done {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the job did not end")
		}
		time.Sleep(time.Millisecond)
	}
	return ticks, func() {
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

func TestTickFromAnEarlierRun(t *testing.T) {
	// The last tick was a period and a half ago: the next is due at once
	// (without TickFrom it would come an hour after the start).
	ticks, stop := runTicks(t, Options{Every: time.Hour, TickFrom: time.Now().Add(-90 * time.Minute)})
	select {
	case <-ticks:
	case <-time.After(10 * time.Second):
		t.Error("a tick overdue at the start did not run")
	}
	stop()

	// The last tick was a moment ago: the next is most of a period away.
	ticks, stop = runTicks(t, Options{Every: time.Hour, TickFrom: time.Now().Add(-time.Minute)})
	stop()
	if len(ticks) != 0 {
		t.Error("a tick ran before its period was over")
	}
}
