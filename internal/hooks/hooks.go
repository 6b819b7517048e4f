// Package hooks is the runtime behind `kk hook <event> --harness <id>`,
// the command every harness configuration written by `kk init` calls.
//
// One rule governs all of it: a hook never blocks or breaks the agent it
// runs in. Run always ends normally (the command exits 0); stdout carries
// exactly what the harness expects (the adapter's HookOutput) or nothing;
// every problem — a malformed payload, an unknown event, a repository
// without a knowledge base, a missing transcript, an internal error, an
// overrun deadline — becomes one JSON line in
// .ai/kenkeep/_logs/hook-errors-YYYY-MM-DD.log (on stderr when no
// knowledge base is found). When KK_INTERNAL is set (kk started this
// process tree for a headless harness run) hooks do nothing at all.
//
// Each event is one function taking a Request, testable without a
// process: SessionStart, Capture, Drain (proposal-drain), PromptContext,
// LintTick and GraphHint.
package hooks

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/store"
)

// memoryLimit is the Go runtime's soft memory limit during a hook call:
// the garbage collector works harder near it, so that a capture of a long
// transcript (read in a bounded window, see harness.OpenTranscript) stays
// well under 100 MB. GOMEMLIMIT, when set, wins.
const memoryLimit = 48 << 20

// defaultDeadline bounds a call whose event is unknown.
const defaultDeadline = time.Second

// Invocation is one `kk hook` call.
type Invocation struct {
	Event   string
	Harness string
	// Harnesses resolves Harness to its adapter.
	Harnesses *harness.Registry
	// Foreground runs in this process the work of proposal-drain, and of
	// a capture the harness's spec detaches, instead of starting a
	// detached process for it: kk starts its detached processes so.
	Foreground bool
	// Root is the repository named by --root or KK_ROOT; empty means the
	// payload's cwd, else the working directory, searched upwards.
	Root   string
	Stdin  io.Reader
	Stdout io.Writer
	Stderr io.Writer
	Getenv func(string) string
	Getwd  func() (string, error)
	Now    func() time.Time
	// Executable returns the path of the kk binary, to start the
	// background drain with.
	Executable func() (string, error)
	// Notify shows a desktop notification (DesktopNotifier); nil shows
	// none.
	Notify Notifier
	// Problem, when not empty, is a mistake found before the event could
	// be named (bad arguments or flags): it is logged and nothing runs.
	Problem string
	// Options are the call's timeouts and limits; zero fields take their
	// defaults (Defaults).
	Options Options
}

// Diagnostic is one line of the hook error log.
type Diagnostic struct {
	TS      string `json:"ts"`
	Harness string `json:"harness"`
	Event   string `json:"event"`
	Phase   string `json:"phase"`
	Error   string `json:"error"`
}

// LogPath returns the hook error log of k for the UTC day of t.
func LogPath(k *store.KB, t time.Time) string {
	return filepath.Join(k.LogsDir(), "hook-errors-"+t.UTC().Format("2006-01-02")+".log")
}

// Request is what one event works on.
type Request struct {
	KB      *store.KB
	Adapter harness.Adapter
	Input   harness.HookInput
	Now     time.Time
	// Warn records a problem that does not stop the event (a usage
	// ledger that could not be written); nil discards it.
	Warn func(phase string, err error)
	// Executable returns the kk binary, to start the background drain.
	Executable func() (string, error)
	// Notify shows a desktop notification; nil shows none.
	Notify Notifier
	// WaitDetached makes a detached capture's starter wait for it to end
	// (KK_CAPTURE=wait, for tests and debugging) instead of returning at
	// once.
	WaitDetached bool
	// Offer hands the call an answer to print should the deadline come
	// before the event's final one (prompt-context offers its search of
	// the index as last committed before it syncs); nil discards it.
	Offer func(out []byte)
	// Options are the event's timeouts and limits; zero fields take
	// their defaults (Defaults).
	Options Options
}

// hookOutput renders text for the harness at ev (Adapter.HookOutput),
// its markup disarmed first (harness.Defang): the text carries notes'
// titles and summaries, which must not close the block the harness puts
// hook context in or pass for the harness's own markup.
func (r Request) hookOutput(ev harness.Event, text string) ([]byte, bool) {
	return r.Adapter.HookOutput(ev, harness.Defang(text))
}

func (r Request) warn(phase string, err error) {
	if r.Warn != nil && err != nil {
		r.Warn(phase, err)
	}
}

// ErrNotInitialized is reported when the repository has .ai/kenkeep but no
// .state/installed-version.
var ErrNotInitialized = errors.New("the knowledge base was never initialized")

