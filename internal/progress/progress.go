// Package progress shows how far long work has come, on one line of a
// terminal.
//
// The domain packages report steps through the context they are given:
//
//	task := progress.Start(ctx, "importing", len(files))
//	defer task.Done()
//	for ... { ...; task.Add(1) }
//
// which costs nothing unless the command line put a Terminal in the
// context (kk does only when stderr is a terminal and --quiet is off). A
// Terminal draws a task once it reaches MinSteps steps, at most every
// Interval, and erases its line when the task is done, so that what the
// command prints next starts on a clean line. Add is safe for concurrent
// use.
//
// kk writes its own because the line is all it needs: a progress-bar
// module would add megabytes (schollz/progressbar: +2.4 MB) and terminal
// queries for a static, agent-facing binary.
package progress

import (
	"context"
	"fmt"
	"io"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// MinSteps is the size below which a task is not drawn: small work ends
// before a line would be worth reading. Tests may lower it.
var MinSteps = 200

// Interval is the shortest time between two drawings of a task.
var Interval = 100 * time.Millisecond

type ctxKey struct{}

// With returns a context whose tasks are drawn on t.
func With(ctx context.Context, t *Terminal) context.Context {
	return context.WithValue(ctx, ctxKey{}, t)
}

// Task is one piece of long work. A nil *Task does nothing.
type Task struct {
	term  *Terminal
	label string
	total int64 // 0: unknown; atomic
	done  atomic.Int64
	ended atomic.Bool
}

// Start begins a task of total steps (0 when the total is unknown) in the
// context's Terminal. It returns nil when the context has none.
func Start(ctx context.Context, label string, total int) *Task {
	term, _ := ctx.Value(ctxKey{}).(*Terminal)
	if term == nil {
		return nil
	}
	return &Task{term: term, label: label, total: int64(total)}
}

// SetTotal sets the number of steps, once it is known.
func (t *Task) SetTotal(total int) {
	if t != nil {
		atomic.StoreInt64(&t.total, int64(total))
	}
}

// Add records n more steps done.
func (t *Task) Add(n int) {
	if t == nil {
		return
	}
	done := t.done.Add(int64(n))
	if max(done, atomic.LoadInt64(&t.total)) >= int64(MinSteps) && !t.ended.Load() {
		t.term.draw(t, done)
	}
}

// Done ends the task and erases its line.
func (t *Task) Done() {
	if t == nil || t.ended.Swap(true) {
		return
	}
	t.term.erase(t)
}

// Terminal draws tasks on one line of a terminal.
type Terminal struct {
	w   io.Writer
	now func() time.Time

	mu    sync.Mutex
	shown *Task     // the task on the line, if any
	last  time.Time // when it was drawn
}

// NewTerminal draws on w, which must be a terminal, timing redraws with now.
func NewTerminal(w io.Writer, now func() time.Time) *Terminal {
	return &Terminal{w: w, now: now}
}

// maxWidth keeps the line within an 80-column terminal, so that the
// carriage return always goes back to its start.
const maxWidth = 79

func (r *Terminal) draw(t *Task, done int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t.ended.Load() {
		return
	}
	now := r.now()
	if r.shown == t && now.Sub(r.last) < Interval {
		return
	}
	r.shown, r.last = t, now
	line := line(t.label, done, atomic.LoadInt64(&t.total))
	_, _ = fmt.Fprintf(r.w, "\r\x1b[K%s", line) // progress on a terminal: a failed draw is not the work's failure
}

func (r *Terminal) erase(t *Task) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.shown != t {
		return
	}
	r.shown = nil
	_, _ = fmt.Fprint(r.w, "\r\x1b[K")
}

// line is the text of a task: "label 120/500 (24%)", or "label 120" when
// the total is unknown.
func line(label string, done, total int64) string {
	var count string
	if total > 0 {
		done = min(done, total)
		count = fmt.Sprintf(" %d/%d (%d%%)", done, total, done*100/total)
	} else {
		count = fmt.Sprintf(" %d", done)
	}
	label = strings.Join(strings.Fields(label), " ")
	if r := []rune(label); len(r)+len(count) > maxWidth {
		label = string(r[:max(0, maxWidth-len(count)-1)]) + "…"
	}
	return label + count
}
