package cli

import (
	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/graph"
)

type contextOpts struct {
	paths          []string
	taskFile       string
	changelogLimit int
	input          string
}

func newContextCmd(app *App) *cobra.Command {
	var o contextOpts
	cmd := &cobra.Command{
		Use:   "context <path>...",
		Short: "Show the atoms whose path patterns match the given files",
		Long: `Match repository file paths against every atom's path patterns (the
query_graph "context" operation) and print the matching atoms grouped by
molecule, the matching atoms of no molecule, and the paths no atom covers.

--task-file adds the paths listed under the "Context Files" heading of a
task markdown file. Paths are relative to the repository root (absolute
paths inside it are accepted). --input <file|-> takes a query_graph
parameter object with operation "context" instead. Prints the envelope with
--json.`,
		Example: `  kk context internal/http/client.go internal/http/retry.go
  kk context --task-file tasks/T-12.md --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole query; drop the path arguments")
				}
				return refuseWithInput(app, cmd, "task-file", "changelog-limit")
			}
			if len(args) == 0 && o.taskFile == "" {
				return usagef("context needs at least one file path (or --task-file)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.paths = args
			p := graph.QueryGraphParams{Operation: "context", Paths: graph.PathList(o.paths), TaskFile: o.taskFile,
				ChangelogLimit: intFlag(cmd, "changelog-limit", o.changelogLimit)}
			return runGraphQuery(cmd.Context(), app, o.input, p, typed(graph.QueryGraphParams.AsContext, graph.Context))
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.taskFile, "task-file", "", "task markdown file whose \"Context Files\" section lists more paths")
	f.IntVar(&o.changelogLimit, "changelog-limit", graph.DefaultChangelogLimit, "newest changelog entries to include per atom and molecule")
	f.StringVar(&o.input, "input", "", "read the query_graph parameter object from a file, or - for standard input")
	return cmd
}