// call is the state of one Run, shared by the worker and the deadline.
type call struct {
	inv Invocation
	mu  sync.Mutex
	kb  *store.KB
	// offered is the last answer the worker offered (Request.Offer):
	// what the call prints if the deadline comes first.
	offered []byte
}

// offer records out as the answer to print at the deadline.
func (c *call) offer(out []byte) {
	c.mu.Lock()
	c.offered = out
	c.mu.Unlock()
}

// Run runs one hook call. It always returns normally: problems are logged,
// never returned.
func Run(ctx context.Context, inv Invocation) {
	if inv.Getenv == nil {
		inv.Getenv = os.Getenv
	}
	// A process tree kk started carries the recursion guard and hooks stay
	// out of it, except the background drain kk itself started (with
	// --foreground, which no harness configuration uses).
	if harness.Guarded(inv.Getenv) && !(inv.Foreground && backgroundEvent(harness.Event(inv.Event))) {
		return
	}
	// A harness that stops reading (it gave up on the hook, its user
	// interrupted it) leaves stdout a pipe without a reader. Unhandled,
	// the write of the answer kills the process with SIGPIPE (exit status
	// 141, a failed hook to the harness); caught, it fails with EPIPE,
	// which is logged like any other problem.
	sigpipe := make(chan os.Signal, 1)
	signal.Notify(sigpipe, syscall.SIGPIPE)
	defer signal.Stop(sigpipe)
	if inv.Now == nil {
		inv.Now = time.Now
	}
	if inv.Getwd == nil {
		inv.Getwd = os.Getwd
	}
	if inv.Stdout == nil {
		inv.Stdout = io.Discard
	}
	if inv.Stderr == nil {
		inv.Stderr = io.Discard
	}
	if inv.Getenv("GOMEMLIMIT") == "" {
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(memoryLimit))
	}
	inv.Options = inv.Options.withDefaults()
	c := &call{inv: inv}
	ev := harness.Event(inv.Event)
	d, ok := inv.Options.Deadlines[ev]
	if !ok {
		d = defaultDeadline
	}
	if inv.Foreground && ev == harness.ProposalDrain {
		d = inv.Options.DrainDeadline
	}
	if inv.Foreground && ev == harness.Capture {
		d = inv.Options.CaptureDeadline
	}
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				c.diag("panic", fmt.Errorf("%v\n%s", p, debug.Stack()))
				done <- outcome{}
			}
		}()
		done <- c.run(ctx)
	}()
	var res outcome
	select {
	case res = <-done:
	case <-ctx.Done():
		select {
		case res = <-done: // finished at the same moment: it counts
		default:
			res.stopped = true
		}
	}
	if res.stopped {
		// The worker may go on a moment longer; it can no longer print.
		// Files it writes are written atomically, so an abandoned write
		// leaves the old file or the new one, never half of one.
		reason := fmt.Errorf("gave up after %s", d)
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			reason = fmt.Errorf("interrupted: %w", ctx.Err())
		}
		c.mu.Lock()
		res.out = c.offered
		c.mu.Unlock()
		if len(res.out) > 0 {
			reason = fmt.Errorf("%w; printed the answer found before", reason)
		}
		c.diag("deadline", reason)
		if len(res.out) > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			if _, err := inv.Stdout.Write(res.out); err != nil {
				c.diag("output", err)
			}
		}
		return
	}
	if len(res.out) > 0 {
		if _, err := inv.Stdout.Write(res.out); err != nil {
			c.diag("output", err)
		}
	}
}

// outcome is what the worker of a call ends with: what to print, or that
// it stopped because the call's context ended (the deadline is logged
// once, by Run).
type outcome struct {
	out     []byte
	stopped bool
}

// fail logs a problem of the call, unless the call's context has ended:
// the problem is then the deadline, which Run reports.
func (c *call) fail(ctx context.Context, phase string, err error) outcome {
	if ctx.Err() != nil {
		return outcome{stopped: true}
	}
	c.diag(phase, err)
	return outcome{}
}

