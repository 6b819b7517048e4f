package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/trace"
)

type queryOpts struct {
	p                 trace.KBQueryParams
	rel, other        string
	incoming, missing bool
	limit, offset     int
	input             string
}

func newQueryCmd(app *App) *cobra.Command {
	var o queryOpts
	cmd := &cobra.Command{
		Use:   "query",
		Short: "Find traceability entities by type, id, tags, status or relationship",
		Long: `The command-line face of kb_query. It syncs the current branch's index
(see kk sync), then lists the entities matching every filter given, ordered
by id: leaves of the tree and the entities extractors read from documents
and the symbol manifest.

--rel TYPE keeps entities that have an outgoing edge of that type (--in:
an incoming one), to or from --other when given; --missing turns the
pattern around and keeps entities WITHOUT such an edge. So
  kk query --type req --rel verified_by --missing
lists the requirements no test verifies, and
  kk query --type symbol --rel implements --other REQ-7
the symbols implementing REQ-7.

Each entity prints as "id<TAB>type<TAB>status<TAB>title", its outgoing edges
indented below it, then "N of TOTAL". --input <file|-> takes the kb_query
parameter object instead of the flags; --json prints the result envelope.`,
		Example: `  kk query --type req --tag auth
  kk query --type req --rel verified_by --missing --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("query takes flags, not arguments (got %q)", args[0])
			}
			if o.input != "" {
				return refuseWithInput(app, cmd, "type", "id", "tag", "status", "rel", "in", "missing", "other", "limit", "offset")
			}
			if o.rel == "" && (o.incoming || o.missing || o.other != "") {
				return usagef("--in, --missing and --other qualify --rel; give --rel TYPE")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.p.Limit, o.p.Offset = intFlag(cmd, "limit", o.limit), intFlag(cmd, "offset", o.offset)
			if o.rel != "" {
				o.p.Relationship = &trace.KBRelationship{Type: o.rel, Direction: "out", Missing: o.missing, Other: o.other}
				if o.incoming {
					o.p.Relationship.Direction = "in"
				}
			}
			ctx := cmd.Context()
			resp, err := opCall(ctx, app, o.input, "", nil, "kb-query", o.p, trace.KBQuery)
			if err != nil {
				return err
			}
			return printGraph(app, resp, printQuery)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.p.Type, "type", "", "entity type: req, scenario, test, adr, flag, event, symbol, map, molecule, ...")
	f.StringVar(&o.p.ID, "id", "", "one entity's id (REQ-7 and req-7 are the same)")
	f.StringArrayVar(&o.p.Tags, "tag", nil, "keep entities carrying this tag (repeatable: all of them)")
	f.StringVar(&o.p.Status, "status", "", "draft, stable or deprecated")
	f.StringVar(&o.rel, "rel", "", "relationship pattern: an edge type (verified_by, implements, depends_on, ...)")
	f.BoolVar(&o.incoming, "in", false, "with --rel: the entity is the edge's target, not its source")
	f.BoolVar(&o.missing, "missing", false, "with --rel: keep entities WITHOUT such an edge")
	f.StringVar(&o.other, "other", "", "with --rel: the id at the edge's other end")
	f.IntVar(&o.limit, "limit", graph.DefaultLimit, "list at most N entities")
	f.IntVar(&o.offset, "offset", 0, "skip the first N entities")
	f.StringVar(&o.input, "input", "", "read the kb_query parameter object from a file, or - for standard input")
	return cmd
}

func printQuery(w io.Writer, data any) {
	r, ok := data.(*trace.QueryResult)
	if !ok {
		printData(w, data)
		return
	}
	for _, e := range r.Entities {
		status := e.Status
		if status == "" {
			status = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", e.ID, e.Type, status, e.Title)
		for _, ed := range e.Edges {
			fmt.Fprintf(w, "  %s -> %s\n", ed.Type, ed.To)
		}
	}
	fmt.Fprintf(w, "%d of %d (offset %d)\n", len(r.Entities), r.Total, r.Offset)
}
