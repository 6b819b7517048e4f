package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/reorg"
)

func newPlaceCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "place",
		Short: "Move the leaves of a flat (schema version 1) tree into topical folders",
		Long: `The first migration step, flat-to-tree, for trees kept in kenkeep's flat
layout (nodes/practice/ and nodes/map/, leaves with schema_version: 1).
'kk place inventory' lists the leaves; a model (the kk-migrate skill)
clusters them into folders; 'kk place apply' moves them there and sets
their schema_version to 2. 'kk migrate okf-v3' is the next step.`,
	}
	cmd.AddCommand(newPlaceInventoryCmd(app), newPlaceApplyCmd(app))
	return cmd
}

// placeInventoryOpts has no flags of its own; --json is global.
type placeInventoryOpts struct{}

func newPlaceInventoryCmd(app *App) *cobra.Command {
	var o placeInventoryOpts
	return &cobra.Command{
		Use:     "inventory",
		Example: `  kk place inventory > inventory.json`,
		Short:   "List the leaves of a flat tree for clustering",
		Long: `List every leaf of a schema version 1 (flat) tree, sorted by id: id, kind,
source path and title, tab-separated. A tree at any other version (or with
no leaves) has nothing to place: "nothing to do" (at version 2, with a note
naming 'kk migrate okf-v3', the step that is due). Writes nothing.

With --json: {"schema_version", "nothing_to_do", "current" (the tree's
schema version, null when there are no leaves), "leaves": [{"id", "title",
"kind", "tags", "summary", "relates_to", "sourcePath"}]}; sourcePath is
relative to the repository root.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlaceInventory(cmd.Context(), app, o)
		},
	}
}

func runPlaceInventory(_ context.Context, app *App, _ placeInventoryOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := reorg.PlaceInventory(k)
	if err != nil {
		return err
	}
	if app.JSON {
		var cur any
		if res.Detected != 0 {
			cur = res.Detected
		}
		return app.printJSON(map[string]any{"nothing_to_do": res.Noop, "current": cur, "leaves": res.Leaves})
	}
	if res.Noop {
		if res.Detected == 0 {
			fmt.Fprintln(app.IO.Out, "nothing to do: the tree has no leaves")
		} else {
			fmt.Fprintf(app.IO.Out, "nothing to do: the tree is at schema version %d, not a flat (version 1) tree\n", res.Detected)
			if res.Detected == 2 {
				app.notef("leaves are at schema version 2; next, run `kk migrate okf-v3`")
			}
		}
		return nil
	}
	for _, l := range res.Leaves {
		fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\t%s\n", l.ID, l.Kind, l.SourcePath, l.Title)
	}
	return nil
}

type placeApplyOpts struct {
	input string
}

func newPlaceApplyCmd(app *App) *cobra.Command {
	var o placeApplyOpts
	cmd := &cobra.Command{
		Use:     "apply",
		Example: `  kk place apply --input plan.json`,
		Short:   "Move the leaves of a flat tree into the folders a plan names",
		Long: `Carry out a place plan (see 'kk schema place-plan') read from --input
<file|->, standard input by default:
{"placements": [{"id", "targetFolder"}], "folders": [{"folder", "summary"}]}.

The whole plan is checked before anything is written: every id is a leaf
of the inventory and every leaf is placed exactly once, every summary is
for a folder the placements create (or an ancestor of one), no target file
exists, and every leaf reads back as a valid version 2 leaf. A problem
rejects the plan, naming the JSON pointer of the part at fault.

Each leaf is then written to nodes/<targetFolder>/<id>.md with
schema_version: 2 (its other front matter keys and its body keep their
bytes) and its old file is removed; the summaries go to
FOLDER_SUMMARIES.md. The index is not regenerated: run 'kk migrate okf-v3'
next. Runs under the writer lock.

A plan whose leaves are all in place already prints "nothing to do". On a
tree that is not at version 1, any other plan is an error.

Prints "placed", id, from and to for each leaf, tab-separated. With
--json: {"schema_version", "nothing_to_do", "placed": [{"id",
"targetFolder", "from", "to"}], "summaries"}; paths are relative to nodes/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runPlaceApply(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.input, "input", "-", "read the plan from this file, or - for standard input")
	return cmd
}

func runPlaceApply(ctx context.Context, app *App, o placeApplyOpts) error {
	var plan contracts.PlacePlan
	if err := readMovePlan(app, o.input, "place-plan", &plan); err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := reorg.ApplyPlacement(ctx, k, plan, app.Command)
	if err != nil {
		return err
	}
	// The v1 leaves the tree skipped are the ones just placed: no warning.
	app.skipsHandled = map[string]bool{}
	for _, p := range res.Placed {
		app.skipsHandled[p.From] = true
	}
	if app.JSON {
		return app.printJSON(map[string]any{"nothing_to_do": res.Noop, "placed": res.Placed, "summaries": res.Summaries})
	}
	if res.Noop {
		fmt.Fprintln(app.IO.Out, "nothing to do: every leaf of the plan is already placed")
		return nil
	}
	for _, p := range res.Placed {
		fmt.Fprintf(app.IO.Out, "placed\t%s\t%s\t%s\n", p.ID, p.From, p.To)
	}
	for _, f := range res.Summaries {
		fmt.Fprintf(app.IO.Out, "summary\t%s\n", f)
	}
	app.notef("leaves are at schema version 2; next, run `kk migrate okf-v3`")
	return nil
}
