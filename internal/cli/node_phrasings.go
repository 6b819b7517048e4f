package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
)

type nodePhrasingsOpts struct {
	input string
	limit int
}

// phrasingsInput is the document `kk node phrasings --input` takes.
type phrasingsInput struct {
	Phrasings map[string][]string `json:"phrasings"`
}

func newNodePhrasingsCmd(app *App) *cobra.Command {
	var o nodePhrasingsOpts
	cmd := &cobra.Command{
		Use:   "phrasings",
		Short: "List the leaves without phrasings, or give leaves their phrasings",
		Long: `Without --input, list (from the branch index, synced first) the leaves
that have no kk_phrasings yet, at most --limit of them, as
"id<TAB>path<TAB>title" (path relative to nodes/), then the number left on
standard error. With --json: {"total", "leaves":[{id,path,title}]}.

With --input <file|->, give leaves their phrasings: the document is
{"phrasings": {"<id>": ["<phrasing>", …], …}}. Each phrasing is how a
developer would ask for the leaf in their own words (a question or a
symptom, one line); the list replaces the leaf's kk_phrasings, an empty
list removes them. Every id must name a leaf; nothing is written when one
does not. The leaves are written under the writer lock and the index
files regenerated once. Prints the ids written; --json prints
{"updated", "unchanged", "index_changed"}.

The kk-phrasings skill (kk phrasings runs it) backfills a tree in batches
with these two forms.`,
		Example: `  kk node phrasings --limit 20
  kk node phrasings --input batch.json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.input != "" && cmd.Flags().Changed("limit") {
				return usagef("--limit lists leaves; it cannot be combined with --input")
			}
			if o.limit < 1 {
				return usagef("--limit must be 1 or more, not %d", o.limit)
			}
			return runNodePhrasings(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.input, "input", "", "give leaves their phrasings from this JSON file, or - for standard input")
	cmd.Flags().IntVar(&o.limit, "limit", 20, "list at most N leaves")
	return cmd
}

func runNodePhrasings(ctx context.Context, app *App, o nodePhrasingsOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	if o.input == "" {
		branch, err := index.CurrentBranch(ctx, k)
		if err != nil {
			return err
		}
		db, _, err := index.Open(ctx, k, branch)
		if err != nil {
			return err
		}
		defer func() { _ = db.Close() }()
		leaves, total, err := db.Unphrased(ctx, o.limit)
		if err != nil {
			return err
		}
		if app.JSON {
			return app.printJSON(map[string]any{"total": total, "leaves": leaves})
		}
		for _, l := range leaves {
			fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\n", l.ID, l.Path, l.Title)
		}
		fmt.Fprintf(app.IO.Err, "kk: %d leaf(s) without phrasings\n", total)
		return nil
	}
	data, name, err := app.readInput(o.input)
	if err != nil {
		return err
	}
	var in phrasingsInput
	if err := op.DecodeStrict(data, &in); err != nil {
		return fmt.Errorf("%s: invalid phrasings JSON: %s; expected {\"phrasings\": {\"<id>\": [\"…\"]}}", name, op.ErrorOf(err).Message)
	}
	if len(in.Phrasings) == 0 {
		return usagef("%s: no phrasings to write", name)
	}
	k.Now = app.Now
	res, err := curate.SetPhrasings(ctx, k, in.Phrasings, app.Command)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{"updated": res.Updated, "unchanged": res.Unchanged, "index_changed": res.Index})
	}
	for _, id := range res.Updated {
		fmt.Fprintln(app.IO.Out, id)
	}
	return nil
}
