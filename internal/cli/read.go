package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/search"
)

type readOpts struct {
	path           string
	changelogLimit int
	noChangelog    bool
	input          string
}

func newReadCmd(app *App) *cobra.Command {
	var o readOpts
	cmd := &cobra.Command{
		Use:   "read [<id>]",
		Short: "Show one note by id with its edges and changelog (the kk_read tool)",
		Long: `The command-line face of the MCP tool kk_read: one node by id, or by its
file with --path (relative to nodes/ or to the repository), with its fields,
its body (without kk's generated Related and Citations blocks), its
outgoing edges and its newest changelog entries. --input <file|-> takes the
kk_read parameter object instead; --json prints the result envelope.
Unlike kk node show, which prints the file as it is, this reads the node
the way an agent does.`,
		Example: `  kk read map-http-errors
  kk read --path auth/session-tokens.md --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole parameter object; drop the id")
				}
				return refuseWithInput(app, cmd, "path", "changelog-limit", "no-changelog")
			}
			if (len(args) == 1) == (o.path != "") || len(args) > 1 {
				return usagef("read needs the id of a node, or --path, not both")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p := search.ReadParams{Path: o.path, ChangelogLimit: intFlag(cmd, "changelog-limit", o.changelogLimit)}
			if len(args) == 1 {
				p.ID = args[0]
			}
			if o.noChangelog {
				no := false
				p.IncludeChangelog = &no
			}
			ctx := cmd.Context()
			resp, err := opCall(ctx, app, o.input, "", nil, "kk-read", p, search.ReadNode)
			if err != nil {
				return err
			}
			return printGraph(app, resp, printNodeView)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.path, "path", "", "the leaf file instead of an id")
	f.IntVar(&o.changelogLimit, "changelog-limit", graph.DefaultChangelogLimit, "newest changelog entries to show")
	f.BoolVar(&o.noChangelog, "no-changelog", false, "leave the changelog out")
	f.StringVar(&o.input, "input", "", "read the kk_read parameter object from a file, or - for standard input")
	return cmd
}

func printNodeView(w io.Writer, data any) {
	v, ok := data.(*search.NodeView)
	if !ok {
		printData(w, data)
		return
	}
	fmt.Fprintf(w, "%s %s v%d: %s\n", v.Type, v.ID, v.Version, v.Title)
	fmt.Fprintf(w, "  path: %s\n", v.Path)
	for _, kv := range [][2]string{{"description", v.Description}, {"tags", strings.Join(v.Tags, " ")}, {"status", v.Status},
		{"priority", v.Priority}, {"severity", v.Severity}, {"owner", v.Owner}, {"paths", strings.Join(v.Paths, " ")}, {"molecule", v.MoleculeID}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "  %s: %s\n", kv[0], kv[1])
		}
	}
	for _, e := range v.Edges {
		fmt.Fprintf(w, "  %s -> %s\n", e.Type, e.To)
	}
	if v.Body != "" {
		fmt.Fprintf(w, "\n%s\n", v.Body)
	}
	printChangelog(w, v.Changelog)
}
