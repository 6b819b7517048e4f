package gitx

import (
	"context"
	"strings"
	"sync"
	"time"
)

// Tracker knows which git commands run under the contexts it tracks
// (Track), so that a caller can say what it waits for: kk serve's
// /healthz, while a job's git command does not end (a clean filter of
// .gitattributes, a hook, a stalled file system).
type Tracker struct {
	mu      sync.Mutex
	next    int
	running map[int]tracked
}

type tracked struct {
	args  string
	since time.Time
}

type trackerKey struct{}

// Track returns ctx whose git commands (Run, Read, RunWith and the
// commands built on them) t tracks.
func (t *Tracker) Track(ctx context.Context) context.Context {
	return context.WithValue(ctx, trackerKey{}, t)
}

// Oldest returns the git command that has been running the longest under
// a tracked context (its arguments) and since when; "" when none runs.
func (t *Tracker) Oldest() (args string, since time.Time) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, c := range t.running {
		if args == "" || c.since.Before(since) {
			args, since = c.args, c.since
		}
	}
	return args, since
}

// begin records a git command starting under ctx, and returns what
// records its end.
func begin(ctx context.Context, args []string) func() {
	t, ok := ctx.Value(trackerKey{}).(*Tracker)
	if !ok || t == nil {
		return func() {}
	}
	t.mu.Lock()
	if t.running == nil {
		t.running = map[int]tracked{}
	}
	t.next++
	id := t.next
	t.running[id] = tracked{args: strings.Join(args, " "), since: time.Now()}
	t.mu.Unlock()
	return func() {
		t.mu.Lock()
		delete(t.running, id)
		t.mu.Unlock()
	}
}
