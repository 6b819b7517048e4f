package hooks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/templates"
)

// The proposal drain extracts knowledge candidates from the session logs
// waiting for extraction, through the harness's headless mode, in the
// background: the hook starts a detached `kk hook proposal-drain
// --foreground` and returns at once.
//
// It does nothing on a harness whose spec says Drain is false (Claude
// Code, whose /kk-curate extracts pending logs itself inside the session
// the user already pays for; a background run would pay for the same work
// twice).

// promptPlaceholder is the line of the proposal prompt the transcript
// replaces.
const promptPlaceholder = "[TRANSCRIPT PLACEHOLDER, substituted at runtime]"

// promptName is the proposal prompt's file name, shipped under
// templates/prompts and overridable in .ai/kenkeep/.config/prompts.
const promptName = "proposal-extract.md"

// maxErrorLen bounds a proposal_error.
const maxErrorLen = 500

// drainLocks is the drain's lock; drainLockPath its file under .state/.
func drainLocks(k *store.KB) lock.Set  { return k.Locks("drain.lock") }
func drainLockPath(k *store.KB) string { return drainLocks(k).Path }

// StartDrain starts the background drain when there is something to drain
// and the harness is not one where draining is a no-op. The child is a
// detached kk (its own session, standard streams on the null device)
// running `kk hook proposal-drain --harness <id> --foreground --root
// <root>`, without KK_INTERNAL, so that it can run its own hook logic; the
// headless harness processes it starts carry KK_INTERNAL.
func StartDrain(ctx context.Context, r Request) error {
	if !r.Adapter.Spec().Drain {
		return nil
	}
	pending, err := hasPending(r.KB.SessionsDir())
	if err != nil || !pending {
		return err
	}
	if r.Executable == nil {
		return errors.New("cannot start the background drain: kk's own path is unknown")
	}
	exe, err := r.Executable()
	if err != nil {
		return fmt.Errorf("cannot start the background drain: %w", err)
	}
	cmd := exec.Command(exe, "hook", string(harness.ProposalDrain), "--harness", r.Adapter.ID(), "--foreground", "--root", r.KB.Root)
	cmd.Dir = r.KB.Root
	// The child carries the recursion guard like every process kk starts;
	// --foreground is what lets it past the guard, and the harness runs it
	// starts inherit the guard.
	cmd.Env = harness.ChildEnv(os.Environ())
	detach(cmd)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("starting the background drain: %w", err)
	}
	return cmd.Process.Release()
}

// hasPending reports whether any session log waits for extraction. It
// reads the logs newest first and stops at the first pending one: the
// logs waiting are the recent ones, under thousands that were extracted.
func hasPending(dir string) (bool, error) {
	names, err := logNames(dir)
	if err != nil {
		return false, err
	}
	for i := len(names) - 1; i >= 0; i-- {
		if q, ok := readLogState(filepath.Join(dir, names[i])); ok && q.status == session.StatusPending {
			return true, nil
		}
	}
	return false, nil
}

// DrainResult says what a drain did. Log names are file names under
// _sessions/.
type DrainResult struct {
	// Skipped says why nothing was drained: "harness" (a harness where
	// draining is a no-op) or "locked" (another drain is running).
	Skipped string
	Done    []string
	Failed  []string
}

