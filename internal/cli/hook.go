package cli

import (
	"context"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/hooks"
)

type hookOpts struct {
	event      string
	harness    string
	foreground bool
	problem    string
}

const hookLong = `Run one kk hook. The hook configuration kk init writes into each harness
calls this command; people rarely need to.

Events:
  session-start   print ENTRY.md for the model, with a note that the notes are
                  snapshots in time, a warning when the index is stale (run
                  'kk index rebuild'), a curation nudge when the session logs
                  waiting for curation reach config curationThreshold (at most
                  hourly), and the error count of the last lint-tick run
  capture         turn the session transcript into .ai/kenkeep/_sessions/
                  <YYYYMMDD-HHmm>-<session>.md, one file per session, rewritten
                  in place when the transcript grows (curator stamps are kept,
                  an unchanged transcript changes nothing); record in the usage
                  ledger which knowledge files the session read. Only the
                  user's own words are kept: the blocks each harness injects
                  into user turns, and kk's own context, are left out. A
                  transcript is read from its last 16 MiB. Where the harness
                  exports its transcript slowly (OpenCode) or writes it after
                  its hooks (Copilot), the hook starts a detached
                  'kk hook capture --foreground' and returns at once; it waits
                  up to 30 s for the transcript to settle (KK_CAPTURE=wait
                  makes the hook wait for it)
  proposal-drain  start a background extraction of the logs waiting for it,
                  through the harness's headless mode (a no-op on claude, where
                  /kk-curate extracts them in the session)
  prompt-context  print the nodes most relevant to the user's prompt
  lint-tick       count a session; every config lintEveryNSessions sessions
                  run lint and keep its counts for session-start

The harness's JSON payload is read from standard input (the read stops
250 ms after the last byte, or after 2 s, for hosts that never close it).
The knowledge base is found from --root or KK_ROOT, else from the payload's
cwd, else the working directory, walking up.

A hook never breaks the agent: it always exits 0, prints to standard output
only what the harness expects (or nothing), and gives up at its deadline
(1 s for session-start and prompt-context, 5 s for capture, 3 min for a
detached capture). Every problem —
a malformed payload, an unknown event or harness, an uninitialized
repository, a missing transcript, an overrun deadline — is appended as one
JSON line {ts, harness, event, phase, error} to
.ai/kenkeep/_logs/hook-errors-YYYY-MM-DD.log (to standard error when no
knowledge base is found). When KK_INTERNAL is set — kk sets it on every
harness process it starts — hooks do nothing, and so under kenkeep's
KENKEEP_BUILDER_INTERNAL=1 (which kk sets too).`

func newHookCmd(app *App) *cobra.Command {
	var o hookOpts
	cmd := &cobra.Command{
		Use:         "hook <event> --harness <id>",
		Annotations: map[string]string{noJSON: "what the harness expects from a hook"},
		Short:       "Run a harness hook (called by the hook configuration kk init writes)",
		Long:        hookLong,
		Example: `  echo '{"session_id":"…","cwd":"'"$PWD"'"}' | kk hook session-start --harness claude
  kk hook capture --harness codex < stop-payload.json`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			switch {
			case len(args) == 0:
				o.problem = "no event named; usage: kk hook <event> --harness <id>"
			case len(args) > 1:
				o.problem = "one event expected, got: " + strings.Join(args, " ")
				o.event = args[0]
			default:
				o.event = args[0]
			}
			if app.JSON {
				o.problem = "bad flags: --json: kk hook prints no data, so it has no --json"
			}
			return runHook(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.harness, "harness", "", "the harness calling the hook (claude, codex, cursor, opencode, copilot, gemini)")
	f.BoolVar(&o.foreground, "foreground", false, "proposal-drain, and capture for harnesses whose capture is detached: do the work in this process instead of starting a detached one")
	// A hook must exit 0 whatever it is given: a flag kk does not know
	// (written by a newer kk, say) is logged, not a usage error, which
	// some harnesses would take as "block the prompt".
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		return runHook(c.Context(), app, hookOpts{harness: o.harness, problem: "bad flags: " + err.Error()})
	})
	return cmd
}

// hookOptions are the hook runtime's timeouts and limits (zero fields:
// hooks.Defaults). Tests set them once, before any command runs, as they
// do newHarnessRegistry.
var hookOptions hooks.Options

func runHook(ctx context.Context, app *App, o hookOpts) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if app.Root == "" && app.Getenv != nil {
		app.Root = app.Getenv("KK_ROOT") // flag errors stop cobra before the root's pre-run sets it
	}
	hooks.Run(ctx, hooks.Invocation{
		Event: o.event, Harness: o.harness, Harnesses: app.harnesses(), Foreground: o.foreground, Problem: o.problem,
		Root: app.Root, Stdin: app.IO.In, Stdout: app.IO.Out, Stderr: app.IO.Err,
		Getenv: app.Getenv, Getwd: app.Getwd, Now: app.Now, Executable: os.Executable, Notify: hooks.DesktopNotifier,
		Options: hookOptions,
	})
	return nil
}
