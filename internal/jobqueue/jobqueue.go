// Package jobqueue is kk serve's durable job queue: a job is on disk
// before the client is told it was accepted, one worker runs the jobs in
// the order they came, and every job's state survives a crash and a
// restart.
//
// On disk (in the folder Open is given, under .ai/kenkeep/.state/) each
// job is two files: <id>.body holds the payload, written once, and
// <id>.json the small record of its state, replaced atomically at every
// change. Accepting a job writes those two files and nothing else, so the
// cost of a POST does not grow with the queue. Both are written to a
// temporary file that is synced, renamed into place and followed by a sync
// of the folder; the body lands before the record, so a record always has
// its body.
//
// A job goes queued → processing → done or failed. The move to processing
// is on disk before the work starts. A failed job stays failed: it is not
// run again, at a restart or ever. A job found in processing at start-up
// was interrupted by a crash: Recover asks the caller whether the job's
// commit exists (then it is done), and otherwise has the caller restore
// the paths the job had announced, and queues it again. A job that was
// held by its environment (ErrHeld) goes back to queued, and so does one
// whose failure may pass (Retry), a bounded number of times counted in
// its record; the worker never stops for one job (worker.go).
package jobqueue

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/kk-project/kk/internal/atomicfile"
)

// Status is where a job is in its life.
type Status string

// The states of a job. Done and Failed are final.
const (
	Queued     Status = "queued"
	Processing Status = "processing"
	Done       Status = "done"
	Failed     Status = "failed"
)

// Statuses lists every status, in life order.
var Statuses = []Status{Queued, Processing, Done, Failed}

// Final reports whether s is a terminal state.
func (s Status) Final() bool { return s == Done || s == Failed }

// Job is the record of one job. It never holds the payload.
type Job struct {
	ID string `json:"id"`
	// Seq orders the jobs as they were accepted.
	Seq uint64 `json:"seq"`
	// Op is the caller's name for what the job does (store, edit, delete).
	Op     string `json:"op"`
	Status Status `json:"status"`
	// Path is the job's subject: given at enqueue (an edit's target), or
	// set when the job is done (where a stored note went).
	Path  string `json:"path,omitempty"`
	Error string `json:"error,omitempty"`
	// Note is what the job said about how it was done (Work.Note).
	Note string `json:"note,omitempty"`
	// Touched are the paths the job announced it would change (Work.Touch),
	// which recovery restores when the job did not finish.
	Touched []string `json:"touched,omitempty"`
	// DedupKey makes a second identical request while this job is active
	// answer with this job.
	DedupKey string `json:"dedup_key,omitempty"`
	// Attempts counts the runs started; more than one means a crash
	// interrupted a run.
	Attempts int `json:"attempts"`
	// Retries counts the runs in a row that ended in a failure that may
	// pass (Retry); a run its environment held (ErrHeld) starts the
	// count again. It is on disk, so a restart goes on counting.
	Retries int `json:"retries,omitempty"`
	// SetAside, on a job whose damaged record Open moved into SetAsideDir
	// with its payload, says so: its state before is not known.
	SetAside string     `json:"set_aside,omitempty"`
	Created  time.Time  `json:"created"`
	Started  *time.Time `json:"started,omitempty"`
	Finished *time.Time `json:"finished,omitempty"`
}

// Request is a job to accept.
type Request struct {
	Op       string
	Path     string
	Payload  []byte
	DedupKey string // "" never deduplicates
}

