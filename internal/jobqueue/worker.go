package jobqueue

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime/debug"
	"slices"
	"time"
)

// The worker never stops for one job. Every error a job's steps return
// is one of three kinds:
//
//   - ErrInterrupted: the step gave up waiting because the server is
//     stopping; the job stays in processing, and the next start recovers
//     it (its commit found, or its files put back and the job run again).
//   - ErrHeld: something outside the job holds what it needs (a lock a
//     person's git holds, the branch checked out elsewhere): the job is
//     put back and queued again, first, and the worker waits, reporting
//     why in Stats().Waiting, and tries again a while later.
//   - Retry(err): the job failed for a reason that may pass: it is put
//     back and queued again, first, as for ErrHeld, and its record
//     counts the failure (Job.Retries, on disk, so a restart goes on
//     counting); the Options.MaxRetries-th in a row fails it with err.
//   - anything else: the job fails, alone, with the reason. Its files
//     are put back; when that fails too, the job still fails, with both
//     reasons, and its files stay as it left them.
//
// Recording a job's state on disk that fails (a full disk) is waited out
// the same way as ErrHeld. Run returns only when its context ends.

// ErrInterrupted marks a step that stopped because the worker is being
// stopped: the job stays in processing for the next start to recover.
var ErrInterrupted = errors.New("interrupted by the server's stop")

// ErrHeld marks a failure that is the environment's, not the job's: the
// job is queued again and the worker waits before it tries again.
var ErrHeld = errors.New("held")

// ErrCommittedMeanwhile marks, from Options.Restore, a job whose whole
// change another commit than its own already holds (a person's git
// commit -a that took a deletion kk serve was killed before committing):
// nothing is put back, and running the job again could not do it (the
// note it deletes is gone). The job ends done, at its path: what it was
// asked for is in the branch.
var ErrCommittedMeanwhile = errors.New("its change was committed meanwhile by another commit")

// Retry marks err, a job's failure, as one that may pass when the job
// runs again (kk serve: git failed partway for a reason kk cannot name):
// see the kinds of errors above. errors.Is and errors.As see err
// through it.
func Retry(err error) error { return retryError{err} }

type retryError struct{ err error }

func (e retryError) Error() string { return e.err.Error() }
func (e retryError) Unwrap() error { return e.err }

// errUnrecorded marks a last step that succeeded but whose job could
// not be recorded done yet (see Run's wait).
var errUnrecorded = errors.New("the job's last step succeeded; recording its end failed")

// holdBackoff bounds the worker's waits between two tries when the
// environment holds it.
var holdBackoff = [2]time.Duration{50 * time.Millisecond, 2 * time.Second}

// Recover resolves every job a crash left in processing, newest first
// (see stuck): a job whose commit exists is done; any other has its
// touched paths restored and is queued again, or fails once it has
// started MaxAttempts runs. A job whose files cannot be put back fails,
// its files left as they are.
// Run calls it first (trying again while it returns an error); call it
// earlier to see the outcome. An error means a job could not be resolved
// yet (its commit could not be looked for): it stays in processing.
func (q *Queue) Recover(ctx context.Context) error {
	for _, j := range q.stuck() {
		if err := q.recoverOne(ctx, j); err != nil {
			return fmt.Errorf("recovering job %s: %w", j.ID, err)
		}
	}
	return nil
}

// stuck returns the jobs in processing, newest first: the order they
// are undone in. A job applied on the files of the one before while that
// one's last step ran (Defer) is undone first, as the worker does: an
// undo puts back the bytes its job found, and the older job's undo,
// finding the newer job's bytes, would leave them as a person's edit.
// (Jobs queued again still run oldest first.)
func (q *Queue) stuck() []*Job {
	q.mu.Lock()
	var out []*Job
	for _, j := range q.jobs {
		if j.Status == Processing {
			out = append(out, j)
		}
	}
	q.mu.Unlock()
	slices.SortFunc(out, func(a, b *Job) int { return cmpSeq(b.Seq, a.Seq) })
	return out
}

