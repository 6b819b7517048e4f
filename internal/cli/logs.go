package cli

import (
	"context"
	"fmt"

	"github.com/kk-project/kk/internal/session"
	"github.com/spf13/cobra"
)

func newLogsCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "logs",
		Short: "Maintain the run logs under .ai/kenkeep/_logs",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newLogsPruneCmd(app))
	return cmd
}

type logsPruneOpts struct {
	dryRun bool
}

func newLogsPruneCmd(app *App) *cobra.Command {
	var o logsPruneOpts
	cmd := &cobra.Command{
		Use: "prune",
		Example: `  kk logs prune --dry-run
  kk logs prune`,
		Short: "Delete run logs older than logsRetentionDays",
		Long: `Delete the run traces (.ai/kenkeep/_logs/**/*.jsonl) last modified more
than logsRetentionDays ago (config.yaml, default 30). Hook error logs
(hook-errors-*.log), curator drafts (*.draft.json) and anything that is not
a regular file are never deleted.

Prints one "removed\t<path>" line per file (with --dry-run, "would
remove\t<path>", and nothing is deleted). Running it again removes nothing
more. Exits 1 when config.yaml is invalid or a file could not be deleted;
the other files are still pruned.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLogsPrune(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVar(&o.dryRun, "dry-run", false, "list what would be deleted and delete nothing")
	return cmd
}

func runLogsPrune(_ context.Context, app *App, o logsPruneOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	k.Now = app.Now
	rep, err := session.PruneLogs(k, session.PruneOptions{DryRun: o.dryRun})
	if err != nil {
		return err
	}
	if app.JSON {
		if err := app.printJSON(rep); err != nil {
			return err
		}
	} else {
		verb := "removed"
		if o.dryRun {
			verb = "would remove"
		}
		for _, p := range rep.Removed {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", verb, p)
		}
		for _, f := range rep.Failed {
			fmt.Fprintf(app.IO.Err, "kk: could not remove %s: %s\n", f.Path, f.Error)
		}
		switch {
		case len(rep.Removed) == 0 && len(rep.Failed) == 0:
			app.notef("nothing to prune: no run log is older than %d day(s) (%d kept)", rep.RetentionDays, rep.Kept)
		case o.dryRun:
			app.notef("would prune %d file(s) older than %d day(s); %d kept", len(rep.Removed), rep.RetentionDays, rep.Kept)
		default:
			app.notef("pruned %d file(s) older than %d day(s); %d kept", len(rep.Removed), rep.RetentionDays, rep.Kept)
		}
	}
	if len(rep.Failed) > 0 {
		if app.JSON {
			return &SilentError{Code: ExitFailure}
		}
		return fmt.Errorf("could not remove %d of %d old log file(s)", len(rep.Failed), len(rep.Failed)+len(rep.Removed))
	}
	return nil
}
