package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
)

type searchOpts struct {
	text   string
	limit  int
	branch string
}

func newSearchCmd(app *App) *cobra.Command {
	var o searchOpts
	cmd := &cobra.Command{
		Use:   "search <text>...",
		Short: "Rank the nodes matching some words",
		Long: `Sync the branch's search index (see kk sync), then list the nodes that
best match the words of <text>, best first.

Words are matched after stemming (retrying finds retry); punctuation and
search operators are plain text. Nodes holding every word come first, then,
when they are fewer than --limit, nodes holding some of them. A match in the
title weighs most, then tags, description and body; a node linked to other
top hits (relates_to, depends_on, related) is raised a little.

Each hit prints as "score<TAB>id<TAB>path<TAB>title", path relative to
nodes/, followed by an indented snippet of its best matching text with the
matched words in [brackets]. Nothing found prints nothing and exits 0.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("search needs the text to look for")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBranchFlag(cmd, o.branch); err != nil {
				return err
			}
			if o.limit <= 0 {
				return usagef("--limit must be 1 or more, not %d", o.limit)
			}
			o.text = strings.Join(args, " ")
			if index.Query(o.text, "OR") == "" {
				return usagef("search text %q holds no word to look for", o.text)
			}
			return runSearch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", 10, "list at most N hits")
	cmd.Flags().StringVar(&o.branch, "branch", "", "search this branch's index (default: the current branch)")
	return cmd
}

func runSearch(ctx context.Context, app *App, o searchOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	branch, err := indexBranch(ctx, k, o.branch)
	if err != nil {
		return err
	}
	db, st, err := index.Open(ctx, k, branch)
	if err != nil {
		return err
	}
	for _, p := range st.Skipped {
		app.warnf("left out of the index: %s: %s", p.Path, p.Msg)
	}
	hits, err := index.Search(ctx, db, o.text, o.limit)
	if err := errors.Join(err, db.Close()); err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(map[string]any{
			"schema_version": JSONSchemaVersion,
			"branch":         branch,
			"query":          o.text,
			"hits":           hits,
		})
	}
	for _, h := range hits {
		fmt.Fprintf(app.IO.Out, "%s\t%s\t%s\t%s\n", strconv.FormatFloat(h.Score, 'g', 4, 64), h.ID, h.Path, h.Title)
		if h.Snippet != "" {
			fmt.Fprintf(app.IO.Out, "    %s\n", h.Snippet)
		}
	}
	return nil
}
