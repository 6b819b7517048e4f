package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/store"
)

// Some harnesses cannot be captured within a hook's deadline: OpenCode's
// transcript comes from `opencode export`, which takes seconds, and
// Copilot CLI writes a turn to its transcript only after its hooks have
// run (Spec.Capture). For them the capture hook starts a detached `kk hook
// capture --foreground`, handing it the payload, and returns at once; the
// detached capture has a deadline of its own (CaptureDeadline), waits for
// a settling transcript (CaptureSettled), and logs its failures like any
// hook.
//
// Several detached captures of one session may run at once (a capture
// per turn, then one at session end). They take turns on one lock, and a
// capture that finds a newer one of its session waiting leaves the work
// to it: the newer one reads a transcript at least as complete, so the
// log never goes back to an older state.

// ErrNotSettled is logged when a transcript did not settle within
// SettleMax; the capture still records what the file held.
var ErrNotSettled = errors.New("the harness had not finished writing the transcript")

func captureDir(k *store.KB) string            { return filepath.Join(k.StateDir(), "capture") }
func captureLocks(k *store.KB) lock.Set        { return k.Locks("capture/lock") } // .state/capture/lock
func latestPath(k *store.KB, id string) string { return filepath.Join(captureDir(k), id+".latest") }

// StartCapture starts a detached capture of the session: `kk hook capture
// --harness <id> --foreground --root <root>`, in a session of its own,
// with payload (the hook's own) on its standard input. It records the
// capture as the newest of its session first, so older captures still
// waiting leave the work to it.
func StartCapture(ctx context.Context, r Request, payload []byte) error {
	id, err := NormalizeSessionID(r.Adapter.ID(), r.Input.SessionID)
	if err != nil {
		return err
	}
	if r.Executable == nil {
		return errors.New("cannot start the detached capture: kk's own path is unknown")
	}
	exe, err := r.Executable()
	if err != nil {
		return fmt.Errorf("cannot start the detached capture: %w", err)
	}
	dir := captureDir(r.KB)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	// The payload goes through a file: the child may start reading after
	// this process has exited.
	f, err := os.CreateTemp(dir, id+"-*.payload")
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(f.Name()) }() // the child holds it open
	defer func() { _ = f.Close() }()
	if _, err := f.Write(payload); err != nil {
		return err
	}
	if _, err := f.Seek(0, 0); err != nil {
		return err
	}
	token := strconv.FormatInt(time.Now().UnixNano(), 10) + "-" + strconv.Itoa(os.Getpid())
	if err := atomicfile.Write(latestPath(r.KB, id), []byte(token), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(exe, "hook", string(harness.Capture), "--harness", r.Adapter.ID(), "--foreground", "--root", r.KB.Root)
	cmd.Dir = r.KB.Root
	// As with the drain: the guard is set, --foreground lets the child
	// past it, and the processes it starts (opencode export) inherit it.
	cmd.Env = append(harness.ChildEnv(os.Environ()), captureTokenEnv+"="+token)
	cmd.Stdin = f
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the detached capture: %w", err)
	}
	if r.WaitDetached {
		if err := cmd.Wait(); err != nil {
			return fmt.Errorf("the detached capture: %w", err)
		}
		return nil
	}
	return cmd.Process.Release()
}

// supersedeDetached retires the detached capture of session id waiting
// to run, when it was started before `before`: a capture that read the
// transcript at `before` has a newer one than that capture will write.
// It runs under the writer lock, as the detached capture's own last check
// does. A capture started later is left to run.
func supersedeDetached(k *store.KB, id string, before time.Time) {
	p := latestPath(k, id)
	cur, err := os.ReadFile(p)
	if err != nil {
		return
	}
	stamp, _, _ := strings.Cut(string(cur), "-")
	if n, err := strconv.ParseInt(stamp, 10, 64); err == nil && n < before.UnixNano() {
		_ = os.Remove(p)
	}
}

// captureTokenEnv hands a detached capture its token: the content of its
// session's .latest file while no newer capture was started.
const captureTokenEnv = "KK_CAPTURE_TOKEN"

// ForegroundCapture is the detached capture's work: wait for the capture
// lock, step aside for a newer capture of the session, wait for the
// transcript to settle where the harness writes it late, then capture.
// token is the capture's own (see StartCapture); "" runs unconditionally.
// Skipped reports that a newer capture of the session was waiting.
func ForegroundCapture(ctx context.Context, r Request, token string) (res *CaptureResult, skipped bool, err error) {
	id, err := NormalizeSessionID(r.Adapter.ID(), r.Input.SessionID)
	if err != nil {
		return nil, false, err
	}
	wait := r.opts().CaptureDeadline
	if d, ok := ctx.Deadline(); ok {
		wait = time.Until(d)
	}
	l, err := captureLocks(r.KB).Acquire(ctx, wait, "kk hook capture --foreground --harness "+r.Adapter.ID())
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = l.Release() }()
	latest := latestPath(r.KB, id)
	if cur, err := os.ReadFile(latest); err == nil && token != "" && string(cur) != token {
		return nil, true, nil
	} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, false, err
	}
	if r.Adapter.Spec().Capture == harness.CaptureSettled {
		if err := waitSettled(ctx, r); err != nil {
			if !errors.Is(err, ErrNotSettled) {
				return nil, false, err
			}
			r.warn("settle", err) // capture what is there all the same
		}
	}
	// The writer lock is waited for as long as the deadline allows; under
	// it, the capture checks again that it is still the newest of its
	// session: a capture started later, or made in a hook after this one
	// began (see Capture), has a newer transcript.
	var current func(string) func() bool
	if token != "" {
		current = func(string) func() bool {
			return func() bool {
				cur, err := os.ReadFile(latest)
				return err == nil && string(cur) == token
			}
		}
	}
	res, err = captureWith(ctx, r, wait, current)
	if cur, rerr := os.ReadFile(latest); rerr == nil && string(cur) == token {
		_ = os.Remove(latest) // no newer capture of this session was started
	}
	return res, false, err
}

// waitSettled waits until the adapter says the session's transcript holds
// the turn the hook fired for and the file has not changed for
// Options.SettleQuiet, or until Options.SettleMax (ErrNotSettled).
func waitSettled(ctx context.Context, r Request) error {
	o := r.opts()
	s, ok := r.Adapter.(harness.TranscriptSettler)
	path := r.Input.TranscriptPath
	if !ok || path == "" {
		return nil
	}
	if !filepath.IsAbs(path) && r.Input.CWD != "" {
		path = filepath.Join(r.Input.CWD, path)
	}
	give := time.NewTimer(o.SettleMax)
	defer give.Stop()
	tick := time.NewTicker(o.SettlePoll)
	defer tick.Stop()
	var last os.FileInfo
	var since time.Time
	for {
		fi, err := os.Stat(path)
		switch {
		case err != nil:
			last = nil
		case last == nil || fi.Size() != last.Size() || !fi.ModTime().Equal(last.ModTime()):
			last, since = fi, time.Now()
		case time.Since(since) >= o.SettleQuiet:
			if done, err := s.Settled(path); err != nil {
				return err
			} else if done {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-give.C:
			return fmt.Errorf("%w within %s (%s); captured what it held", ErrNotSettled, o.SettleMax, path)
		case <-tick.C:
		}
	}
}
