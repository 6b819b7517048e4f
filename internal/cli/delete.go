package cli

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

type deleteOpts struct {
	versions          []string
	edges             []string
	by, source, input string
}

func newDeleteCmd(app *App) *cobra.Command {
	var o deleteOpts
	cmd := &cobra.Command{
		Use:   "delete [<id>...]",
		Short: "Delete traceability entities and edges as one changeset",
		Long: `The command-line face of kb_delete. Removes the entities <id>... (req,
scenario, test, adr, flag, event, symbol leaves) together with every edge
in the tree that points at them, and the edges given with --edge
TYPE:FROM:TO, all-or-nothing under the writer lock, and appends a record to
the branch's audit log. --expect-version ID=N makes the delete of ID fail with
CONFLICT unless it is at version N. --input <file|-> takes the whole
kb_delete parameter object instead.

Atoms and molecules are deleted with kk graph delete, notes (practice, map)
with kk node delete; entities extractors read from documents or the symbol
manifest are removed in those files.
Agents deleting through the MCP kb_delete tool must name each entity's
version and may not delete the types config keeps from them (req and adr
by default); this command is for people and has neither restriction.`,
		Example: `  kk delete test-login-e2e
  kk delete --edge verified_by:req-7:test-login-e2e --source "test removed in PR 51"`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole parameter object; drop the ids")
				}
				return refuseWithInput(app, cmd, "expect-version", "edge", "by", "source")
			}
			if len(args) == 0 && len(o.edges) == 0 {
				return usagef("delete needs the ids of entities, --edge, or --input")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p := trace.KBDeleteParams{CreatedBy: actor(o.by), Source: o.source}
			versions := map[string]int64{}
			for _, v := range o.versions {
				id, n, ok := strings.Cut(v, "=")
				var ver int64
				if _, err := fmt.Sscan(n, &ver); !ok || err != nil || ver < 1 {
					return usagef("%s %q: write ID=N with N a whole number of at least 1", app.flagName(cmd.Flags(), "expect-version"), v)
				}
				versions[id] = ver
			}
			for _, id := range args {
				ref := trace.KBEntityRef{ID: id}
				if v, ok := versions[id]; ok {
					ref.Version = &v
					delete(versions, id)
				}
				p.Entities = append(p.Entities, ref)
			}
			for id := range versions {
				return usagef("%s names %s, which is not among the ids to delete", app.flagName(cmd.Flags(), "expect-version"), id)
			}
			for _, spec := range o.edges {
				parts := strings.Split(spec, ":")
				if len(parts) != 3 {
					return usagef("--edge %q: write TYPE:FROM:TO", spec)
				}
				p.Edges = append(p.Edges, trace.KBEdgeRef{Type: parts[0], From: parts[1], To: parts[2]})
			}
			ctx := cmd.Context()
			resp, err := opCall(ctx, app, o.input, "", nil, "kb-delete", p,
				func(ctx context.Context, k *store.KB, p trace.KBDeleteParams) (*trace.DeleteEntitiesResult, error) {
					return trace.KBDelete(ctx, k, p, trace.DeleteOptions{})
				})
			if err != nil {
				return err
			}
			return printGraph(app, resp, printDelete)
		},
	}
	f := cmd.Flags()
	f.StringArrayVar(&o.versions, "expect-version", nil, "ID=N: delete ID only if it is at version N (repeatable)")
	f.StringArrayVar(&o.edges, "edge", nil, "edge TYPE:FROM:TO to delete (repeatable)")
	f.StringVar(&o.by, "by", "", "who applies the changeset (default: your user name)")
	f.StringVar(&o.source, "source", "cli", "why: a task, a review, a commit")
	f.StringVar(&o.input, "input", "", "read the kb_delete parameter object from a file, or - for standard input")
	return cmd
}

func printDelete(w io.Writer, data any) {
	r, ok := data.(*trace.DeleteEntitiesResult)
	if !ok {
		printData(w, data)
		return
	}
	fmt.Fprintf(w, "%s: %d deleted, %d edge(s) removed, %d leaf(s) updated\n", r.Changeset, len(r.Deleted), r.Edges, len(r.Updated))
	for i, id := range r.Deleted {
		fmt.Fprintf(w, "deleted\t%s\t%s\n", id, r.Paths[i])
	}
	for _, id := range r.Updated {
		fmt.Fprintf(w, "updated\t%s\n", id)
	}
}
