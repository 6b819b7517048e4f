package cli

import (
	"errors"
	"io"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/picture"
)

type graphExportOpts struct {
	o picture.Options
}

func newGraphExportCmd(app *App) *cobra.Command {
	var o graphExportOpts
	cmd := &cobra.Command{
		Use:   "export",
		Short: "Draw the graph as Mermaid, Graphviz dot or JSON",
		Long: `Draw the current branch's graph, read from its index:

  --view edges      the traceability entities (req, scenario, test, adr,
                    flag, event, symbol) and the typed edges touching one
                    of them, with the entities at their other ends
                    (the default; a knowledge base without any such
                    entity, only practice and map notes, gets the leaves
                    view instead, and a note on stderr says so);
  --view molecules  the atoms grouped under their molecules (Mermaid
                    subgraphs, dot clusters) and their kk_related links;
  --view leaves     every leaf with its relates_to and depends_on edges.

An edge to an entity that does not exist is left out (kk check reports it).
--type keeps the nodes of the listed entity types; --around ID then keeps
the nodes within --depth edges of ID (default 1), following edges in either
direction. Ids are compared without regard to case and printed as stored.

--format mermaid (the default) prints a flowchart to paste into a mermaid
code block of a README; --format dot prints a digraph for Graphviz
(kk graph export --format dot | dot -Tsvg > graph.svg); --format json, like
--json, prints {"nodes":[{id,type,title}],"edges":[{type,from,to}]}, with
member_of edges joining atoms to molecules in the molecules view. The
output is sorted and its node identifiers come from the ids, so the same
graph always gives the same bytes.`,
		Example: `  kk graph export > graph.mmd
  kk graph export --format dot | dot -Tsvg > graph.svg
  kk graph export --view molecules
  kk graph export --around REQ-1 --depth 2 --type req,scenario,test --format json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 0 {
				return usagef("graph export takes no arguments; give the entity to start from with --around")
			}
			if cmd.Flags().Changed("depth") && o.o.Around == "" {
				return usagef("--depth counts edges from --around; give --around <id> too")
			}
			if app.JSON && cmd.Flags().Changed("format") && o.o.Format != picture.FormatJSON {
				return usagef("--json prints JSON; drop it or --format %s", o.o.Format)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if app.JSON {
				o.o.Format = picture.FormatJSON
			}
			k, err := app.KB()
			if err != nil {
				return err
			}
			o.o.Fallback = !cmd.Flags().Changed("view")
			p, err := picture.Export(cmd.Context(), k, o.o)
			if fe, ok := errors.AsType[*picture.FlagError](err); ok {
				return usagef("%s", fe)
			}
			if err != nil {
				return err
			}
			switch {
			case p.View != o.o.View:
				app.notef("no traceability entity (req, scenario, test, adr, flag, event, symbol) to draw; drawing every note and its links instead (--view leaves)")
			case len(p.Nodes) == 0 && o.o.View == picture.ViewEdges && o.o.Around == "" && len(o.o.Types) == 0:
				app.notef("the edges view is empty: no traceability entity; --view leaves draws every note and its links")
			case len(p.Nodes) == 0 && o.o.View == picture.ViewMolecules && o.o.Around == "" && len(o.o.Types) == 0:
				app.notef("the molecules view is empty: no atom or molecule; --view leaves draws every note and its links")
			case len(p.Nodes) == 0 && o.o.View == picture.ViewLeaves:
				app.notef("the knowledge base holds no notes yet; kk node write adds one")
			}
			if o.o.Format == picture.FormatJSON {
				return app.printJSON(p)
			}
			_, err = io.WriteString(app.IO.Out, p.Text)
			return err
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.o.Format, "format", picture.FormatMermaid, "mermaid, dot or json")
	f.StringVar(&o.o.View, "view", picture.ViewEdges, "edges, molecules or leaves")
	f.StringSliceVar(&o.o.Types, "type", nil, "keep the nodes of these entity types (repeatable, or comma-separated: req,test)")
	f.StringVar(&o.o.Around, "around", "", "keep the nodes near this id (see --depth)")
	f.IntVar(&o.o.Depth, "depth", 1, "with --around: how many edges away a node may be")
	return cmd
}