// Drain extracts candidates from every session log waiting for
// extraction, oldest first, one headless run each, and records the answer
// with session.UpdateProposals: done with the candidates when the answer
// is a valid proposal-output document, failed with the reason otherwise.
// Failed logs are not retried.
//
// Drains exclude each other with a lock on .state/drain.lock (a flock,
// which the operating system releases when its holder dies, so a killed
// drain leaves no stale lock behind; a hung one is ended by DrainDeadline).
// A drain that finds the lock held returns at once with Skipped "locked".
//
// Drain marks its own process with KK_INTERNAL=1 before it starts any
// harness, so that every process it starts inherits it and the harness's
// own hooks do nothing. It is meant to run in a process of its own (`kk
// hook proposal-drain --foreground`).
func Drain(ctx context.Context, r Request) (*DrainResult, error) {
	res := &DrainResult{}
	if !r.Adapter.Spec().Drain {
		res.Skipped = "harness"
		return res, nil
	}
	k := r.KB
	l, err := drainLocks(k).Acquire(ctx, r.opts().DrainLockWait, "kk hook proposal-drain --harness "+r.Adapter.ID())
	var held *lock.HeldError
	if errors.As(err, &held) {
		res.Skipped = "locked"
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	defer func() { _ = l.Release() }()
	if err := os.Setenv(harness.RecursionEnv, "1"); err != nil {
		return nil, err
	}
	tmpl, err := loadPrompt(k)
	if err != nil {
		return nil, err
	}
	outSchema, err := schema.JSON("proposal-output")
	if err != nil {
		return nil, err
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	model := cfg.ProposalModel.HarnessModel()
	for _, p := range r.Adapter.Spec().ModelProblems("proposalModel", model) {
		r.warn("model", errors.New(p))
	}
	logs, problems, err := session.ListAwaitingExtraction(k.SessionsDir())
	if err != nil {
		return nil, err
	}
	for _, p := range problems {
		r.warn("drain", p)
	}
	for _, lg := range logs {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		prompt := strings.Replace(tmpl, promptPlaceholder, lg.Transcript(), 1)
		stamp := r.Now.UTC().Format("20060102T150405Z")
		logID, _ := NormalizeSessionID(r.Adapter.ID(), lg.SessionID) // the file name must be safe whatever the log says
		logFile := filepath.Join(k.LogsDir(), "proposal", logID+"__"+stamp+".jsonl")
		answer, runErr := r.Adapter.Headless(ctx, harness.HeadlessRun{
			Prompt:  prompt,
			Schema:  outSchema,
			Model:   model,
			LogFile: logFile,
			Timeout: r.opts().HeadlessTimeout,
		})
		if err := ctx.Err(); err != nil {
			return res, err // our own deadline, not the log's fault: it stays pending
		}
		if errors.Is(runErr, harness.ErrNotReady) {
			// Not the log's fault either (the harness is missing, or
			// refuses the folder): every log stays pending for a later
			// drain, and the reason goes to the hook error log.
			return res, runErr
		}
		opts := session.UpdateOptions{Now: r.Now, Command: "kk hook proposal-drain --harness " + r.Adapter.ID(), LockWait: r.opts().DrainDeadline}
		if d, ok := ctx.Deadline(); ok {
			// The answer was paid for: it waits for the writer lock as long
			// as the drain may run, not the few seconds a command waits.
			opts.LockWait = time.Until(d)
		}
		if _, err := os.Stat(logFile); err == nil {
			// The run's trace, as the log's proposal_log (relative to
			// .ai/kenkeep, as kenkeep records it).
			opts.Log = filepath.ToSlash(store.RelTo(k.Dir, logFile))
		}
		if runErr == nil {
			var out contracts.ProposalOutput
			if out, runErr = decodeAnswer(answer); runErr == nil {
				opts.Status, opts.Proposals = session.StatusDone, &out
			}
		}
		if runErr != nil {
			opts.Status, opts.Error = session.StatusFailed, truncate(runErr.Error(), maxErrorLen)
		}
		// The log may have been captured again while the harness ran: its
		// transcript then changed and the answer is about an older one.
		if cur, err := session.Read(lg.Path); err != nil || cur.TranscriptHash != lg.TranscriptHash || !cur.AwaitingExtraction() {
			continue
		}
		if _, err := session.UpdateProposals(ctx, k, lg.Path, opts); err != nil {
			return res, err
		}
		if opts.Status == session.StatusDone {
			res.Done = append(res.Done, lg.Name)
		} else {
			res.Failed = append(res.Failed, lg.Name)
		}
	}
	return res, nil
}

// loadPrompt returns the proposal prompt: the local override when present,
// else the shipped one. It must hold the placeholder line.
func loadPrompt(k *store.KB) (string, error) {
	local := filepath.Join(k.PromptsDir(), promptName)
	data, err := os.ReadFile(local)
	name := k.Rel(local)
	if errors.Is(err, fs.ErrNotExist) {
		data, err = templates.Prompts.ReadFile("prompts/" + promptName)
		name = "the shipped " + promptName
	}
	if err != nil {
		return "", err
	}
	if !strings.Contains(string(data), promptPlaceholder) {
		return "", fmt.Errorf("%s: the line %q, which the transcript replaces, is missing", name, promptPlaceholder)
	}
	return string(data), nil
}

// decodeAnswer finds the JSON document in a headless answer and decodes it
// as proposal-output, checked against the schema.
func decodeAnswer(answer string) (contracts.ProposalOutput, error) {
	doc := harness.ExtractJSON(answer)
	if doc == "" {
		return contracts.ProposalOutput{}, fmt.Errorf("the answer holds no JSON object: %q", truncate(strings.TrimSpace(answer), 200))
	}
	return session.DecodeProposals("the extraction answer", []byte(doc))
}

// truncate cuts s to n bytes (on a rune boundary) and marks the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !isRuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }
