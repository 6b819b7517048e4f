package cli

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/freshness"
	"github.com/kk-project/kk/internal/store"
)

type freshnessOpts struct {
	maxCommits int
	verbose    bool
}

func newFreshnessCmd(app *App) *cobra.Command {
	var o freshnessOpts
	cmd := &cobra.Command{
		Use: "freshness",
		Example: `  kk freshness
  kk freshness --max-commits 500 --json`,
		Short: "List the nodes whose source files changed after the node",
		Long: `List the nodes that describe repository files which changed after the
node itself last changed, so they may be out of date.

A node's sources are its kk_derived_from entries and, in its body, the
targets of markdown links and the inline code spans that name a
repository path (with a folder part, like src/http/retry.go). Paths are
taken relative to the repository root and to the node's folder; URLs,
files under .ai/kenkeep/ and untracked files are left out. A node is
flagged when a commit newer than the node file's last commit changed one
of its sources; a commit that only moved the node file (git mv of it or of
its folder, git's exact rename) does not count as a change of it, since
nobody read it against its sources then. Nodes never committed are not
considered.

The whole history is read in one git log pass (--max-commits limits it to
the newest N commits). The check fails open: without git, outside a work
tree, before the first commit, or with an unreadable tree it reports
"not available" and still exits 0; in a repository git refuses to work
in (a clone owned by another user: "detected dubious ownership") the
reason says so and gives git's fix (git config --global --add
safe.directory <folder>). It exits 0 whatever it finds.

Stdout gets the count, one line per flagged node (id, folder, changed
paths, tab-separated; the first 10, then how many more on stderr;
--verbose lists them all, and --json always does), and the count per
top-level folder.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.maxCommits < 0 {
				return usagef("--max-commits must be 0 (all history) or more, not %d", o.maxCommits)
			}
			return runFreshness(cmd.Context(), app, o)
		},
	}
	cmd.Flags().IntVar(&o.maxCommits, "max-commits", 0, "read only the newest N commits (0: all history)")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every flagged node, not only the first 10")
	return cmd
}

func runFreshness(ctx context.Context, app *App, o freshnessOpts) error {
	var rep *freshness.Report
	k, err := app.KB()
	switch {
	case errors.Is(err, store.ErrNotFound):
		rep = &freshness.Report{Reason: err.Error(), Flagged: []freshness.Flagged{}, PerBranch: []freshness.BranchCount{}}
	case err != nil:
		return err
	default:
		rep = freshness.CheckAndRecord(ctx, k, freshness.Options{MaxCommits: o.maxCommits}, app.Now())
		if !rep.Available {
			// freshness says "not inside a git work tree" where git
			// refuses a repository that is there (another user's clone):
			// say so, with git's fix, as kk status and kk doctor do.
			if g := checks.RefusedByGit(ctx, k.Root); g != nil {
				rep.Reason = g.String()
			}
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(rep)
	}
	w := app.IO.Out
	if !rep.Available {
		fmt.Fprintf(w, "freshness: not available: %s\n", rep.Reason)
		return nil
	}
	fmt.Fprintf(w, "freshness: %d of %d committed node(s) have sources changed after them (%d commit(s) read)\n",
		rep.FlaggedCount, rep.ConsideredNodes, rep.Commits)
	if rep.Shallow {
		app.warnf("this clone is shallow: only the %d commit(s) it holds were compared, so a node last changed before them is not checked; %s reads the whole history", rep.Commits, freshness.ShallowFix)
	}
	shown := rep.Flagged
	if !o.verbose && len(shown) > lintItemLines {
		shown = shown[:lintItemLines]
	}
	for _, f := range shown {
		fmt.Fprintf(w, "%s\t%s\t%s\n", f.ID, f.Branch, strings.Join(f.ChangedPaths, ", "))
	}
	if more := len(rep.Flagged) - len(shown); more > 0 {
		app.notef("%d more flagged node(s); --verbose lists them all", more)
	}
	for _, b := range rep.PerBranch {
		fmt.Fprintf(w, "branch %s\t%d\n", b.Branch, b.Flagged)
	}
	return nil
}
