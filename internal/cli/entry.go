package cli

import (
	"io"

	"github.com/kk-project/kk/internal/search"
	"github.com/spf13/cobra"
)

func newEntryCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use: "entry",
		Example: `  kk entry
  kk entry --json`,
		Short: "Print ENTRY.md, the page an agent session reads first",
		Long: `The command-line face of the MCP tool kk_entry: print the knowledge base's
ENTRY.md (the root summary and the top-level folders) as it is. --json
prints the result envelope {"success":true,"data":{"path","content"}}.
A knowledge base whose index was never built has none (NOT_FOUND: run
kk index rebuild).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			resp, err := opCall(ctx, app, "", "", nil, "kk-entry", search.EntryParams{}, search.ReadEntry)
			if err != nil {
				return err
			}
			return printGraph(app, resp, func(w io.Writer, data any) {
				if d, ok := data.(*search.EntryData); ok {
					_, _ = io.WriteString(w, d.Content)
				}
			})
		},
	}
}
