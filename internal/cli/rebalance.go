package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/schema"
)

func newRebalanceCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "rebalance",
		Short: "Find and apply structural changes that keep the folder tree balanced",
		Long: `'kk rebalance trigger' names the folders and leaves whose shape calls for a
structural change; a model (the kk-curate skill) turns those into a plan,
and 'kk rebalance move' applies the plan. Neither calls a model.`,
	}
	cmd.AddCommand(newRebalanceTriggerCmd(app), newRebalanceMoveCmd(app))
	return cmd
}

// rebalanceTriggerOpts has no flags of its own; --json is global.
type rebalanceTriggerOpts struct{}

func newRebalanceTriggerCmd(app *App) *cobra.Command {
	var o rebalanceTriggerOpts
	return &cobra.Command{
		Use: "trigger",
		Example: `  kk rebalance trigger
  kk rebalance trigger --json`,
		Short: "List the structural changes the tree's shape calls for",
		Long: `Measure every folder and leaf and list the structural changes that cross a
threshold:

  split-folder   a folder (the root included) with more than 12 direct leaves
  merge          a folder other than the root with fewer than 2 direct
                 leaves and no subfolders
  split-leaf     a leaf of more than 1500 estimated tokens (characters of
                 title, description and body / 4) with 3 or more distinct tags
  create-branch  a root leaf with no edges; root leaves without edges that
                 share a tag are grouped into one action naming the tag

The branch of an action is a folder for split-folder and merge, and a leaf
path for split-leaf and create-branch, relative to nodes/. Actions are
sorted by branch, then operation. Writes nothing.

Prints one action per line: operation, branch ("." for the root), and for
a grouped create-branch the tag and the grouped leaves, tab-separated;
"nothing to do" when no threshold is crossed. With --json: {"schema_version",
"actions": [{"branch", "operation", "branches"?, "topic"?}]}.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRebalanceTrigger(cmd.Context(), app, o)
		},
	}
}

func runRebalanceTrigger(_ context.Context, app *App, _ rebalanceTriggerOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	actions, err := reorg.RebalanceTrigger(k)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"actions": actions})
	}
	if len(actions) == 0 {
		fmt.Fprintln(app.IO.Out, "nothing to do: no folder or leaf crosses a rebalance threshold")
		return nil
	}
	for _, a := range actions {
		branch := a.Branch
		if branch == "" {
			branch = "." // the nodes/ root
		}
		if a.Topic != "" {
			fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\t%s\n", a.Operation, branch, a.Topic, strings.Join(a.Branches, ","))
			continue
		}
		fmt.Fprintf(app.IO.Out, "%s\t%s\n", a.Operation, branch)
	}
	return nil
}

type rebalanceMoveOpts struct {
	input string
}

func newRebalanceMoveCmd(app *App) *cobra.Command {
	var o rebalanceMoveOpts
	cmd := &cobra.Command{
		Use:     "move",
		Example: `  kk rebalance move --input plan.json`,
		Short:   "Apply a rebalance plan, then regenerate the index",
		Long: `Apply a rebalance plan (see 'kk schema rebalance-plan') read from --input
<file|->, standard input by default. Operations run in order:

  split-folder   {branch, groups: [{subfolder, summary, ids}]}: the listed
                 direct leaves of branch move into branch/<subfolder>
  merge          {branch, into}: every direct leaf of branch moves into the
                 existing folder into ("" is the root)
  create-branch  {folder, summary, ids}: the leaves move into folder
  split-leaf     {leafId, folder, summary, children: [{title, summary, body,
                 tags, relates_to}]}: the leaf is replaced by new leaves in
                 folder; its id is retired and redirected to theirs in
                 nodes/.redirects.json. Each child has its own title:
                 two titles giving one id are refused

The whole plan is checked against the tree, operation by operation, before
anything is written; a problem rejects it naming the JSON pointer of the
part at fault. Leaves move as whole files, so git sees renames. Summaries
go to FOLDER_SUMMARIES.md. The generated Related sections of moved and new
leaves, and of every leaf linking to a moved or retired id, are brought up
to date (links to a retired id lead to its successor). Links typed in a
body that lead to a leaf that moves, and a moved leaf's own links, are
pointed at where the leaves are (in the form they had: relative, or from
nodes/); a link to a leaf a split retires is left as it is, and kk check
names it. The index files are regenerated. Runs under the writer lock.

Operations the tree already shows are skipped, so running a plan twice
changes nothing the second time ("nothing to do").

Prints what moved, tab-separated. With --json: {"schema_version",
"nothing_to_do", "moves": [{"operation", "id"?, "from"?, "to"?, "newIds"?,
"redirectFrom"?}], "skipped": [{"pointer", "reason"}], "relinked",
"summaries", "index_changed", "index_removed"}. Leaf and folder paths are
relative to nodes/.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runRebalanceMove(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.input, "input", "-", "read the plan from this file, or - for standard input")
	return cmd
}

func runRebalanceMove(ctx context.Context, app *App, o rebalanceMoveOpts) error {
	var plan contracts.RebalancePlan
	if err := readMovePlan(app, o.input, "rebalance-plan", &plan); err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := reorg.ApplyRebalance(ctx, k, plan, app.Command)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{
			"nothing_to_do": res.Noop, "moves": res.Moves, "skipped": res.Skipped,
			"relinked": res.Relinked, "summaries": res.Summaries, "index_changed": res.IndexChanged, "index_removed": res.IndexRemoved,
		})
	}
	if res.Noop {
		fmt.Fprintln(app.IO.Out, "nothing to do: the tree already looks as the plan asks")
		return nil
	}
	for _, m := range res.Moves {
		if m.Operation == contracts.OpSplitLeaf {
			fmt.Fprintf(app.IO.Out, "split\t%s\t%s\t%s\n", m.RedirectFrom, m.From, strings.Join(m.NewIDs, ","))
			continue
		}
		fmt.Fprintf(app.IO.Out, "moved\t%s\t%s\t%s\n", m.ID, m.From, m.To)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(app.IO.Out, "skipped\t%s\t%s\n", s.Pointer, s.Reason)
	}
	for _, p := range res.Relinked {
		fmt.Fprintf(app.IO.Out, "relinked\t%s\n", p)
	}
	for _, f := range res.Summaries {
		fmt.Fprintf(app.IO.Out, "summary\t%s\n", f)
	}
	app.notef("regenerated %d index file(s)", len(res.IndexChanged)+len(res.IndexRemoved))
	return nil
}

// readMovePlan reads a plan from a file or standard input ("-"), checks it
// against the named schema, and decodes it into out. A plan that does not
// parse or match is an error naming the input and every failing JSON
// pointer.
func readMovePlan(app *App, input, name string, out any) error {
	if input == "-" && app.IO.InTTY {
		return usagef("the plan is read from standard input: pipe it in or pass --input <file>")
	}
	data, src, err := app.readInput(input)
	if err != nil {
		return err
	}
	doc, err := schema.ParseDocument(data)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	if err := schema.Validate(name, doc); err != nil {
		return fmt.Errorf("%s: the plan was rejected and nothing was written: it %w", src, err)
	}
	raw, err := json.Marshal(doc)
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(out); err != nil {
		return fmt.Errorf("%s: the plan does not decode: %v (see `kk schema %s`)", src, err, name)
	}
	return nil
}
