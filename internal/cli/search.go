package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
)

type searchOpts struct {
	text   string
	limit  int
	branch string
	input  string
}

func newSearchCmd(app *App) *cobra.Command {
	var o searchOpts
	cmd := &cobra.Command{
		Use:   "search <text>...",
		Short: "Rank the nodes matching some words",
		Long: `Sync the branch's search index (see kk sync), then list the nodes that
best match the words of <text>, best first. This is the command-line face
of the MCP tool kk_search: --input <file|-> takes its parameter object
({"query", "limit"}) instead of the arguments, and --json prints the result
envelope {"success":true,"data":{"branch","query","hits":[…]}}.

Words are matched after stemming (retrying finds retry); punctuation and
search operators are plain text. Nodes holding every word come first, then,
when they are fewer than --limit, nodes holding some of them. A match in the
title weighs most, then tags, description and body; a node linked to other
top hits (relates_to, depends_on, related) is raised a little.

Each hit prints as "score<TAB>id<TAB>path<TAB>title", path relative to
nodes/, followed by an indented snippet of its best matching text with the
matched words in [brackets]. Nothing found prints nothing and exits 0.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole query; drop the search text")
				}
				return refuseWithInput(cmd, "limit", "branch")
			}
			if len(args) == 0 {
				return usagef("search needs the text to look for")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBranchFlag(cmd, o.branch); err != nil {
				return err
			}
			if o.input == "" {
				if o.limit <= 0 {
					return usagef("--limit must be 1 or more, not %d", o.limit)
				}
				o.text = strings.Join(args, " ")
				if index.Query(o.text, "OR") == "" {
					return usagef("search text %q holds no word to look for", o.text)
				}
			}
			return runSearch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", search.DefaultSearchLimit, fmt.Sprintf("list at most N hits (at most %d)", search.MaxSearchLimit))
	cmd.Flags().StringVar(&o.branch, "branch", "", "search this branch's index (default: the current branch)")
	cmd.Flags().StringVar(&o.input, "input", "", "read the kk_search parameter object from a file, or - for standard input")
	return cmd
}

func runSearch(ctx context.Context, app *App, o searchOpts) error {
	limit := o.limit
	p := search.SearchParams{Query: o.text, Limit: &limit}
	resp, err := opCall(ctx, app, o.input, "", nil, "kk-search", p,
		func(ctx context.Context, k *store.KB, p search.SearchParams) (*search.SearchData, error) {
			return search.SearchNodesOn(ctx, k, o.branch, p)
		})
	if err != nil {
		return err
	}
	if d, ok := resp.Data.(*search.SearchData); ok {
		for _, s := range d.Skipped {
			app.warnf("left out of the index: %s: %s", s.Path, s.Msg)
		}
	}
	return printGraph(app, resp, func(w io.Writer, data any) {
		d, ok := data.(*search.SearchData)
		if !ok {
			return
		}
		for _, h := range d.Hits {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", strconv.FormatFloat(h.Score, 'g', 4, 64), h.ID, h.Path, h.Title)
			if h.Snippet != "" {
				fmt.Fprintf(w, "    %s\n", h.Snippet)
			}
		}
	})
}