func (q *Queue) recoverOne(ctx context.Context, j *Job) error {
	log := q.opts.Logger.With("job_id", j.ID)
	if q.opts.Committed != nil {
		path, found, err := q.opts.Committed(ctx, j.ID)
		if err != nil {
			return err
		}
		if found {
			if q.opts.Settle != nil {
				if err := q.opts.Settle(ctx, q.snapshot(j.ID)); err != nil {
					return fmt.Errorf("settling its committed paths: %w", err)
				}
			}
			log.Info("interrupted job was committed; done", "path", path)
			q.mu.Lock()
			defer q.mu.Unlock()
			if path == "" {
				path = j.Path
			}
			return q.finishLocked(j, path, nil)
		}
	}
	if j.SetAside != "" {
		return q.recoverSetAside(ctx, j)
	}
	if q.opts.Restore != nil {
		if err := q.opts.Restore(ctx, q.snapshot(j.ID)); err != nil {
			if errors.Is(err, ErrHeld) {
				return err
			}
			if errors.Is(err, ErrCommittedMeanwhile) {
				log.Info("interrupted job's change was committed meanwhile by another commit; done", "path", j.Path, "reason", err)
				q.mu.Lock()
				defer q.mu.Unlock()
				return q.finishLocked(j, j.Path, nil)
			}
			log.Error("the files of an interrupted job could not be put back; the job fails", "error", err)
			q.mu.Lock()
			defer q.mu.Unlock()
			return q.finishLocked(j, "", fmt.Errorf("the server stopped during its run, and putting its files back failed (they are left as the job wrote them): %w", err))
		}
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if j.Attempts >= q.opts.MaxAttempts {
		log.Error("interrupted job gave up", "attempts", j.Attempts)
		return q.finishLocked(j, "", fmt.Errorf("the server stopped during each of its %d runs", j.Attempts))
	}
	if err := q.requeueLocked(j, false, -1); err != nil {
		return err
	}
	log.Info("interrupted job queued again", "attempts", j.Attempts)
	return nil
}

// recoverSetAside ends a job whose damaged record Open set aside, and
// whose commit recovery did not find: its files are put back (what its
// transaction kept, when it had begun) and it fails, saying where its
// record and payload went. It cannot run again: what it was asked to do
// went with its record.
func (q *Queue) recoverSetAside(ctx context.Context, j *Job) error {
	why := j.SetAside + "; it did not reach its commit: post it again"
	if q.opts.Restore != nil {
		if err := q.opts.Restore(ctx, q.snapshot(j.ID)); err != nil {
			if errors.Is(err, ErrHeld) {
				return err
			}
			if errors.Is(err, ErrCommittedMeanwhile) {
				q.mu.Lock()
				defer q.mu.Unlock()
				return q.finishLocked(j, j.Path, nil)
			}
			why += "; putting its files back failed (they are left as the job wrote them): " + err.Error()
		}
	}
	q.opts.Logger.Warn("a job whose record was damaged fails", "job_id", j.ID, "error", why)
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.finishLocked(j, "", errors.New(why))
}

// requeueLocked puts a job in processing back in the queue, first among
// the jobs accepted after it. uncount takes back the run it started (a
// run the environment stopped before it did anything); retries, when not
// negative, is the job's count of failures in a row that may pass
// (Job.Retries) from now on.
func (q *Queue) requeueLocked(j *Job, uncount bool, retries int) error {
	next := *j
	next.Status, next.Started, next.Touched = Queued, nil, nil
	if uncount && next.Attempts > 0 {
		next.Attempts--
	}
	if retries >= 0 {
		next.Retries = retries
	}
	if err := q.writeRecord(&next); err != nil {
		return err
	}
	*j = next
	if !slices.Contains(q.pending, j.ID) {
		q.pending = append([]string{j.ID}, q.pending...)
	}
	slices.SortStableFunc(q.pending, func(a, b string) int { return cmpSeq(q.jobs[a].Seq, q.jobs[b].Seq) })
	q.signal()
	return nil
}

// snapshot returns a copy of job id's record.
func (q *Queue) snapshot(id string) Job {
	q.mu.Lock()
	defer q.mu.Unlock()
	return cloneJob(q.jobs[id])
}

// finishLocked records j's end: done at path, or failed with err.
func (q *Queue) finishLocked(j *Job, path string, err error) error {
	next := *j
	now := q.opts.Now().UTC()
	next.Finished = &now
	if err != nil {
		next.Status, next.Error = Failed, err.Error()
	} else {
		next.Status, next.Error = Done, ""
		if path != "" {
			next.Path = path
		}
	}
	if werr := q.writeRecord(&next); werr != nil {
		return werr
	}
	*j = next
	q.backoff = 0 // a job ran to its end: the environment let it
	if q.active[j.DedupKey] == j.ID {
		delete(q.active, j.DedupKey)
	}
	if j.Status == Done {
		_ = os.Remove(q.bodyPath(j.ID)) // the note is in git now; a failed job keeps its payload
	}
	return nil
}

// Work is the job the worker hands to the apply function.
type Work struct {
	Job     Job
	Payload []byte
	q       *Queue
	last    func(ctx context.Context) error
}

// Defer makes fn the job's last step: it runs after the apply function
// returns, while the worker goes on with the next job, and the job is
// done (or failed) when fn returns. The last steps of the jobs run one
// at a time, in the jobs' order. kk serve defers its git commit this
// way, which overlaps it with the next job's placement and transaction.
//
// The next job's apply runs on the files this one left before they are
// committed; if fn fails, the next job is restored first and queued
// again, then this one is restored and fails. Anything else that touches
// what fn does (a restore, a tick) waits for fn first.
func (w *Work) Defer(fn func(ctx context.Context) error) { w.last = fn }

// Touch records, on disk, paths the job is about to change, before it
// changes them, so that recovery after a crash can restore them.
func (w *Work) Touch(paths ...string) error {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	j := w.q.jobs[w.Job.ID]
	next := *j
	next.Touched = slices.Compact(slices.Sorted(slices.Values(append(slices.Clone(j.Touched), paths...))))
	if err := w.q.writeRecord(&next); err != nil {
		return err
	}
	*j = next
	w.Job = cloneJob(j)
	return nil
}

// Note records, on disk, what the job says about how it was done (kk
// serve: placed without the model, which failed); the job keeps it when
// it ends.
func (w *Work) Note(note string) error {
	w.q.mu.Lock()
	defer w.q.mu.Unlock()
	j := w.q.jobs[w.Job.ID]
	next := *j
	next.Note = note
	if err := w.q.writeRecord(&next); err != nil {
		return err
	}
	*j = next
	w.Job = cloneJob(j)
	return nil
}

// ApplyFunc does one job and returns the path it settled on. An error
// fails the job with the error's message, unless it is ErrInterrupted or
// ErrHeld (see there).
type ApplyFunc func(ctx context.Context, w *Work) (path string, err error)

// ErrRunning is returned by a second concurrent Run.
var ErrRunning = errors.New("the job queue already has a worker")

// lastStep is a job's deferred last step in progress.
type lastStep struct {
	w    *Work
	path string
	done chan error // the step's error; nil once the job is recorded done
}

// Run is the one worker: it recovers interrupted jobs, then runs queued
// jobs one at a time, oldest first, until ctx is done. A job that has
// started is finished before Run returns: apply gets a context that ctx's
// end does not cancel (a step waiting for the environment returns
// ErrInterrupted instead, and its job is recovered at the next start).
// Run returns nil when ctx ends, ErrRunning for a second worker.
func (q *Queue) Run(ctx context.Context, apply ApplyFunc) error {
	q.mu.Lock()
	if q.running {
		q.mu.Unlock()
		return ErrRunning
	}
	q.running = true
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		q.running = false
		q.mu.Unlock()
	}()
	bg := context.WithoutCancel(ctx)
	for _, j := range q.stuck() {
		if !q.untilDone(ctx, "recovering job "+j.ID, func() error { return q.recoverOne(bg, j) }) {
			return nil
		}
	}
	var tick <-chan time.Time
	ticked := func() {}
	if q.opts.Every > 0 && q.opts.OnTick != nil {
		first := q.opts.Every
		if !q.opts.TickFrom.IsZero() {
			first = max(0, q.opts.TickFrom.Add(q.opts.Every).Sub(q.opts.Now()))
		}
		t := time.NewTimer(first)
		defer t.Stop()
		tick = t.C
		ticked = func() { t.Reset(q.opts.Every) }
	}
	var pending *lastStep
	// wait waits for the job whose last step is running and returns the
	// step's error (nil when the job is done). A step that succeeded
	// (kk serve: its commit landed) makes its job done whatever comes
	// next: when recording that failed, the record is written again
	// until it takes (a full disk), never undone or run again. A stop
	// meanwhile leaves it in processing, and recovery finds its commit.
	wait := func() (*lastStep, error) {
		if pending == nil {
			return nil, nil
		}
		st := pending
		pending = nil
		err := <-st.done
		if errors.Is(err, errUnrecorded) {
			q.untilDone(ctx, "recording the end of job "+st.w.Job.ID, func() error { return q.finish(st.w, st.path, nil) })
			return st, nil
		}
		return st, err
	}
	defer func() {
		if st, err := wait(); err != nil {
			q.settle(bg, ctx, st.w, st.path, err)
		}
	}()
	for {
		// A due tick runs between jobs, never in the middle of one.
		select {
		case <-tick:
			if st, err := wait(); err != nil {
				q.settle(bg, ctx, st.w, st.path, err)
			}
			q.opts.OnTick(ctx)
			q.gc()
			ticked()
		default:
		}
		if ctx.Err() != nil {
			return nil
		}
		if q.opts.Ready != nil {
			if err := q.opts.Ready(ctx); err != nil {
				if st, werr := wait(); werr != nil {
					q.settle(bg, ctx, st.w, st.path, werr)
				}
				q.hold(ctx, err.Error())
				continue
			}
		}
		w, err := q.claim()
		if err != nil {
			q.hold(ctx, err.Error())
			continue
		}
		if w == nil {
			if st, err := wait(); err != nil {
				q.settle(bg, ctx, st.w, st.path, err)
				continue
			}
			q.setWaiting("")
			select {
			case <-ctx.Done():
				return nil
			case <-q.wake:
			case <-tick:
				q.opts.OnTick(ctx)
				q.gc()
				ticked()
			}
			continue
		}
		var path string
		applyErr := q.unpanicked(w.Job.ID, "run", func() (err error) {
			path, err = apply(bg, w)
			return err
		})
		if st, err := wait(); err != nil {
			// The job before failed, or was stopped, after this one was
			// applied on its files: this one is undone first (and runs
			// again), then that one. Its run is taken back, as a held
			// run is: it ended for the job before's reason, and
			// MaxAttempts bounds the runs a crash ended (a job behind
			// one whose commit was held three times failed at the first
			// crash during its run).
			if applyErr == nil {
				q.undo(bg, ctx, w, true, -1)
			} else {
				q.settle(bg, ctx, w, path, applyErr)
			}
			q.settle(bg, ctx, st.w, st.path, err)
			continue
		}
		if applyErr != nil || w.last == nil {
			q.settle(bg, ctx, w, path, applyErr)
			continue
		}
		pending = &lastStep{w: w, path: path, done: make(chan error, 1)}
		go func(st *lastStep) {
			err := q.unpanicked(st.w.Job.ID, "last step", func() error { return st.w.last(bg) })
			if err == nil {
				if ferr := q.finish(st.w, st.path, nil); ferr != nil {
					err = fmt.Errorf("%w: %v", errUnrecorded, ferr)
				}
			}
			st.done <- err
		}(pending)
	}
}

