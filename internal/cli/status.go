package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/checks"
	"github.com/spf13/cobra"
)

type statusOpts struct{}

func newStatusCmd(app *App) *cobra.Command {
	var o statusOpts
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Show what the knowledge base holds and what waits for work",
		Long: `Show the installed version, the leaves by type, the folders, whether the
generated index matches the leaves, the session logs waiting for proposal
extraction, the curator conflicts waiting for a human, and the folders
without a summary. Status reads only.

Exits 1 when the knowledge base was never initialized.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runStatus(cmd.Context(), app, o)
		},
	}
	return cmd
}

func runStatus(ctx context.Context, app *App, _ statusOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	st, err := checks.Status(ctx, k)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(st)
	}
	w := app.IO.Out
	fmt.Fprintf(w, "knowledge base: %s\n", k.Dir)
	fmt.Fprintf(w, "installed: %s (%s)\n", st.Version, st.InstalledAt)
	if st.InvalidLeaves > 0 {
		fmt.Fprintf(w, "leaves: %d problem(s) with invalid leaves; run `kk lint` for details\n", st.InvalidLeaves)
	} else {
		types := make([]string, 0, len(st.NodesByType))
		for t := range st.NodesByType {
			types = append(types, t)
		}
		slices.Sort(types)
		parts := make([]string, len(types))
		for i, t := range types {
			parts[i] = fmt.Sprintf("%s %d", t, st.NodesByType[t])
		}
		line := fmt.Sprintf("nodes: %d", st.Nodes)
		if len(parts) > 0 {
			line += " (" + strings.Join(parts, ", ") + ")"
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "folders: %d\n", st.Folders)
	}
	index := st.IndexState
	switch st.IndexState {
	case "stale", "missing":
		index += "; run `kk index rebuild`"
	case "unknown":
		index += " while leaves are invalid"
	}
	fmt.Fprintf(w, "index: %s\n", index)
	fmt.Fprintf(w, "session logs: %d pending extraction, %d other\n", st.Sessions.Pending, st.Sessions.Other)
	fmt.Fprintf(w, "conflicts: %d pending of %d\n", st.Conflicts.Pending, st.Conflicts.Total)
	if n := len(st.MissingSummaries); n > 0 {
		fmt.Fprintf(w, "folders without summary: %d (%s)\n", n, strings.Join(st.MissingSummaries, ", "))
	} else if st.InvalidLeaves == 0 {
		fmt.Fprintln(w, "folders without summary: 0")
	}
	return nil
}
