package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/hooks"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func newSessionLogCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "session-log",
		Short: "Write captured session logs (the curation queue)",
		Long: `Session logs in .ai/kenkeep/_sessions/ hold a slice of an agent session and,
once extracted, the knowledge candidates found in it; curate consumes
them. These primitives let skills record extraction results.`,
	}
	cmd.AddCommand(newSessionLogStageLiveCmd(app), newSessionLogUpdateProposalsCmd(app))
	return cmd
}

type sessionLogStageLiveOpts struct {
	sessionID string
	generate  bool
	excerpt   string
	input     string
}

func newSessionLogStageLiveCmd(app *App) *cobra.Command {
	var o sessionLogStageLiveOpts
	cmd := &cobra.Command{
		Use:   "stage-live",
		Short: "Record candidates extracted from the live session as a curated-ready log",
		Long: `Write the session log of a session whose candidates were extracted in the
host agent session (the kk-session-extract skill): proposal_status done,
captured_by manual, the candidates from the proposal-output JSON on
standard input (or --input), and the transcript excerpt.

Name the session with --session-id <uuid-v4>: staging it again replaces the
same log, curator stamps included, so the new candidates wait for curation
again; staging the same excerpt and candidates again changes nothing
("unchanged": true). Or pass --generate-session-id, and every call makes a
new log ("idempotency": "degraded").

--transcript-excerpt is a file to read or, if no such file exists, the
text itself. <kk-private>…</kk-private> spans are removed from it; an
unclosed tag removes everything after it.

Prints {"schema_version", "path", "session_id", "idempotency",
"unchanged"}. Then run
'kk curate-dedup --session-id <id>' to curate only this session.`,
		Example: `  kk session-log stage-live --session-id 0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f --transcript-excerpt excerpt.md < proposals.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if (o.sessionID == "") == !o.generate {
				return usagef("give exactly one of --session-id <uuid-v4> or --generate-session-id")
			}
			return runSessionLogStageLive(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.sessionID, "session-id", "", "the session's id, a UUID v4")
	f.BoolVar(&o.generate, "generate-session-id", false, "make up a new session id (each call then writes a new log)")
	f.StringVar(&o.excerpt, "transcript-excerpt", "", "transcript excerpt: a file to read, or the text itself")
	f.StringVar(&o.input, "input", "-", "proposal-output JSON file, or - for standard input")
	return cmd
}

func runSessionLogStageLive(ctx context.Context, app *App, o sessionLogStageLiveOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	if o.sessionID != "" {
		if _, err := session.CheckID(o.sessionID); err != nil {
			return fmt.Errorf("--session-id: %w", err)
		}
	}
	excerpt, err := app.resolveExcerpt(o.excerpt)
	if err != nil {
		return err
	}
	proposals, err := app.readProposals(o.input)
	if err != nil {
		return err
	}
	res, err := session.StageLive(ctx, k, session.StageOptions{
		SessionID: o.sessionID, Generate: o.generate, Excerpt: excerpt,
		Proposals: proposals, Now: app.Now(), Command: app.Command,
	})
	if err != nil {
		return err
	}
	return app.printJSON(map[string]any{"path": res.Path, "session_id": res.SessionID, "idempotency": res.Idempotency, "unchanged": res.Unchanged})
}

type sessionLogUpdateProposalsOpts struct {
	path   string
	status string
	errMsg string
	input  string
}

func newSessionLogUpdateProposalsCmd(app *App) *cobra.Command {
	var o sessionLogUpdateProposalsOpts
	cmd := &cobra.Command{
		Use:   "update-proposals <path> --status done|failed",
		Short: "Record the outcome of extracting a session log's candidates",
		Long: `Record in the session log at <path> what extraction produced.

--status done reads the candidates as proposal-output JSON from standard
input (or --input), stores them under "proposals", sets proposal_status,
proposal_completed_at, and clears proposal_error and proposal_log.
--status failed records the error given with --error ("unknown error" if
none). The transcript and every other key are kept. Recording the same
outcome again changes nothing. The write runs under the writer lock of the
knowledge base that holds the log, wherever kk runs (a log outside any
knowledge base has none to take).

Prints the session id, or with --json {"schema_version", "session_id",
"path", "proposal_status"}.`,
		Example: `  kk session-log update-proposals .ai/kenkeep/_sessions/20260523-1200-<id>.md --status done < proposals.json
  kk session-log update-proposals .ai/kenkeep/_sessions/20260523-1200-<id>.md --status failed --error "model timed out"`,
		Args: oneArg("update-proposals needs the path of a session log"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.path = args[0]
			switch o.status {
			case session.StatusDone:
				if cmd.Flags().Changed("error") {
					return usagef("--error goes with --status failed")
				}
			case session.StatusFailed:
				if cmd.Flags().Changed("input") {
					return usagef("--input goes with --status done")
				}
				// Recorded in the log, and printed by the commands that
				// list failed extractions.
				if !utf8.ValidString(o.errMsg) {
					return fmt.Errorf("--error: is not valid UTF-8")
				}
				if msg := node.TextProblem(o.errMsg); msg != "" {
					return fmt.Errorf("--error: %s", msg)
				}
			case "":
				return usagef("--status is required: done or failed")
			default:
				return usagef("--status is %q; use done or failed", o.status)
			}
			return runSessionLogUpdateProposals(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.status, "status", "", "done (candidates on standard input) or failed")
	f.StringVar(&o.errMsg, "error", "", "with --status failed: what went wrong")
	f.StringVar(&o.input, "input", "-", "with --status done: proposal-output JSON file, or - for standard input")
	return cmd
}

func runSessionLogUpdateProposals(ctx context.Context, app *App, o sessionLogUpdateProposalsOpts) error {
	k, err := app.logKB(o.path)
	if err != nil {
		return err
	}
	// Check the log before reading the candidates, so a wrong path is
	// reported as such.
	if _, err := session.Read(o.path); err != nil {
		return err
	}
	opts := session.UpdateOptions{Status: o.status, Error: o.errMsg, Now: app.Now(), Command: app.Command}
	if o.status == session.StatusDone {
		p, err := app.readProposals(o.input)
		if err != nil {
			return err
		}
		opts.Proposals = &p
	}
	l, err := session.UpdateProposals(ctx, k, o.path, opts)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"session_id": l.SessionID, "path": o.path, "proposal_status": l.ProposalStatus})
	}
	fmt.Fprintln(app.IO.Out, l.SessionID)
	return nil
}

// logKB is the knowledge base that holds the session log at path, whose
// writer lock guards the log, wherever the command runs; else (a log kept
// elsewhere, or --root) the knowledge base the command works on; nil when
// there is none, as for kenkeep, whose update-proposals edits a log at any
// path.
func (a *App) logKB(path string) (*store.KB, error) {
	if a.Root != "" {
		return a.KB()
	}
	k, err := store.Find(filepath.Dir(path))
	if err != nil {
		k, err = a.KB()
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil // a log outside any knowledge base: no lock to take
		}
		return k, err
	}
	if k.LockWait, err = a.lockWait(); err != nil {
		return nil, err
	}
	if _, err := txn.Recover(k); err != nil {
		return nil, err
	}
	a.kbs = append(a.kbs, k)
	return k, nil
}

// readProposals reads a proposal-output document from a file or standard
// input.
func (a *App) readProposals(input string) (contracts.ProposalOutput, error) {
	if input == "-" && a.IO.InTTY {
		return contracts.ProposalOutput{}, usagef("pipe the proposal-output JSON on standard input, or pass --input <file>")
	}
	data, name, err := a.readInput(input)
	if err != nil {
		return contracts.ProposalOutput{}, err
	}
	return session.DecodeProposals(name, data)
}

// resolveExcerpt is --transcript-excerpt: the file it names, read up to
// the transcript a session log keeps, or else the text itself, with its
// private spans removed (session.ResolveExcerpt's rule). A folder, a file
// past the cap and text that is not UTF-8 or holds a NUL are refused: the
// log would hold the path as its transcript, or bytes no reader takes.
func (a *App) resolveExcerpt(arg string) (string, error) {
	if strings.TrimSpace(arg) == "" {
		return session.ResolveExcerpt(arg), nil
	}
	text, name := arg, "the text"
	if fi, err := os.Stat(arg); err == nil {
		if fi.IsDir() {
			return "", fmt.Errorf("--transcript-excerpt: %s is a folder; name a file, or give the text itself", arg)
		}
		data, _, err := a.readLimited(arg, "--transcript-excerpt", hooks.MaxLogTranscript)
		if err != nil {
			return "", err
		}
		text, name = string(data), arg
	}
	switch {
	case !utf8.ValidString(text):
		return "", fmt.Errorf("--transcript-excerpt: %s is not valid UTF-8", name)
	case strings.IndexByte(text, 0) >= 0:
		return "", fmt.Errorf("--transcript-excerpt: %s holds a NUL byte", name)
	}
	return session.StripPrivate(text), nil
}