// run does the work and returns what to print.
func (c *call) run(ctx context.Context) outcome {
	inv := c.inv
	if inv.Problem != "" {
		return c.fail(ctx, "args", errors.New(inv.Problem))
	}
	ev := harness.Event(inv.Event)
	if !slices.Contains(harness.Events, ev) {
		names := make([]string, len(harness.Events))
		for i, e := range harness.Events {
			names[i] = string(e)
		}
		return c.fail(ctx, "event", fmt.Errorf("unknown event %q; kk hooks are %s", inv.Event, strings.Join(names, ", ")))
	}
	if inv.Harnesses == nil {
		return c.fail(ctx, "harness", errors.New("no harness adapters are registered"))
	}
	if inv.Harness == "" {
		return c.fail(ctx, "harness", fmt.Errorf("no --harness given; use one of %s", strings.Join(inv.Harnesses.IDs(), ", ")))
	}
	a, err := inv.Harnesses.Get(inv.Harness)
	if err != nil {
		return c.fail(ctx, "harness", err)
	}
	var in harness.HookInput
	var payload []byte
	var payloadErr error
	if !(inv.Foreground && ev == harness.ProposalDrain) {
		// The background drain works on the knowledge base alone; every
		// other call starts from the harness's payload.
		data, timedOut, err := ReadPayload(ctx, inv.Stdin, inv.Options)
		payload = data
		if err != nil {
			return c.fail(ctx, "stdin", err)
		}
		if len(strings.TrimSpace(string(data))) > 0 {
			if in, err = a.ParseHookInput(data); err != nil {
				if timedOut {
					err = fmt.Errorf("%w (standard input was never closed, so the read stopped when it went quiet)", err)
				}
				err = fmt.Errorf("malformed %s payload: %w", a.ID(), err)
				if ev != harness.SessionStart {
					return c.fail(ctx, "payload", err)
				}
				// Payloads drift between harness versions: session start
				// needs nothing from one, so the session still gets
				// ENTRY.md (kenkeep does the same), and the problem is
				// logged in the knowledge base's hook log.
				payloadErr, in = err, harness.HookInput{}
			}
		}
		// A field of another type than kk reads is an error only where
		// the event reads it: harnesses change the types of fields
		// between releases, and a turn's capture must not be lost to a
		// field capture does not need.
		if err := in.Check(eventUses[ev]); err != nil {
			err = fmt.Errorf("malformed %s payload: %w", a.ID(), err)
			if ev != harness.SessionStart {
				return c.fail(ctx, "payload", err)
			}
			payloadErr = err // as above: the session still gets ENTRY.md
		}
	}
	k, err := c.locate(in.CWD)
	if err != nil {
		return c.fail(ctx, "kb", err)
	}
	c.diag("payload", payloadErr)
	if !k.Initialized() {
		if left := k.Leftovers(); left != nil {
			// What git left behind of a knowledge base (a branch or a
			// commit without one): not one, and nothing is written in it
			// (diag logs on stderr).
			c.mu.Lock()
			c.kb = nil
			c.mu.Unlock()
			return c.fail(ctx, "kb", fmt.Errorf("%w in %s: its %s folder holds only what git ignores and left behind (%s), not a knowledge base (a branch or commit without one); check out one that has it, or run `kk init` to start one", store.ErrNotFound, k.Root, store.DirName, strings.Join(left, ", ")))
		}
		return c.fail(ctx, "kb", fmt.Errorf("%w (no %s); run `kk init` in %s", ErrNotInitialized, k.Rel(k.InstalledPath()), k.Root))
	}
	// The hooks write without the writer lock (state.json, session
	// marks, the branch index, their log): a cloned repository's .state
	// or _logs linked out of it would have them write there.
	if err := k.CheckContained(); err != nil {
		return c.fail(ctx, "kb", err)
	}
	r := Request{KB: k, Adapter: a, Input: in, Now: inv.Now(), Warn: c.diag, Executable: inv.Executable, Notify: inv.Notify,
		WaitDetached: inv.Getenv("KK_CAPTURE") == "wait", Offer: c.offer, Options: inv.Options}
	var out []byte
	switch ev {
	case harness.SessionStart:
		out, err = SessionStart(ctx, r)
	case harness.PromptContext:
		out, err = PromptContext(ctx, r)
	case harness.Capture:
		switch {
		case inv.Foreground:
			_, _, err = ForegroundCapture(ctx, r, inv.Getenv(captureTokenEnv))
		case a.Spec().Capture != harness.CaptureInline:
			err = StartCapture(ctx, r, payload)
		default:
			_, err = Capture(ctx, r)
			var held *lock.HeldError
			if errors.As(err, &held) && ctx.Err() == nil {
				// Another kk process writes for longer than the hook can
				// wait (an index rebuild, an import): the capture waits
				// for it in a detached process instead of being lost.
				c.diag("capture", fmt.Errorf("handed the capture to a detached process, which waits for the writer lock: %w", err))
				err = StartCapture(ctx, r, payload)
			}
		}
	case harness.ProposalDrain:
		if inv.Foreground {
			_, err = Drain(ctx, r)
		} else {
			err = StartDrain(ctx, r)
		}
	case harness.LintTick:
		_, err = LintTick(ctx, r)
	case harness.GraphHint:
		out, err = GraphHint(ctx, r)
	}
	if err != nil {
		return c.fail(ctx, "run", err)
	}
	return outcome{out: out}
}

// eventUses are the places of a payload each event reads: every event
// locates the knowledge base from the cwd; session-start marks the
// session's start and graph-hint looks for its changes by session id;
// prompt-context searches for the prompt; capture reads the session's
// transcript (OpenCode's through its binary), adds the Stop payload's
// last message, and records which event captured it.
var eventUses = map[harness.Event]harness.Use{
	harness.SessionStart:  harness.UseCWD | harness.UseSessionID,
	harness.PromptContext: harness.UseCWD | harness.UsePrompt,
	harness.Capture: harness.UseCWD | harness.UseSessionID | harness.UseTranscriptPath | harness.UseLastMessage |
		harness.UseEvent | harness.UseBinary,
	harness.ProposalDrain: harness.UseCWD,
	harness.LintTick:      harness.UseCWD,
	harness.GraphHint:     harness.UseCWD | harness.UseSessionID,
}

// backgroundEvent reports whether ev has a --foreground form that kk
// starts itself, detached, and that runs past the recursion guard.
func backgroundEvent(ev harness.Event) bool {
	return ev == harness.ProposalDrain || ev == harness.Capture
}

// locate finds the knowledge base: --root or KK_ROOT, else the payload's
// cwd, else the working directory, walking up to the folder holding
// .ai/kenkeep.
//
// A payload's cwd is the session's, and an agent can leave the project
// (a `cd` to a scratch folder); the harness still runs the hook in the
// project whose configuration names it. So a cwd in no knowledge base
// falls back to the hook's own working directory.
func (c *call) locate(cwd string) (*store.KB, error) {
	k, err := Locate(c.inv.Root, cwd, c.inv.Getwd)
	if err != nil && cwd != "" && c.inv.Root == "" && errors.Is(err, store.ErrNotFound) {
		if own, werr := Locate("", "", c.inv.Getwd); werr == nil {
			k, err = own, nil
		}
	}
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	c.kb = k
	c.mu.Unlock()
	return k, nil
}

// Locate finds the knowledge base of a hook call: root when given (it must
// hold .ai/kenkeep), else the first folder holding .ai/kenkeep from cwd
// (or, when cwd is empty, the working directory) upwards.
func Locate(root, cwd string, getwd func() (string, error)) (*store.KB, error) {
	if root != "" {
		k := store.New(root)
		if fi, err := os.Stat(k.Dir); err != nil || !fi.IsDir() {
			if above, ferr := store.Find(root); ferr == nil {
				return nil, fmt.Errorf("%w at %s (from --root or KK_ROOT), but %s above it has one; pass --root %s", store.ErrNotFound, root, above.Root, above.Root)
			}
			return nil, fmt.Errorf("%w at %s (from --root or KK_ROOT)", store.ErrNotFound, root)
		}
		return k, nil
	}
	if cwd == "" {
		wd, err := getwd()
		if err != nil {
			return nil, fmt.Errorf("no cwd in the payload and no working directory: %w", err)
		}
		cwd = wd
	}
	return store.Find(cwd)
}

// diag appends one diagnostic to the knowledge base's hook error log, or
// writes it to stderr when no knowledge base is known. It is safe to call
// from the worker and the deadline at once.
func (c *call) diag(phase string, err error) {
	if err == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	k := c.kb
	if k == nil {
		// Before the payload named a folder: the log of the knowledge base
		// found from --root or the working directory, if any.
		if found, ferr := Locate(c.inv.Root, "", c.inv.Getwd); ferr == nil {
			k = found
		}
	}
	msg := err.Error()
	if k != nil && (index.ReadOnlyDBErr(err) || k.StateNotWritable(err)) {
		msg += "; " + k.StateHint() + "; the hooks still read the knowledge base but record nothing there"
	}
	now := c.inv.Now()
	d := Diagnostic{TS: now.UTC().Format(time.RFC3339Nano), Harness: c.inv.Harness, Event: c.inv.Event, Phase: phase,
		Error: strings.ReplaceAll(msg, "\n", " | ")}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(d) != nil {
		return
	}
	line := buf.Bytes() // one line: Encode ends it with a newline
	// A folder holding only what git left behind of a knowledge base is
	// not one: no _logs/ is made in it.
	if k != nil && k.CheckContained() == nil && k.Leftovers() == nil {
		if werr := appendLine(LogPath(k, now), line); werr == nil {
			return
		}
	}
	_, _ = c.inv.Stderr.Write(append([]byte("kk hook: "), line...))
}

// appendLine appends line to path in one write (O_APPEND), so concurrent
// hooks never interleave their lines. A log that is not a regular file (a
// named pipe) is refused at once: the diagnostic goes to stderr instead
// of holding the hook past its deadline.
func appendLine(path string, line []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Append(path, line, 0o644)
}