// unpanicked runs fn, a step of job id, turning a panic (a bug of kk's
// on an input no one foresaw) into the job's failure, logged with its
// stack: one job's bug never ends the worker's process, which serves
// every other client (and, restarted, would run the job again).
func (q *Queue) unpanicked(id, step string, fn func() error) (err error) {
	defer func() {
		if p := recover(); p != nil {
			q.opts.Logger.Error("a job's step panicked (a bug of kk's): the job fails, the worker goes on", "job_id", id, "step", step, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			err = fmt.Errorf("the job's %s failed on a bug of kk's (a panic: %v); the server goes on: please report it, with the server's log", step, p)
		}
	}()
	return fn()
}

// settle records how a job's run ended: done when err is nil; left in
// processing (ErrInterrupted); undone and queued again (ErrHeld, and
// Retry until the job's MaxRetries-th failure in a row), the worker then
// waiting; else undone and failed.
func (q *Queue) settle(bg, ctx context.Context, w *Work, path string, err error) {
	log := q.opts.Logger.With("job_id", w.Job.ID, "op", w.Job.Op)
	switch {
	case err == nil:
		q.untilDone(ctx, "recording the end of job "+w.Job.ID, func() error { return q.finish(w, path, nil) })
	case errors.Is(err, ErrInterrupted):
		log.Info("job interrupted by the stop; the next start resumes it", "reason", err)
		q.uncountStopped(w.Job.ID)
	case errors.Is(err, ErrHeld):
		log.Warn("job put back in the queue: the environment holds it", "reason", err)
		q.undo(bg, ctx, w, true, 0)
		q.hold(ctx, err.Error())
	case errors.As(err, new(retryError)):
		n := q.snapshot(w.Job.ID).Retries + 1
		if n < q.opts.MaxRetries {
			log.Warn("job put back in the queue: its failure may pass", "reason", err, "try", n, "tries", q.opts.MaxRetries)
			q.undo(bg, ctx, w, true, n)
			q.hold(ctx, fmt.Sprintf("%v (the job's try %d of %d failed; it runs again)", err, n, q.opts.MaxRetries))
			return
		}
		log.Warn("the job failed in each of its tries; it fails", "tries", n, "error", err)
		q.fail(bg, ctx, w, path, fmt.Errorf("%w (it failed in each of its %d tries)", err, n))
	default:
		q.fail(bg, ctx, w, path, err)
	}
}

// fail puts back the files of a job whose run failed with err and
// records it failed (done, when another commit holds its change).
func (q *Queue) fail(bg, ctx context.Context, w *Work, path string, err error) {
	log := q.opts.Logger.With("job_id", w.Job.ID, "op", w.Job.Op)
	if q.opts.Restore != nil {
		var rerr error
		q.untilDone(ctx, "putting back the files of job "+w.Job.ID, func() error {
			rerr = q.opts.Restore(bg, q.snapshot(w.Job.ID))
			if errors.Is(rerr, ErrHeld) {
				return rerr
			}
			return nil
		})
		if errors.Is(rerr, ErrCommittedMeanwhile) {
			log.Info("the failed job's change was committed meanwhile by another commit; done", "reason", rerr, "error", err)
			q.untilDone(ctx, "recording the end of job "+w.Job.ID, func() error { return q.finish(w, w.Job.Path, nil) })
			return
		}
		if rerr != nil && !errors.Is(rerr, ErrHeld) {
			log.Error("the files of a failed job could not be put back; they are left as the job wrote them", "error", rerr)
			err = fmt.Errorf("%w; putting its files back failed too (they are left as the job wrote them): %v", err, rerr)
		}
	}
	q.untilDone(ctx, "recording the end of job "+w.Job.ID, func() error { return q.finish(w, path, err) })
}

// uncountStopped takes back the run a stop interrupted (a step waiting
// for the environment: a lock another git process holds, the model, a
// person's hook) from the job's attempts, the job staying in processing
// for the next start: MaxAttempts bounds the runs a crash ended, and a
// job waiting for a stale lock through three restarts failed. When the
// record cannot be written, the run stays counted.
func (q *Queue) uncountStopped(id string) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.jobs[id]
	if j == nil || j.Status != Processing || j.Attempts == 0 {
		return
	}
	next := *j
	next.Attempts--
	if err := q.writeRecord(&next); err != nil {
		q.opts.Logger.Warn("recording that a stop interrupted the job", "job_id", id, "error", err)
		return
	}
	*j = next
}

