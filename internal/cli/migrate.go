package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/migrate"
	"github.com/kk-project/kk/internal/store"
	"github.com/spf13/cobra"
)

func newMigrateCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "migrate",
		Short: "Bring a tree written by an older kenkeep to the current leaf format",
		Long: `Knowledge trees written by kenkeep come in three schema versions: 1 (the flat
nodes/practice/ and nodes/map/ layout), 2 (topical folders, leaves with
schema_version/id/kind/summary keys) and 3 (OKF concept documents with kk_
keys), which is what kk writes.

'kk migrate status' shows the version of the tree and the steps that lead
to version 3; 'kk migrate okf-v3' carries out the step from 2 to 3.`,
	}
	cmd.AddCommand(newMigrateStatusCmd(app), newMigrateOKFv3Cmd(app))
	return cmd
}

// migrateStatusOpts has no flags of its own; --json is global.
type migrateStatusOpts struct{}

func newMigrateStatusCmd(app *App) *cobra.Command {
	var o migrateStatusOpts
	return &cobra.Command{
		Use:     "status",
		Example: `  kk migrate status`,
		Short:   "Show the tree's schema version and the migration steps it needs",
		Long: `Detect the schema version of the tree (the lowest version any leaf declares)
and list the steps, in order, that bring it to version 3, each with the
primitives that carry it out (with --json, named as kenkeep's kk-migrate
skill names them: "place inventory", "place apply", "migrate okf-v3"). A
tree at version 3, one with no leaves, or no knowledge base at all prints
"nothing to do" and exits 0. A leaf that declares a schema version no tool
wrote (0, say) is an error naming it. Writes nothing.

With --json: {"schema_version", "current" (null when there are no leaves),
"target", "steps": [{"id", "from", "to", "primitives"}]}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMigrateStatus(app, o)
		},
	}
}

func runMigrateStatus(app *App, o migrateStatusOpts) error {
	k, err := app.KB()
	current := 0
	switch {
	case errors.Is(err, store.ErrNotFound):
		// No knowledge base: nothing to migrate (kenkeep says the same).
	case err != nil:
		return err
	default:
		if current, err = migrate.DetectSchemaVersion(k); err != nil {
			return err
		}
	}
	steps, err := migrate.PlanMigration(current)
	if err != nil {
		return err
	}
	if app.JSON {
		var cur any
		if current != 0 {
			cur = current
		}
		return app.printJSON(map[string]any{"current": cur, "target": migrate.TargetSchemaVersion, "steps": steps})
	}
	if len(steps) == 0 {
		if k == nil {
			fmt.Fprintln(app.IO.Out, "nothing to do: there is no knowledge base here")
		} else if current == 0 {
			fmt.Fprintln(app.IO.Out, "nothing to do: the tree has no leaves")
		} else {
			fmt.Fprintf(app.IO.Out, "nothing to do: the tree is at schema version %d\n", current)
		}
		return nil
	}
	fmt.Fprintf(app.IO.Out, "current: %d\ntarget: %d\nsteps:\n", current, migrate.TargetSchemaVersion)
	for i, s := range steps {
		fmt.Fprintf(app.IO.Out, "  %d. %s (%d -> %d): %s\n", i+1, s.ID, s.From, s.To, s.Commands())
	}
	return nil
}

// migrateOKFv3Opts has no flags of its own; --json is global.
type migrateOKFv3Opts struct{}

func newMigrateOKFv3Cmd(app *App) *cobra.Command {
	var o migrateOKFv3Opts
	return &cobra.Command{
		Use:     "okf-v3",
		Example: `  kk migrate status && kk migrate okf-v3`,
		Short:   "Convert a schema version 2 tree to version 3",
		Long: `Rewrite every version 2 leaf in the version 3 format: kind becomes type,
summary becomes description, id, derived_from, relates_to, depends_on and
confidence get the kk_ prefix, other keys are kept after them, and the body
is kept with its generated Related and Citations sections added. The
summary in each old folder index.md moves into FOLDER_SUMMARIES.md (an
entry already there wins), and every index file is regenerated.

The run is deterministic and holds the writer lock. Every converted leaf
is computed and read back before the first file is written, so bad input
changes nothing. A body with its own "# Related" section gets the
generated links at the end of it, under its heading. Leaves whose body
already had its own "# Citations" heading are converted and listed as
collisions, to merge by hand.

The tree must be at schema version 2 ('kk migrate status' tells); a tree
already at version 3, or with no leaves, is left alone ("nothing to do").

With --json: {"schema_version", "nothing_to_do", "converted",
"folder_summaries", "collisions": [{"id", "path", "headings"}],
"index_changed", "index_removed"}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMigrateOKFv3(cmd.Context(), app, o)
		},
	}
}

func runMigrateOKFv3(ctx context.Context, app *App, o migrateOKFv3Opts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := migrate.MigrateOKFv3(ctx, k, app.Command)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{
			"nothing_to_do": res.Noop, "converted": res.Converted,
			"folder_summaries": res.FolderSummaries, "collisions": res.Collisions,
			"index_changed": res.IndexChanged, "index_removed": res.IndexRemoved,
		})
	}
	if res.Noop {
		if res.Detected == 0 {
			fmt.Fprintln(app.IO.Out, "nothing to do: the tree has no leaves")
		} else {
			fmt.Fprintf(app.IO.Out, "nothing to do: the tree is already at schema version %d\n", res.Detected)
		}
		return nil
	}
	fmt.Fprintf(app.IO.Out, "converted\t%d leaf file(s) to schema version %d\n", res.Converted, migrate.TargetSchemaVersion)
	fmt.Fprintf(app.IO.Out, "summaries\t%d folder summary(ies) moved into FOLDER_SUMMARIES.md\n", res.FolderSummaries)
	fmt.Fprintf(app.IO.Out, "index\t%d file(s) regenerated, %d removed\n", len(res.IndexChanged), len(res.IndexRemoved))
	for _, c := range res.Collisions {
		fmt.Fprintf(app.IO.Out, "collision\t%s\t%s\n", c.Path, strings.Join(c.Headings, ", "))
	}
	if len(res.Collisions) > 0 {
		app.warnf("%d leaf file(s) already had their own Citations heading; the generated section now repeats it, so merge the two by hand", len(res.Collisions))
	}
	return nil
}
