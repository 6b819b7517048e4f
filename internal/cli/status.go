package cli

import (
	"context"
	"fmt"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"io"
	"maps"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/checks"
	"github.com/spf13/cobra"
)

type statusOpts struct{}

func newStatusCmd(app *App) *cobra.Command {
	var o statusOpts
	cmd := &cobra.Command{
		Use: "status",
		Example: `  kk status
  kk status --json`,
		Short: "Show what the knowledge base holds and what waits for work",
		Long: `Show the installed version, the leaves by type, the folders, whether the
generated index files match the leaves and the folder summaries (as kk
index rebuild --check compares them), the session logs waiting for proposal
extraction and the others by proposal_status, the curation queue, the
curator conflicts waiting for a human, and the folders
without a summary; then, from the current branch's index, the entities by
type (leaves and the entities read from documents and symbol manifests),
the atoms without a molecule, the requirements no test verifies (no
verified_by edge to a test, whatever their priority), and kk check's
violations by rule. Status reads only. --json lists every id the text
shortens.

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
	installed := st.Version
	if installed == "" {
		installed = "a development build"
	}
	fmt.Fprintf(w, "installed: %s (%s)\n", installed, st.InstalledAt)
	{
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
		line = "phrasings: " + st.Phrasings.Summary()
		if st.Phrasings.Low() {
			line += "; " + index.BackfillHint
		}
		fmt.Fprintln(w, line)
	}
	if st.InvalidLeaves > 0 {
		fmt.Fprintf(w, "leaves kk cannot read: %d (skipped); run `kk lint` for details\n", st.InvalidLeaves)
	}
	index := st.IndexState
	switch st.IndexState {
	case "stale", "missing":
		index += "; run `kk index rebuild`"
	case "unknown":
		index += " while leaves are invalid"
	}
	fmt.Fprintf(w, "index: %s\n", index)
	fmt.Fprintf(w, "session logs: %d pending extraction, %d other", st.Sessions.Pending, st.Sessions.Other)
	if st.Sessions.Other > 0 {
		// The other logs by proposal_status (done, failed, skipped, ...),
		// as kenkeep's status counted them.
		var parts []string
		for _, s := range slices.Sorted(maps.Keys(st.Sessions.ByStatus)) {
			if s != "pending" && st.Sessions.ByStatus[s] > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, st.Sessions.ByStatus[s]))
			}
		}
		if len(parts) > 0 {
			fmt.Fprintf(w, " (%s)", strings.Join(parts, ", "))
		}
	}
	fmt.Fprintln(w)
	fmt.Fprintf(w, "curation queue: %d log(s) with %d candidate(s)", st.Sessions.Curation, st.Sessions.Candidates)
	if st.Sessions.Curation > 0 {
		fmt.Fprint(w, "; run /kk-curate in your agent (or `kk curate`)")
	}
	fmt.Fprintln(w)
	if f := st.Freshness; f.Available {
		line := fmt.Sprintf("nodes describing changed code: %d of %d", f.Flagged, f.Nodes)
		if f.Flagged > 0 {
			line += "; `kk freshness` lists them"
		}
		if f.Shallow {
			line += " (a shallow clone: nodes changed before its commits are not checked)"
		}
		fmt.Fprintln(w, line)
	} else {
		fmt.Fprintf(w, "nodes describing changed code: n/a (%s)\n", f.Reason)
	}
	fmt.Fprintf(w, "conflicts: %d pending of %d\n", st.Conflicts.Pending, st.Conflicts.Total)
	if n := len(st.MissingSummaries); n > 0 {
		fmt.Fprintf(w, "folders without summary: %d (%s)\n", n, listSome(st.MissingSummaries))
	} else {
		fmt.Fprintln(w, "folders without summary: 0")
	}
	printGraphCounts(w, st.Graph)
	return nil
}

// printGraphCounts prints the index's part of the status.
func printGraphCounts(w io.Writer, g checks.GraphCounts) {
	fmt.Fprintf(w, "entities: %s\n", countsLine(g.Entities, g.EntitiesByType))
	fmt.Fprintf(w, "atoms without a molecule: %s\n", idsLine(g.AtomsWithoutMolecule, g.Atoms))
	fmt.Fprintf(w, "requirements without a verifying test: %s\n", idsLine(g.RequirementsWithoutCoverage, g.Requirements))
	line := fmt.Sprintf("check violations: %s", countsLine(g.ViolationCount, g.Violations))
	if g.ViolationCount > 0 {
		line += "; run `kk check`"
	}
	fmt.Fprintln(w, line)
}

// countsLine is "total (name n, …)" with the names sorted and the zero
// counts left out.
func countsLine(total int, by map[string]int) string {
	names := make([]string, 0, len(by))
	for name, n := range by {
		if n > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	parts := make([]string, len(names))
	for i, name := range names {
		parts[i] = fmt.Sprintf("%s %d", name, by[name])
	}
	if len(parts) == 0 {
		return fmt.Sprint(total)
	}
	return fmt.Sprintf("%d (%s)", total, strings.Join(parts, ", "))
}

// maxStatusIDs is how many ids a status line names before it says how
// many more there are (--json lists them all).
const maxStatusIDs = 10

// idsLine is "n of total (id, …)", naming at most maxStatusIDs ids.
func idsLine(ids []string, total int) string {
	if len(ids) == 0 {
		return fmt.Sprintf("0 of %d", total)
	}
	shown := ids[:min(len(ids), maxStatusIDs)]
	more := ""
	if len(ids) > len(shown) {
		more = fmt.Sprintf(" and %d more", len(ids)-len(shown))
	}
	return fmt.Sprintf("%d of %d (%s%s)", len(ids), total, strings.Join(shown, ", "), more)
}

// phrasingsHint tells, on standard error, that many leaves of k have no
// phrasings and how to write them (after an import, which brings leaves
// written without an agent at hand).
func (app *App) phrasingsHint(ctx context.Context, k *store.KB) {
	p, err := checks.TreePhrasings(ctx, k)
	if err == nil && p.Low() {
		app.notef("%s: questions in other words than a note's own may miss them; %s", p.Summary(), index.BackfillHint)
	}
}
