package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
)

func newGCCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "gc",
		Short: "Delete the search indexes of branches that no longer exist",
		Long: `Delete the search index (.ai/kenkeep/.state/branches/<branch>/) of every
branch that no longer exists in the local repository. The index of the
current branch (even one without commits yet, or a detached HEAD) and of the
default branch are always kept; folders kk did not name are left alone.

Each index folder prints as "removed<TAB>branch" or "kept<TAB>branch".`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runGC(cmd.Context(), app)
		},
	}
}

func runGC(ctx context.Context, app *App) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	res, err := index.GC(ctx, k)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"schema_version": JSONSchemaVersion, "removed": res.Removed, "kept": res.Kept})
	}
	for _, b := range res.Removed {
		fmt.Fprintf(app.IO.Out, "removed\t%s\n", b)
	}
	for _, b := range res.Kept {
		fmt.Fprintf(app.IO.Out, "kept\t%s\n", b)
	}
	return nil
}

type compactOpts struct {
	branch string
}

func newCompactCmd(app *App) *cobra.Command {
	var o compactOpts
	cmd := &cobra.Command{
		Use:   "compact",
		Short: "Shrink a branch's search index file",
		Long: `Rebuild the search index file of a branch without its free pages and
truncate its write-ahead log, then print its size before and after, in
bytes. Syncs never do this on their own; run it when the file has grown
after many edits or deletions.

The branch is the checked out one unless --branch names another; a branch
without an index is an error (run kk sync first).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBranchFlag(cmd, o.branch); err != nil {
				return err
			}
			return runCompact(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.branch, "branch", "", "compact this branch's index (default: the current branch)")
	return cmd
}

func runCompact(ctx context.Context, app *App, o compactOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	branch, err := indexBranch(ctx, k, o.branch)
	if err != nil {
		return err
	}
	before, after, err := index.Compact(ctx, k, branch)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"schema_version": JSONSchemaVersion, "branch": branch, "bytes_before": before, "bytes_after": after})
	}
	fmt.Fprintf(app.IO.Out, "compacted index of branch %s: %d -> %d bytes\n", branch, before, after)
	return nil
}