// Options are the seams and knobs of a queue. The zero value works; a
// queue without Committed and Restore re-queues an interrupted job
// without looking at git.
type Options struct {
	// Committed reports whether the commit of job id exists, and the path
	// it names.
	Committed func(ctx context.Context, id string) (path string, found bool, err error)
	// Restore undoes whatever an unfinished or failed job left in the
	// tree: the paths in j.Touched.
	Restore func(ctx context.Context, j Job) error
	// Settle brings what an interrupted job that Committed found left
	// behind in step with its commit (kk serve: git's index for the
	// paths in j.Touched), before the job is marked done.
	Settle func(ctx context.Context, j Job) error
	// Retention is how long a finished job stays answerable (default 30
	// days); older ones are dropped by Open and Tick.
	Retention time.Duration
	// MaxAttempts is how many runs a job may start before a crash during
	// its run fails it instead of queueing it again (default 3).
	MaxAttempts int
	// MaxRetries is how many runs in a row may end in a failure that may
	// pass (Retry) before the last one fails the job (default 6).
	MaxRetries int
	// Ready, when set, is asked before each job is taken: an error keeps
	// the jobs queued (the environment is not ready: a lock a person's
	// git holds, the served branch not checked out), and the worker
	// asks again a while later; Stats().Waiting says why meanwhile.
	Ready func(ctx context.Context) error
	// Waiting, when set, says what the job in progress waits for (""
	// when nothing), for Stats().Waiting.
	Waiting func() string
	// Every, when > 0, runs OnTick from the worker loop, between jobs,
	// that often (kk serve --push-every).
	Every  time.Duration
	OnTick func(ctx context.Context)
	// TickFrom, when set, is when the period running at the start began
	// (the last tick of an earlier run): the first tick comes Every after
	// it, at once when that is past, instead of Every after the start, so
	// that a worker restarted more often than Every still ticks.
	TickFrom time.Time
	Logger   *slog.Logger
	Now      func() time.Time
	// WriteFault, when set, is called before each file of the queue's
	// folder is written (its path, the payload's or the record's); an
	// error it returns fails that write, as a full disk would. Nothing
	// in kk sets it: the fault tests do.
	WriteFault func(path string) error
}

// Queue is a durable FIFO queue with one worker. Its methods are safe for
// concurrent use.
type Queue struct {
	dir  string
	opts Options

	mu      sync.Mutex
	jobs    map[string]*Job
	pending []string          // queued ids, oldest first
	active  map[string]string // dedup key → id of a queued or processing job
	seq     uint64
	running bool
	wake    chan struct{}
	lat     histogram
	waiting string        // why the worker holds ("" when it does not)
	backoff time.Duration // its next wait when it holds again
}

// Open opens (creating it when missing) the queue kept in dir and loads
// every job. Jobs in processing stay so until Recover.
func Open(dir string, opts Options) (*Queue, error) {
	if opts.Retention <= 0 {
		opts.Retention = 30 * 24 * time.Hour
	}
	if opts.MaxAttempts <= 0 {
		opts.MaxAttempts = 3
	}
	if opts.MaxRetries <= 0 {
		opts.MaxRetries = 6
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("creating the job queue folder: %w", err)
	}
	q := &Queue{dir: dir, opts: opts, jobs: map[string]*Job{}, active: map[string]string{}, wake: make(chan struct{}, 1), lat: newHistogram()}
	if err := q.load(); err != nil {
		return nil, err
	}
	q.gc()
	return q, nil
}

func (q *Queue) recordPath(id string) string { return filepath.Join(q.dir, id+".json") }
func (q *Queue) bodyPath(id string) string   { return filepath.Join(q.dir, id+".body") }

func (q *Queue) load() error {
	entries, err := os.ReadDir(q.dir)
	if errors.Is(err, fs.ErrPermission) {
		return fmt.Errorf("reading the job queue: %w; make %s readable by kk serve's user", err, q.dir)
	}
	if err != nil {
		return fmt.Errorf("reading the job queue: %w", err)
	}
	// stayed are the names of the damaged records that could not be set
	// aside: their payloads stay with them.
	bodies, stayed := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-"):
			_ = os.Remove(filepath.Join(q.dir, name)) // a write a crash interrupted
		case strings.HasSuffix(name, ".body"):
			bodies[strings.TrimSuffix(name, ".body")] = true
		case strings.HasSuffix(name, ".json"):
			j, why, err := readRecord(filepath.Join(q.dir, name), name)
			if err != nil {
				// Not damaged: kk serve's user may not read it (a
				// person's chmod, a file a run under another user
				// left). It stays, with its payload, for a start that
				// can read it.
				stayed[strings.TrimSuffix(name, ".json")] = true
				q.opts.Logger.Error("a job record cannot be read; kk serve starts without its job", "record", filepath.Join(q.dir, name), "error", err,
					"to_do", "make it readable by kk serve's user and start kk serve again: its job then runs")
				continue
			}
			if why != "" {
				if !q.setAside(name, why) {
					stayed[strings.TrimSuffix(name, ".json")] = true
				}
				continue
			}
			q.jobs[j.ID] = j
			q.seq = max(q.seq, j.Seq)
		}
	}
	for id := range bodies {
		if q.jobs[id] == nil && !stayed[id] {
			// The body of a job whose record never landed: it was never
			// accepted.
			_ = os.Remove(q.bodyPath(id))
		}
	}
	var queued []*Job
	for _, j := range q.jobs {
		if j.SetAside != "" {
			continue // recovery resolves it (recoverOne)
		}
		if !j.Status.Final() && !bodies[j.ID] {
			q.opts.Logger.Error("job payload missing; the job fails", "job_id", j.ID)
			if err := q.finishLocked(j, "", errors.New("the job's payload is missing from the queue folder")); err != nil {
				return err
			}
			continue
		}
		if j.Status == Queued {
			queued = append(queued, j)
		}
		if !j.Status.Final() && j.DedupKey != "" {
			q.active[j.DedupKey] = j.ID
		}
	}
	slices.SortFunc(queued, func(a, b *Job) int { return cmpSeq(a.Seq, b.Seq) })
	for _, j := range queued {
		q.pending = append(q.pending, j.ID)
	}
	return nil
}

// readRecord reads the job record at path (named name in the queue's
// folder); why says what is wrong with it when it is not one kk wrote,
// and err that it could not be read for want of permission.
func readRecord(path, name string) (j *Job, why string, err error) {
	data, err := readAtMost(path, maxRecord)
	if errors.Is(err, fs.ErrPermission) {
		return nil, "", err
	}
	if err != nil {
		return nil, err.Error(), nil
	}
	j = &Job{}
	switch err := json.Unmarshal(data, j); {
	case err != nil:
		return nil, err.Error(), nil
	case j.ID+".json" != name || !slices.Contains(Statuses, j.Status):
		return nil, fmt.Sprintf("it names the job %q with the status %q", j.ID, j.Status), nil
	}
	return j, "", nil
}

// The largest record and payload the queue reads: far more than any kk
// writes (a payload is a request of at most 1 MiB, escaped; a record, a
// job's state with the paths it touched). A larger file is damaged (a
// sparse or zero-filled file), and is never read whole.
const (
	maxRecord  = 16 << 20
	maxPayload = 16 << 20
)

// errTooLarge marks a file readAtMost found over its limit.
var errTooLarge = errors.New("is larger than any kk writes")

// readAtMost reads the file at path, failing with errTooLarge, having
// read no more than limit+1 bytes, when it holds more than limit.
func readAtMost(path string, limit int64) ([]byte, error) {
	// Never opened unless a file or a folder (whose read fails): the
	// open of a named pipe would wait for a writer, for ever.
	if fi, err := os.Stat(path); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a file (%s)", path, fi.Mode().Type())
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	tooLarge := func(size string) error {
		return fmt.Errorf("%s: %s bytes %w (at most %d)", path, size, errTooLarge, limit)
	}
	// Its size first, so that one too large is not read at all; the
	// limited read is for one that grows meanwhile.
	if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() > limit {
		return nil, tooLarge(strconv.FormatInt(fi.Size(), 10))
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > limit {
		return nil, tooLarge("more than " + strconv.FormatInt(limit, 10))
	}
	return data, nil
}

// SetAsideDir is the folder, beside the queue's folder dir, where Open
// moves the damaged records it finds (with their payloads).
func SetAsideDir(dir string) string { return dir + ".damaged" }

// setAside moves name, a damaged file of the queue's folder (a record
// cut short, garbage, a folder named like a record), and the payload of
// the job it is named after, into SetAsideDir, kept as they are, and
// says so in the log: the start goes on without them. A record named
// after a job id leaves that job known, in processing, for recovery to
// resolve (recoverOne): done when its commit exists, else failed, its
// files put back, never unknown to a client polling it. When the move
// fails, the file stays where it is, with its payload, and is skipped:
// the next start tries again. It reports whether the record was moved.
func (q *Queue) setAside(name, why string) bool {
	aside := SetAsideDir(q.dir)
	id := strings.TrimSuffix(name, ".json")
	err := os.MkdirAll(aside, 0o755)
	if err == nil {
		err = os.Rename(filepath.Join(q.dir, name), filepath.Join(aside, name))
	}
	if err != nil {
		q.opts.Logger.Error("a damaged job record could not be set aside; kk serve starts without it", "record", filepath.Join(q.dir, name), "damage", why, "error", err,
			"to_do", "move it out of "+q.dir+" (kk tries again at each start); if it was a note posted and never committed, post the note again")
		return false
	}
	payload, what := "", "its payload was not in the queue"
	switch berr := os.Rename(q.bodyPath(id), filepath.Join(aside, id+".body")); {
	case berr == nil:
		payload, what = filepath.Join(aside, id+".body"), "its payload (the request) is kept there as "+id+".body"
	case !errors.Is(berr, fs.ErrNotExist):
		payload, what = q.bodyPath(id), "its payload (the request) could not follow it, and is kept at "+q.bodyPath(id)
	}
	_ = atomicfile.SyncDir(q.dir)
	q.opts.Logger.Warn("a damaged job record was set aside; kk serve starts without it", "record", filepath.Join(q.dir, name), "damage", why, "moved_to", filepath.Join(aside, name), "payload", payload,
		"to_do", "look at it: a note whose job never reached its commit (git log --grep=<job id>) can be posted again from its payload; then delete it")
	// Only a name kk gives a job (a UUID as kk writes it) names one:
	// uuid.Parse takes other spellings too ({…}, urn:uuid:…).
	if u, err := uuid.Parse(id); err != nil || u.String() != id || q.jobs[id] != nil {
		return true
	}
	created := q.opts.Now().UTC()
	if fi, err := os.Stat(filepath.Join(aside, name)); err == nil {
		created = fi.ModTime().UTC()
	}
	j := &Job{ID: id, Op: "unknown", Status: Processing, Created: created,
		SetAside: fmt.Sprintf("its record in the job queue was damaged (%s) and was set aside in %s; %s", why, aside, what)}
	q.jobs[id] = j
	// On disk at once: a start after a kill before recovery resolved it
	// still knows it (and recovery puts its files back).
	if err := q.writeRecord(j); err != nil {
		q.opts.Logger.Warn("recording the job whose record was set aside", "job_id", id, "error", err)
	}
	return true
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// gc drops finished jobs older than the retention.
func (q *Queue) gc() {
	q.mu.Lock()
	defer q.mu.Unlock()
	cutoff := q.opts.Now().Add(-q.opts.Retention)
	for id, j := range q.jobs {
		if j.Status.Final() && j.Finished != nil && j.Finished.Before(cutoff) {
			if err := os.Remove(q.recordPath(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				q.opts.Logger.Warn("dropping an old job", "job_id", id, "error", err)
				continue
			}
			_ = os.Remove(q.bodyPath(id))
			delete(q.jobs, id)
		}
	}
}

// writeRecord replaces j's record on disk, durably, except that the
// record of a job done whose commit recovery can find (Options.Committed)
// does not wait for its folder to be synced: if a power loss brings back
// the job's processing record, recovery finds the commit and makes it
// done again.
func (q *Queue) writeRecord(j *Job) error {
	data, err := json.Marshal(j)
	if err != nil {
		return err
	}
	if j.Status == Done && q.opts.Committed != nil {
		return q.inDir(q.recordPath(j.ID), func(p string) error { return atomicfile.Replace(p, append(data, '\n'), 0o644) })
	}
	return q.inDir(q.recordPath(j.ID), func(p string) error { return atomicfile.Write(p, append(data, '\n'), 0o644) })
}

// inDir runs write, a write of path, a file of the queue's folder, and,
// when it fails because the folder is gone (someone removed .state/
// under a running server), makes the folder again and runs it once more:
// the records and payloads that went with it are lost (a queued job
// whose payload went fails when its turn comes), the queue is not.
func (q *Queue) inDir(path string, write func(path string) error) error {
	write = q.faulty(write)
	err := write(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if _, serr := os.Stat(q.dir); !errors.Is(serr, fs.ErrNotExist) {
		return err
	}
	// The queue's folder and its parent (kk's .state/) are made again;
	// never what holds them: a folder gone with its parent's parent (the
	// work tree deleted or moved away) is not the queue's to make, and a
	// job accepted into a copy made there would be lost.
	parent := filepath.Dir(q.dir)
	if _, serr := os.Stat(filepath.Dir(parent)); serr != nil {
		return fmt.Errorf("%s is gone (removed or moved away while kk serve ran): %w", filepath.Dir(parent), err)
	}
	for _, d := range []string{parent, q.dir} {
		if merr := os.Mkdir(d, 0o755); merr != nil && !errors.Is(merr, fs.ErrExist) {
			return err
		}
	}
	q.opts.Logger.Warn("the job queue's folder was removed; it is made again, and the jobs whose files went with it fail", "dir", q.dir)
	return write(path)
}

// faulty is write, failed first by Options.WriteFault when it is set.
func (q *Queue) faulty(write func(path string) error) func(path string) error {
	fault := q.opts.WriteFault
	if fault == nil {
		return write
	}
	return func(path string) error {
		if err := fault(path); err != nil {
			return fmt.Errorf("writing %s: %w", path, err)
		}
		return write(path)
	}
}

// Enqueue accepts a job: when it returns without error the job is on
// disk and Get answers it. A request whose DedupKey matches a queued or
// processing job returns that job, with dup set, and writes nothing.
func (q *Queue) Enqueue(r Request) (j Job, dup bool, err error) {
	if r.Op == "" {
		return Job{}, false, errors.New("a job needs an operation")
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Job{}, false, err
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if r.DedupKey != "" {
		if other, ok := q.active[r.DedupKey]; ok {
			return *q.jobs[other], true, nil
		}
	}
	nj := &Job{ID: id.String(), Seq: q.seq + 1, Op: r.Op, Status: Queued, Path: r.Path, DedupKey: r.DedupKey, Created: q.opts.Now().UTC()}
	if err := q.inDir(q.bodyPath(nj.ID), func(p string) error { return atomicfile.Write(p, r.Payload, 0o644) }); err != nil {
		return Job{}, false, err
	}
	if err := q.writeRecord(nj); err != nil {
		_ = os.Remove(q.bodyPath(nj.ID))
		return Job{}, false, err
	}
	q.seq = nj.Seq
	q.jobs[nj.ID] = nj
	q.pending = append(q.pending, nj.ID)
	if nj.DedupKey != "" {
		q.active[nj.DedupKey] = nj.ID
	}
	q.signal()
	return *nj, false, nil
}

func (q *Queue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// Get returns the job with the given id.
func (q *Queue) Get(id string) (Job, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	j, ok := q.jobs[id]
	if !ok {
		return Job{}, false
	}
	return cloneJob(j), true
}

func cloneJob(j *Job) Job {
	c := *j
	c.Touched = slices.Clone(j.Touched)
	return c
}

// Stats is a snapshot for /metrics.
type Stats struct {
	// ByStatus counts the jobs the queue holds in each state.
	ByStatus map[Status]int
	// Depth is how many jobs wait to be run.
	Depth int
	// Latency is the time from acceptance to the end of each job finished
	// since Open.
	Latency Histogram
	// Waiting says what the worker waits for, "" when it does not: a
	// lock another git process holds, the branch checked out, a queue
	// record that cannot be written.
	Waiting string
}

// Stats returns the current counts and latencies.
func (q *Queue) Stats() Stats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := Stats{ByStatus: map[Status]int{}, Latency: q.lat.snapshot()}
	for _, st := range Statuses {
		s.ByStatus[st] = 0
	}
	for _, j := range q.jobs {
		s.ByStatus[j.Status]++
	}
	s.Depth = s.ByStatus[Queued]
	s.Waiting = q.waiting
	if s.Waiting == "" && q.opts.Waiting != nil {
		s.Waiting = q.opts.Waiting()
	}
	return s
}

// Waiting is Stats().Waiting without counting the jobs: what the worker
// waits for, "" when it does not. GET /jobs/{id} asks it for a job not
// yet done, as often as a client polls.
func (q *Queue) Waiting() string {
	q.mu.Lock()
	why := q.waiting
	q.mu.Unlock()
	if why == "" && q.opts.Waiting != nil {
		why = q.opts.Waiting()
	}
	return why
}

// Histogram is a cumulative latency histogram in seconds, as Prometheus
// exposes one.
type Histogram struct {
	Bounds []float64 // upper bounds, ascending; +Inf is implied
	Counts []uint64  // Counts[i]: observations ≤ Bounds[i]
	Count  uint64
	Sum    float64
}

// LatencyBounds are the histogram's bucket bounds, in seconds.
var LatencyBounds = []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300}

type histogram struct{ h Histogram }

func newHistogram() histogram {
	return histogram{Histogram{Bounds: LatencyBounds, Counts: make([]uint64, len(LatencyBounds))}}
}

func (h *histogram) observe(v float64) {
	for i, b := range h.h.Bounds {
		if v <= b {
			h.h.Counts[i]++
		}
	}
	h.h.Count++
	h.h.Sum += v
}

func (h *histogram) snapshot() Histogram {
	c := h.h
	c.Counts = slices.Clone(h.h.Counts)
	return c
}
