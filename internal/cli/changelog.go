package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/store"
)

func newChangelogCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "changelog",
		Short: "Append to or page through an atom's or molecule's changelog",
		Long: `Every atom and molecule keeps an append-only changelog of which task changed
it and why. These commands are the command-line faces of manage_changelog;
each also takes the whole parameter object from --input <file|->, and prints
the result envelope with --json. A failed operation exits 1 and prints
"kk: <CODE>: <message>".`,
	}
	cmd.AddCommand(newChangelogAppendCmd(app), newChangelogSearchCmd(app))
	return cmd
}

// changelogArgs checks <parentType> <parentId>, which --input replaces.
func changelogArgs(app *App, input *string, flags ...string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if *input != "" {
			if len(args) != 0 {
				return usagef("--input holds the whole parameter object; drop the arguments")
			}
			return refuseWithInput(app, cmd, flags...)
		}
		if len(args) != 2 {
			return usagef("changelog %s needs <parentType> (atom or molecule) and <parentId> (got %d argument(s))", cmd.Name(), len(args))
		}
		return nil
	}
}

type changelogAppendOpts struct {
	task, summary string
	input         string
}

func newChangelogAppendCmd(app *App) *cobra.Command {
	var o changelogAppendOpts
	cmd := &cobra.Command{
		Use:   "append <parentType> <parentId>",
		Short: "Add an entry to a changelog",
		Long: `Append an entry {task, summary} to the changelog of the atom or molecule
<parentId>; <parentType> is atom or molecule. The parent's version goes up
by one.`,
		Example: `  kk changelog append atom map-http-errors --task T-12 --summary "Wrap errors with the request id"`,
		Args:    changelogArgs(app, &o.input, "task", "summary"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := graph.ManageChangelogParams{Operation: "append", TaskID: o.task, Summary: o.summary}
			if o.input == "" {
				p.ParentType, p.ParentID = args[0], args[1]
			}
			return runChangelog(cmd.Context(), app, o.input, p, typed(graph.ManageChangelogParams.AsAppend, graph.AppendChangelog))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.task, "task", "", "id of the task that made the change (required)")
	f.StringVar(&o.summary, "summary", "", "what changed and why (required)")
	f.StringVar(&o.input, "input", "", "read the manage_changelog parameter object from a file, or - for standard input")
	return cmd
}

type changelogSearchOpts struct {
	limit, offset int
	input         string
}

func newChangelogSearchCmd(app *App) *cobra.Command {
	var o changelogSearchOpts
	cmd := &cobra.Command{
		Use:   "search <parentType> <parentId>",
		Short: "List a changelog, newest first",
		Long: `List the changelog of the atom or molecule <parentId>, newest entry first,
one "<time>\t<task>\t<summary>" line each; --limit and --offset page
through it.`,
		Example: `  kk changelog search molecule molecule-http-layer --limit 10`,
		Args:    changelogArgs(app, &o.input, "limit", "offset"),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := graph.ManageChangelogParams{Operation: "search", Limit: intFlag(cmd, "limit", o.limit), Offset: intFlag(cmd, "offset", o.offset)}
			if o.input == "" {
				p.ParentType, p.ParentID = args[0], args[1]
			}
			return runChangelog(cmd.Context(), app, o.input, p, typed(graph.ManageChangelogParams.AsSearch, graph.SearchChangelog))
		},
	}
	f := cmd.Flags()
	f.IntVar(&o.limit, "limit", graph.DefaultLimit, fmt.Sprintf("entries per page (1-%d)", graph.MaxLimit))
	f.IntVar(&o.offset, "offset", 0, "entries to skip")
	f.StringVar(&o.input, "input", "", "read the manage_changelog parameter object from a file, or - for standard input")
	return cmd
}

// runChangelog runs the manage_changelog operation fn with p, or with the
// object in input.
func runChangelog[R any](ctx context.Context, app *App, input string, p graph.ManageChangelogParams,
	fn func(context.Context, *store.KB, graph.ManageChangelogParams) (R, error)) error {
	resp, err := opCall(ctx, app, input, p.Operation, changelogOps, "manage-changelog", p, fn)
	if err != nil {
		return err
	}
	return printGraph(app, resp, printGraphData)
}
