package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/usage"
)

type usageOpts struct {
	limit int
}

func newUsageCmd(app *App) *cobra.Command {
	var o usageOpts
	cmd := &cobra.Command{
		Use: "usage",
		Example: `  kk usage
  kk usage --limit 10 --json`,
		Short: "Summarise which nodes agent sessions read, and which they never read",
		Long: `Summarise the usage ledger (.ai/kenkeep/.state/usage.jsonl, one line per
read of a node or index by an agent session): the most and the least read
nodes, the live nodes never read, index reads, and reads of documents that
are no live node (deleted or renamed since). Reads are matched to nodes by
id, or by path for documents recorded as paths under nodes/.

--limit cuts every list to N items (default 10; 0 lists everything).
Ledger lines that cannot be used are skipped with a warning. Usage reads
only.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.limit < 0 {
				return usagef("--limit must be 0 (no limit) or more, not %d", o.limit)
			}
			return runUsage(cmd.Context(), app, o)
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", 10, "list at most N items per list (0: all)")
	return cmd
}

func runUsage(_ context.Context, app *App, o usageOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	s, err := usage.Load(k, o.limit)
	if err != nil {
		return err
	}
	for i, b := range s.BadLines {
		if i == 5 {
			app.warnf("%s: %d more unusable line(s)", k.Rel(usage.Path(k)), len(s.BadLines)-i)
			break
		}
		app.warnf("%s: line %d skipped: %s", k.Rel(usage.Path(k)), b.Line, b.Msg)
	}
	if app.JSON {
		return app.printJSON(s)
	}
	w := app.IO.Out
	fmt.Fprintf(w, "reads: %d in %d session(s); %d of %d live node(s) read\n", s.Reads, s.Sessions, s.ReadNodes, s.LiveNodes)
	nodes := func(title string, list []usage.NodeReads) {
		if len(list) == 0 {
			return
		}
		fmt.Fprintf(w, "%s:\n", title)
		for _, n := range list {
			fmt.Fprintf(w, "  %d\t%s\t%s\n", n.Reads, n.ID, n.Path)
		}
	}
	nodes("most read", s.MostRead)
	nodes("least read", s.LeastRead)
	if len(s.NeverRead) > 0 {
		fmt.Fprintf(w, "never read (%d):\n", s.NeverReadCount)
		for _, n := range s.NeverRead {
			fmt.Fprintf(w, "  %s\t%s\n", n.ID, n.Path)
		}
		if more := s.NeverReadCount - len(s.NeverRead); more > 0 {
			fmt.Fprintf(w, "  ... %d more; --limit 0 lists them all\n", more)
		}
	}
	printDocumentReads(w, "indexes", s.Indexes)
	printDocumentReads(w, "not a live node", s.Unresolved)
	return nil
}

func printDocumentReads(w io.Writer, title string, list []usage.DocumentReads) {
	if len(list) == 0 {
		return
	}
	fmt.Fprintf(w, "%s:\n", title)
	for _, d := range list {
		fmt.Fprintf(w, "  %d\t%s\n", d.Reads, d.Document)
	}
}
