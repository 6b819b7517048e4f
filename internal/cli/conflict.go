package cli

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
)

func newConflictCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "conflict",
		Short: "Review the contradictions curate-dedup filed",
		Long: `curate-dedup writes each contradiction between a candidate and an existing
node to .ai/kenkeep/conflicts/<run-id>-<n>.md with status: pending, for a
human to decide. 'kk conflict prepare' lays them out for the kk-curate
skill's review.`,
	}
	cmd.AddCommand(newConflictPrepareCmd(app))
	return cmd
}

// conflictPrepareOpts has no flags of its own.
type conflictPrepareOpts struct{}

func newConflictPrepareCmd(app *App) *cobra.Command {
	var o conflictPrepareOpts
	return &cobra.Command{
		Use: "prepare",
		Example: `  kk conflict prepare
  kk conflict prepare --json`,
		Short: "List the pending conflicts in review order with a default reply",
		Long: `Read the pending conflict files (status: pending) and print them in review
order: by target node id (conflicts without a target last), then proposed
kind, then detection time. Consecutive conflicts about the same node (its
id in any case) share a group_id, and the existing node is included with
the first of the group. Two conflict files with one id are an error naming
both.

Each conflict gets a default reply from a line diff of the proposed body
against the existing node's body (without its generated sections): "s"
(skip) when the target node does not exist; "y" (accept) when fewer than 5
lines change and the proposal has high confidence; "n" (reject) when more
than half of the lines change; "s" otherwise.

Prints {"schema_version", "count", "conflicts": [{"id", "status",
"detected_at", "run_id", "candidate_origin", "target_node_id",
"proposed_kind", "proposed_title", "proposed_confidence", "rationale",
"proposed_body", "file", "group_id", "first_in_group", "existing",
"lines_changed", "total_lines", "ratio", "default"}]}. Writes nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConflictPrepare(cmd.Context(), app, o)
		},
	}
}

func runConflictPrepare(_ context.Context, app *App, _ conflictPrepareOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	conflicts, err := curate.Prepare(k, "")
	if err != nil {
		return err
	}
	if conflicts == nil {
		conflicts = []curate.PreparedConflict{}
	}
	return app.printJSON(map[string]any{"count": len(conflicts), "conflicts": conflicts})
}
