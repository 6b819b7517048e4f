package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/store"
)

type curateDedupOpts struct {
	input        string
	output       string
	runID        string
	sessionsDir  string
	conflictsDir string
	sessionID    string
}

func newCurateDedupCmd(app *App) *cobra.Command {
	var o curateDedupOpts
	cmd := &cobra.Command{
		Use:   "curate-dedup",
		Short: "Merge duplicate curator actions, file contradictions, stamp consumed sessions",
		Long: `Take the curator's actions (curator-output JSON, see 'kk schema
curator-output') from --input or standard input and:

  1. merge actions that would produce the same node: the one with the
     higher kk_confidence stays, the first one on a tie; drops are merged
     by candidate_origin;
  2. write each surviving contradict action as a conflict file
     conflicts/<run-id>-<n>.md for a human to resolve;
  3. write the other surviving actions to --output, for curate-persist;
  4. stamp the session logs the actions came from (candidate_origin
     <session_id>:<practice|map>:<index>) with curator_processed_at and
     curator_run_id. Extracted sessions without any candidate are stamped
     too. Sessions whose candidates are not in the input stay waiting.

With --session-id only that session is stamped, and an action from another
session is an error (the kk-session-extract flow).

Everything is checked before anything is written: an unknown session, a
session that is not extracted or was curated by another run, or a candidate
index the session does not have fails the run with nothing written.
Running again with the same --run-id and input changes nothing.
--output, --conflicts-dir and --sessions-dir may not be inside
.ai/kenkeep/nodes/, which holds only leaves.

Prints {"schema_version", "kept", "conflicts", "stamped", "runId"}.`,
		Example: `  kk curate-dedup --input actions.json --output survivors.json --run-id 2026-05-23-a
  kk curate-dedup --session-id 0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f --output survivors.json < actions.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if cmd.Flags().Changed("run-id") && o.runID == "" {
				return usagef("--run-id is empty; leave it out to get a new random run id")
			}
			return runCurateDedup(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "-", "curator-output JSON file, or - for standard input")
	f.StringVar(&o.output, "output", "", "write the surviving (non-conflict) actions to this file")
	f.StringVar(&o.runID, "run-id", "", "name of this curate run (default: a new random UUID)")
	f.StringVar(&o.sessionsDir, "sessions-dir", "", "session logs folder (default: .ai/kenkeep/_sessions)")
	f.StringVar(&o.conflictsDir, "conflicts-dir", "", "conflict files folder (default: .ai/kenkeep/conflicts)")
	f.StringVar(&o.sessionID, "session-id", "", "stamp only this session (a UUID v4)")
	return cmd
}

func runCurateDedup(ctx context.Context, app *App, o curateDedupOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	if o.runID == "" {
		o.runID = curate.NewRunID()
	}
	if err := curate.CheckRunID(o.runID); err != nil {
		return err
	}
	data, name, err := app.readInput(o.input)
	if err != nil {
		return err
	}
	actions, err := curate.DecodeActions(name, data)
	if err != nil {
		return err
	}
	if err := curate.CheckHomeFolders(name, actions); err != nil {
		return err
	}
	opts := curate.DedupOptions{RunID: o.runID, SessionID: o.sessionID, Now: app.Now(), Command: app.Command}
	for _, p := range []struct{ in, dst *string }{{&o.sessionsDir, &opts.SessionsDir}, {&o.conflictsDir, &opts.ConflictsDir}, {&o.output, &opts.Output}} {
		if *p.in == "" {
			continue
		}
		if *p.dst, err = app.absPath(*p.in); err != nil {
			return err
		}
	}
	// The sessions are read from a folder that must be there; the conflict
	// files go to a folder made when missing, but not over a file.
	for _, p := range []struct{ flag, arg, path, what string }{
		{"--sessions-dir", o.sessionsDir, opts.SessionsDir, "the folder that holds the session logs"},
		{"--conflicts-dir", o.conflictsDir, opts.ConflictsDir, "a folder for the conflict files (it is made when missing)"},
	} {
		if p.path == "" {
			continue
		}
		fi, err := os.Stat(p.path)
		switch {
		case errors.Is(err, fs.ErrNotExist) && p.flag == "--sessions-dir":
			return fmt.Errorf("%s %s does not exist; name %s", p.flag, p.arg, p.what)
		case err == nil && !fi.IsDir():
			return fmt.Errorf("%s %s is not a folder; name %s", p.flag, p.arg, p.what)
		}
	}
	// nodes/ holds leaves and the files kk generates for them, nothing
	// else: survivors or conflict files there would sit in the knowledge
	// tree as files no reader knows.
	for _, p := range []struct{ flag, path string }{{"--output", opts.Output}, {"--conflicts-dir", opts.ConflictsDir}, {"--sessions-dir", opts.SessionsDir}} {
		if err := refuseInsideNodes(k, p.flag, p.path); err != nil {
			return err
		}
	}
	res, err := curate.RunDedup(ctx, k, actions, opts)
	if err != nil {
		return err
	}
	// Every curate run, parallel or sequential, keeps a trace of its own.
	trace := curate.Trace{Kind: "curator", Run: res.RunID}
	if err := trace.Append(k, app.Now(), "deduped", map[string]any{"actions": len(actions), "kept": res.Kept, "conflicts": res.Conflicts, "stamped": res.Stamped}); err != nil {
		app.warnf("the trace %s: %v", k.Rel(trace.Path(k)), err)
	}
	return app.printJSON(map[string]any{"kept": res.Kept, "conflicts": res.Conflicts, "stamped": res.Stamped, "runId": res.RunID})
}

// refuseInsideNodes is an error naming flag when path (absolute) is
// nodes/ or lies inside it, symbolic links followed; an empty path is
// fine.
func refuseInsideNodes(k *store.KB, flag, path string) error {
	if path == "" {
		return nil
	}
	if isInside(resolveExisting(k.NodesDir()), resolveExisting(path)) {
		return fmt.Errorf("%s %s is inside %s/, which holds only the leaves of the knowledge tree; give a path outside it", flag, k.Rel(path), k.Rel(k.NodesDir()))
	}
	return nil
}

// isInside reports whether path is dir or lies below it.
func isInside(dir, path string) bool {
	rel, err := filepath.Rel(dir, path)
	return err == nil && (rel == "." || filepath.IsLocal(rel))
}

// resolveExisting resolves the symbolic links of the longest part of path
// that exists, and joins the rest to it as given.
func resolveExisting(path string) string {
	path = filepath.Clean(path)
	var rest []string
	for p := path; ; {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			for i := len(rest) - 1; i >= 0; i-- {
				r = filepath.Join(r, rest[i])
			}
			return r
		}
		parent := filepath.Dir(p)
		if parent == p {
			return path
		}
		rest = append(rest, filepath.Base(p))
		p = parent
	}
}

// absPath resolves a path given on the command line against the working
// directory.
func (a *App) absPath(p string) (string, error) {
	if filepath.IsAbs(p) {
		return p, nil
	}
	wd, err := a.Getwd()
	if err != nil {
		return "", err
	}
	return filepath.Join(wd, p), nil
}