// undo puts back the files of a job that was applied but must run again,
// and queues it again (uncount: its run does not count as an attempt;
// retries, when not negative, its new Job.Retries); a job whose files
// cannot be put back fails.
func (q *Queue) undo(bg, ctx context.Context, w *Work, uncount bool, retries int) {
	q.untilDone(ctx, "queueing job "+w.Job.ID+" again", func() error {
		q.mu.Lock()
		j := q.jobs[w.Job.ID]
		q.mu.Unlock()
		if j.Status != Processing {
			return nil
		}
		if q.opts.Restore != nil {
			if err := q.opts.Restore(bg, q.snapshot(j.ID)); err != nil {
				if errors.Is(err, ErrHeld) {
					return err
				}
				q.mu.Lock()
				defer q.mu.Unlock()
				if errors.Is(err, ErrCommittedMeanwhile) {
					return q.finishLocked(j, j.Path, nil)
				}
				return q.finishLocked(j, "", fmt.Errorf("it had to run again and putting its files back failed (they are left as the job wrote them): %w", err))
			}
		}
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.requeueLocked(j, uncount, retries)
	})
}

// untilDone runs fn until it succeeds, waiting between tries (and
// reporting what for) as for a held environment. It reports false when
// ctx ended first.
func (q *Queue) untilDone(ctx context.Context, what string, fn func() error) bool {
	for {
		err := fn()
		if err == nil {
			return true
		}
		q.opts.Logger.Warn(what+" failed; trying again", "error", err)
		if !q.hold(ctx, what+": "+err.Error()) {
			return false
		}
	}
}

// hold records why the worker waits and waits a while (longer each time
// in a row), or until ctx ends; it reports whether ctx is still alive.
func (q *Queue) hold(ctx context.Context, why string) bool {
	q.mu.Lock()
	q.waiting = why
	d := q.backoff
	q.backoff = min(max(2*d, holdBackoff[0]), holdBackoff[1])
	if d == 0 {
		d = holdBackoff[0]
	}
	q.mu.Unlock()
	select {
	case <-ctx.Done():
		return false
	case <-time.After(d):
		return true
	}
}

// setWaiting records what the worker waits for ("" for nothing) and
// resets the back-off.
func (q *Queue) setWaiting(why string) {
	q.mu.Lock()
	q.waiting = why
	if why == "" {
		q.backoff = 0
	}
	q.mu.Unlock()
}

// claim takes the oldest queued job and records it as processing, on
// disk, before returning it. nil means the queue is empty.
func (q *Queue) claim() (*Work, error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.pending) > 0 {
		id := q.pending[0]
		q.pending = q.pending[1:]
		j := q.jobs[id]
		if j == nil || j.Status != Queued {
			continue
		}
		payload, err := readAtMost(q.bodyPath(id), maxPayload)
		if errors.Is(err, fs.ErrPermission) {
			// Not the job's fault: kk serve's user may not read it (a
			// person's chmod, a file a run under another user left).
			// It stays queued, first, and the worker waits.
			q.pending = append([]string{id}, q.pending...)
			return nil, fmt.Errorf("the payload of job %s cannot be read: %w; make it readable by kk serve's user", id, err)
		}
		if err != nil {
			if ferr := q.finishLocked(j, "", fmt.Errorf("reading the job's payload: %w", err)); ferr != nil {
				q.pending = append([]string{id}, q.pending...)
				return nil, ferr
			}
			continue
		}
		next := *j
		now := q.opts.Now().UTC()
		next.Status, next.Started = Processing, &now
		next.Attempts++
		if err := q.writeRecord(&next); err != nil {
			// Not claimed: it stays queued.
			q.pending = append([]string{id}, q.pending...)
			return nil, fmt.Errorf("recording job %s as processing: %w", id, err)
		}
		*j = next
		// The back-off stays: a job its environment holds again waits
		// longer each time; it goes when a job ends (finishLocked).
		q.waiting = ""
		return &Work{Job: cloneJob(j), Payload: payload, q: q}, nil
	}
	return nil, nil
}

// finish records the end of a job's run (its files already put back when
// it failed).
func (q *Queue) finish(w *Work, path string, applyErr error) error {
	log := q.opts.Logger.With("job_id", w.Job.ID, "op", w.Job.Op)
	q.mu.Lock()
	defer q.mu.Unlock()
	j := q.jobs[w.Job.ID]
	if j.Status.Final() {
		return nil
	}
	if err := q.finishLocked(j, path, applyErr); err != nil {
		return fmt.Errorf("recording the end of job %s: %w", j.ID, err)
	}
	q.lat.observe(j.Finished.Sub(j.Created).Seconds())
	if applyErr != nil {
		log.Warn("job failed", "error", applyErr)
	} else {
		log.Info("job done", "path", j.Path)
	}
	return nil
}
