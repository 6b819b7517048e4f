package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/txn"
)

func newGCCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:     "gc",
		Example: `  kk gc`,
		Short:   "Delete the search indexes of branches that no longer exist",
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
		return app.printJSON(map[string]any{"removed": res.Removed, "kept": res.Kept})
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
		Use: "compact",
		Example: `  kk compact
  kk compact --branch feature/login`,
		Short: "Shrink a branch's index file and rotate its audit log",
		Long: `Rebuild the index file of a branch without its free pages and truncate its
write-ahead log, then print its size before and after, in bytes. Then move
the branch's audit log (audit.jsonl, one record per applied changeset of
kk upsert / kk delete and their MCP tools) aside as
audit-<UTC time>.jsonl, so that the next changeset starts a new log; the
old log is kept. Syncs never do any of this on their own; run it when the
files have grown after many edits.

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
	res, err := txn.Compact(ctx, k, branch, app.Now())
	if err != nil {
		return err
	}
	before, after, rotated := res.Before, res.After, res.AuditRotatedTo
	if rotated != "" {
		rotated = k.Rel(rotated)
	}
	if app.JSON {
		return app.printJSON(map[string]any{"branch": branch, "bytes_before": before, "bytes_after": after,
			"audit_rotated_to": rotated})
	}
	fmt.Fprintf(app.IO.Out, "compacted index of branch %s: %d -> %d bytes\n", branch, before, after)
	if rotated != "" {
		fmt.Fprintf(app.IO.Out, "audit log moved to %s\n", rotated)
	}
	return nil
}
