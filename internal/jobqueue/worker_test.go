package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// A job whose undo cannot run fails alone, with both reasons; the worker
// goes on with the next job and Run does not return.
func TestAFailedUndoFailsOnlyItsJob(t *testing.T) {
	q := open(t, t.TempDir(), Options{Restore: func(_ context.Context, j Job) error {
		if j.Touched != nil && j.Touched[0] == "bad" {
			return errors.New("the disk is full")
		}
		return nil
	}})
	a := enqueue(t, q, "store", "a", "")
	b := enqueue(t, q, "store", "b", "")
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) {
		if string(w.Payload) == "a" {
			_ = w.Touch("bad")
			return "", errors.New("the commit failed")
		}
		return "b.md", nil
	}, a.ID, b.ID)
	ja, _ := q.Get(a.ID)
	if ja.Status != Failed || !strings.Contains(ja.Error, "the commit failed") || !strings.Contains(ja.Error, "the disk is full") {
		t.Errorf("a: %+v", ja)
	}
	if jb, _ := q.Get(b.ID); jb.Status != Done {
		t.Errorf("b: %+v", jb)
	}
}

// An interrupted job whose files cannot be put back at the next start
// fails with the reason, and the start goes on: Run does not stop.
func TestRecoveryThatCannotUndoFailsTheJob(t *testing.T) {
	dir := t.TempDir()
	q := open(t, dir, Options{})
	a := enqueue(t, q, "store", "a", "")
	b := enqueue(t, q, "store", "b", "")
	crash(t, q, "x")
	q = open(t, dir, Options{Restore: func(context.Context, Job) error { return errors.New("no space left") }})
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return "p.md", nil }, a.ID, b.ID)
	if ja, _ := q.Get(a.ID); ja.Status != Failed || !strings.Contains(ja.Error, "no space left") {
		t.Errorf("a: %+v", ja)
	}
	if jb, _ := q.Get(b.ID); jb.Status != Done {
		t.Errorf("b: %+v", jb)
	}
}

