package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
)

type curatePersistOpts struct {
	input   string
	noIndex bool
	trace   string
}

func newCuratePersistCmd(app *App) *cobra.Command {
	var o curatePersistOpts
	cmd := &cobra.Command{
		Use:   "curate-persist",
		Short: "Write the surviving curator actions as leaves",
		Long: `Apply curator actions (curator-output JSON, usually the --output of
curate-dedup) from --input or standard input, in order, under one writer
lock, then regenerate the index files once (unless --no-index):

  add     writes a new leaf <type>-<slug of title> in home_folder, which must
          be an existing folder under nodes/ (empty: the nodes/ root), with
          kk_derived_from [candidate_origin]. If the id is taken the action
          fails with add_collision: modify the existing node instead.
  modify  rewrites target_node_id in place with the proposed fields; the
          candidate_origin joins its kk_derived_from. A missing target fails
          with modify_missing_target; a node never changes type.
  drop    writes nothing.

A proposed node that kk node write would refuse (an edge to its own id
among them) fails its action with invalid_node.

A failed action does not stop the others, and the leaves already written
stay written. An action whose leaf already has exactly that content is
"unchanged", so running the same input twice is harmless.

Prints {"schema_version", "written", "unchanged", "dropped", "failed",
"results": [{"index", "action", "candidate_origin", "status", "id",
"path" (under nodes/), "placement", "reason", "message"}], "index_changed"}.
Exits 1 when any action failed. Malformed input writes nothing.`,
		Example: `  kk curate-persist --input survivors.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCuratePersist(cmd.Context(), app, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.input, "input", "-", "curator-output JSON file, or - for standard input")
	f.BoolVar(&o.noIndex, "no-index", false, "leave the index files alone (run kk index rebuild afterwards)")
	f.StringVar(&o.trace, "trace", "", "append the outcome to a run's trace, <kind>:<run-id> (curator:<run-id> for a curate run), in .ai/kenkeep/_logs/<kind>/")
	return cmd
}

func runCuratePersist(ctx context.Context, app *App, o curatePersistOpts) error {
	var trace *curate.Trace
	if o.trace != "" {
		t, err := curate.ParseTrace(o.trace)
		if err != nil {
			return usagef("--trace: %v", err)
		}
		trace = &t
	}
	k, err := app.KB()
	if err != nil {
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
	k.Now = app.Now
	rep, err := curate.Persist(ctx, k, actions, curate.PersistOptions{Command: app.Command, NoIndex: o.noIndex})
	if trace != nil {
		event, fields := "persisted", map[string]any{}
		if err != nil {
			event, fields["reason"] = "failed", err.Error()
		} else {
			fields["written"], fields["unchanged"], fields["dropped"], fields["failed"] = rep.Written, rep.Unchanged, rep.Dropped, rep.Failed
		}
		if terr := trace.Append(k, app.Now(), event, fields); terr != nil {
			app.warnf("the trace %s: %v", k.Rel(trace.Path(k)), terr)
		}
	}
	if err != nil {
		return err
	}
	if err := app.printJSON(rep); err != nil {
		return err
	}
	if o.noIndex && rep.Written > 0 {
		app.notef("index files not regenerated (--no-index); run `kk index rebuild` when done")
	}
	if rep.Failed > 0 {
		if !app.JSON {
			fmt.Fprintf(app.IO.Err, "kk: %d of %d action(s) failed; see their reason in the results\n", rep.Failed, len(rep.Results))
		}
		return &SilentError{Code: ExitFailure}
	}
	return nil
}