// While the environment is not ready (Ready fails), jobs stay queued,
// the worker waits and says why; once it is, they run. A job whose run
// the environment stopped (ErrHeld) is put back, first, not failed; a
// recovery that cannot look for the commit is tried again, not given up.
func TestHeldEnvironmentKeepsJobsQueued(t *testing.T) {
	dir := t.TempDir()
	q := open(t, dir, Options{})
	stuck := enqueue(t, q, "store", "stuck", "")
	crash(t, q)
	var mu sync.Mutex
	ready := errors.New("index.lock is held by another git process")
	lookups := 0
	q = open(t, dir, Options{
		Committed: func(context.Context, string) (string, bool, error) {
			mu.Lock()
			defer mu.Unlock()
			if lookups++; lookups < 3 {
				return "", false, errors.New("git log: index.lock is held")
			}
			return "", false, nil
		},
		Ready: func(context.Context) error {
			mu.Lock()
			defer mu.Unlock()
			return ready
		},
	})
	a := enqueue(t, q, "store", "a", "")
	heldOnce := false
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(ctx context.Context, w *Work) (string, error) {
			if string(w.Payload) == "a" && !heldOnce {
				heldOnce = true
				return "", fmt.Errorf("%w: refs/heads/main.lock exists", ErrHeld)
			}
			return string(w.Payload) + ".md", nil
		})
	}()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(q.Stats().Waiting, "another git process") {
		if time.Now().After(deadline) {
			t.Fatalf("the worker never said why it waits: %q", q.Stats().Waiting)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, id := range []string{a.ID, stuck.ID} {
		if j, _ := q.Get(id); j.Status != Queued {
			t.Errorf("while held: %+v", j)
		}
	}
	mu.Lock()
	ready = nil
	mu.Unlock()
	for {
		ja, _ := q.Get(a.ID)
		js, _ := q.Get(stuck.ID)
		if ja.Status.Final() && js.Status.Final() {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("jobs did not finish: %+v %+v", ja, js)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	ja, _ := q.Get(a.ID)
	if ja.Status != Done || ja.Attempts != 1 {
		t.Errorf("a held once: %+v", ja)
	}
	if js, _ := q.Get(stuck.ID); js.Status != Done {
		t.Errorf("the interrupted job: %+v", js)
	}
	if q.Stats().Waiting != "" {
		t.Errorf("still waiting: %q", q.Stats().Waiting)
	}
}

// A step that gives up because the server stops (ErrInterrupted) leaves
// its job in processing for the next start, which finds it; the job
// applied meanwhile on its files is undone and queued again.
func TestInterruptedJobIsLeftForTheNextStart(t *testing.T) {
	dir := t.TempDir()
	var restored []string
	q := open(t, dir, Options{Restore: func(_ context.Context, j Job) error { restored = append(restored, j.ID); return nil }})
	a := enqueue(t, q, "store", "a", "")
	b := enqueue(t, q, "store", "b", "")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- q.Run(ctx, func(jctx context.Context, w *Work) (string, error) {
			payload := string(w.Payload)
			w.Defer(func(context.Context) error {
				if payload == "a" {
					cancel()
					time.Sleep(20 * time.Millisecond) // b is applied meanwhile
					return fmt.Errorf("%w: waiting for index.lock", ErrInterrupted)
				}
				return nil
			})
			return payload + ".md", nil
		})
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if ja, _ := q.Get(a.ID); ja.Status != Processing {
		t.Errorf("a: %+v", ja)
	}
	if jb, _ := q.Get(b.ID); jb.Status != Queued && jb.Status != Done {
		t.Errorf("b: %+v", jb)
	}
	if onDisk(t, dir, a.ID).Status != Processing {
		t.Error("a is not in processing on disk")
	}
	q = open(t, dir, Options{})
	if err := q.Recover(context.Background()); err != nil {
		t.Fatal(err)
	}
	if ja, _ := q.Get(a.ID); ja.Status != Queued {
		t.Errorf("a after the next start: %+v", ja)
	}
}

// A record that cannot be written (a full disk) makes the worker wait and
// try again; it does not stop, and no job is lost.
func TestUnwritableRecordIsWaitedOut(t *testing.T) {
	dir := t.TempDir()
	q := open(t, dir, Options{})
	a := enqueue(t, q, "store", "a", "")
	// The record's folder read-only: claiming the job cannot record it.
	// (root ignores permissions: the test then only checks the run.)
	if err := os.Chmod(dir, 0o555); err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(300*time.Millisecond, func() { _ = os.Chmod(dir, 0o755) })
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) { return "a.md", nil }, a.ID)
	if ja, _ := q.Get(a.ID); ja.Status != Done {
		t.Errorf("a: %+v", ja)
	}
}

// A job whose last step succeeded (kk serve: its commit landed) is done
// even when recording its end fails for a while (a full disk): the
// record is written again until it takes, and the job is never undone,
// run again or failed, nor is the job applied on its files meanwhile.
// Found by an outside fault run on a full disk: the job was put back,
// ran again, placed its note a second time and was reported failed,
// with its commit in the branch.
func TestDoneJobWhoseEndCannotBeRecordedStaysDone(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	var restored []string
	q := open(t, dir, Options{Restore: func(_ context.Context, j Job) error {
		mu.Lock()
		defer mu.Unlock()
		restored = append(restored, j.ID)
		return nil
	}})
	a := enqueue(t, q, "store", "a", "")
	b := enqueue(t, q, "store", "b", "")
	applied := map[string]int{}
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) {
		payload, id := string(w.Payload), w.Job.ID
		mu.Lock()
		applied[payload]++
		first := applied[payload] == 1
		mu.Unlock()
		w.Defer(func(ctx context.Context) error {
			if payload == "a" && first {
				// The step is done; then the job's record cannot be
				// replaced for a while (a folder in its place).
				rec := filepath.Join(dir, id+".json")
				if err := os.Remove(rec); err != nil {
					return err
				}
				if err := os.Mkdir(rec, 0o755); err != nil {
					return err
				}
				time.AfterFunc(300*time.Millisecond, func() { _ = os.Remove(rec) })
			}
			return nil
		})
		return payload + ".md", nil
	}, a.ID, b.ID)
	for _, id := range []string{a.ID, b.ID} {
		if j, _ := q.Get(id); j.Status != Done {
			t.Errorf("job: %+v", j)
		}
		if j := onDisk(t, dir, id); j.Status != Done {
			t.Errorf("on disk: %+v", j)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if applied["a"] != 1 || applied["b"] != 1 || len(restored) > 0 {
		t.Errorf("applied %v, restored %v: a done job was undone or run again", applied, restored)
	}
}

// A job its environment keeps holding (ErrHeld from its run: a full
// disk, the served branch gone) is tried again after longer and longer
// waits, up to holdBackoff's longest, as Ready's holds are. Found by the
// QA run: claiming the job again reset the wait, so such a job ran again
// every 50 ms for as long as the disk stayed full, logging each run.
func TestHeldJobWaitsLongerEachTime(t *testing.T) {
	q := open(t, t.TempDir(), Options{})
	a := enqueue(t, q, "store", "a", "")
	var runs []time.Time
	const held = 6
	waitFinal(t, q, func(ctx context.Context, w *Work) (string, error) {
		runs = append(runs, time.Now())
		if len(runs) <= held {
			return "", fmt.Errorf("%w: the disk is full", ErrHeld)
		}
		return "a.md", nil
	}, a.ID)
	if j, _ := q.Get(a.ID); j.Status != Done || len(runs) != held+1 {
		t.Fatalf("job %+v after %d runs", j, len(runs))
	}
	// Waits of at least 50, 50, 100, 200, 400 and 800 ms: the shortest
	// twice, then each the one before doubled, up to the longest.
	for i, want := 1, holdBackoff[0]; i < len(runs); i++ {
		if i > 2 {
			want = min(2*want, holdBackoff[1])
		}
		if gap := runs[i].Sub(runs[i-1]); gap < want {
			t.Errorf("run %d came %v after the one before; the wait should have been at least %v", i+1, gap, want)
		}
	}
}

// A failure that may pass (Retry) puts the job back, its files restored,
// and runs it again; its tries are counted in its record on disk, so a
// worker stopped between two tries and started again goes on counting:
// the MaxRetries-th failure in a row fails the job, with its words and
// the count, its files put back, and the job behind it runs. A failure
// held by the environment (ErrHeld) between two starts the count again.
func TestRetriesAreCountedAcrossARestart(t *testing.T) {
	dir := t.TempDir()
	var mu sync.Mutex
	restored, runs := 0, 0
	opts := Options{
		MaxRetries: 4,
		Restore: func(context.Context, Job) error {
			mu.Lock()
			defer mu.Unlock()
			restored++
			return nil
		},
	}
	q := open(t, dir, opts)
	j := enqueue(t, q, "store", "j", "")
	next := enqueue(t, q, "store", "next", "")
	flaky := errors.New("git update-index: fatal: unable to write new index file")
	// The first start: two failures, then the stop.
	ctx, cancel := context.WithCancel(context.Background())
	if err := q.Run(ctx, func(_ context.Context, w *Work) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if runs++; runs == 2 {
			cancel()
		}
		return "", Retry(flaky)
	}); err != nil {
		t.Fatal(err)
	}
	cancel()
	if got := onDisk(t, dir, j.ID); got.Status != Queued || got.Retries != 2 || got.Attempts != 0 {
		t.Fatalf("after two failures and a stop: %+v", got)
	}
	// The second start: a held run starts the count again.
	q = open(t, dir, opts)
	held := false
	runUntil(t, q, func(_ context.Context, w *Work) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		if w.Job.ID == next.ID {
			return "next.md", nil
		}
		runs++
		if !held {
			held = true
			return "", fmt.Errorf("%w: index.lock exists", ErrHeld)
		}
		return "", Retry(flaky)
	}, j.ID, next.ID)
	got := onDisk(t, dir, j.ID)
	if got.Status != Failed || !strings.Contains(got.Error, flaky.Error()) || !strings.Contains(got.Error, "each of its 4 tries") {
		t.Fatalf("the job that always failed: %+v", got)
	}
	if runs != 2+1+4 || restored != runs {
		t.Errorf("%d runs and %d restores, want %d of each", runs, restored, 2+1+4)
	}
	if got := onDisk(t, dir, next.ID); got.Status != Done {
		t.Errorf("the job behind it: %+v", got)
	}
}

// A job applied on the files of the job before, whose last step was then
// held (or failed in a way that may pass), is undone and runs again; those
// runs were counted as attempts, which bound the runs a crash interrupts
// (MaxAttempts). A job behind one held three times thus failed at the
// first crash during its run ("the server stopped during each of its 4
// runs"), though no crash had interrupted it before. Such a run is taken
// back, as a held run is: the job counts one run, and a crash during it
// has it run again.
func TestRunsUndoneForTheJobBeforeAreNotAttempts(t *testing.T) {
	dir, crashed := t.TempDir(), t.TempDir()
	var mu sync.Mutex
	restore := func(context.Context, Job) error { return nil }
	q := open(t, dir, Options{Restore: restore})
	a := enqueue(t, q, "store", "a", "")
	b := enqueue(t, q, "store", "b", "")
	steps, applied := 0, 0
	waitFinal(t, q, func(_ context.Context, w *Work) (string, error) {
		if string(w.Payload) == "a" {
			w.Defer(func(context.Context) error {
				mu.Lock()
				defer mu.Unlock()
				if steps++; steps <= 3 {
					return fmt.Errorf("%w: the disk is full", ErrHeld)
				}
				return nil
			})
			return "a.md", nil
		}
		mu.Lock()
		applied++
		n := applied
		mu.Unlock()
		if n == 4 {
			// The machine crashes during b's run, once a's last step
			// has been recorded (no record is being written): the
			// queue's folder as it is now is what the next start finds.
			for {
				if ja, _ := q.Get(a.ID); ja.Status.Final() {
					break
				}
				time.Sleep(time.Millisecond)
			}
			if err := copyFiles(dir, crashed); err != nil {
				t.Error(err)
				return "", err
			}
		}
		return "b.md", nil
	}, a.ID, b.ID)
	if applied != 4 {
		t.Fatalf("b was applied %d times, want 4 (three undone after a's held steps)", applied)
	}
	if jb, _ := q.Get(b.ID); jb.Status != Done || jb.Attempts != 1 {
		t.Errorf("b: %+v, want done after one counted run", jb)
	}
	// The next start recovers b, which a crash interrupted once.
	q = open(t, crashed, Options{Restore: restore})
	waitFinal(t, q, func(_ context.Context, w *Work) (string, error) { return string(w.Payload) + ".md", nil }, a.ID, b.ID)
	if jb, _ := q.Get(b.ID); jb.Status != Done {
		t.Errorf("b after one crash: %+v", jb)
	}
}

// copyFiles copies the files of folder from into folder to.
func copyFiles(from, to string) error {
	entries, err := os.ReadDir(from)
	if err != nil {
		return err
	}
	for _, e := range entries {
		data, err := os.ReadFile(filepath.Join(from, e.Name()))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(to, e.Name()), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
