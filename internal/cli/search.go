package cli

import (
	"context"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/search"
	"github.com/kk-project/kk/internal/store"
)

type searchOpts struct {
	text     string
	limit    int
	types    []string
	tags     []string
	all      bool
	minScore float64
	branch   string
	input    string
}

func newSearchCmd(app *App) *cobra.Command {
	var o searchOpts
	cmd := &cobra.Command{
		Use: "search <text>...",
		Example: `  kk search wrap errors
  kk search retries --tag go --type practice
  kk search token rotation --limit 3 --json`,
		Short: "Full-text search of every note, ranked (the kk_search tool)",
		Long: `Sync the branch's search index (see kk sync), then list the nodes that
best match the words of <text>, best first. This is the command-line face
of the MCP tool kk_search: --input <file|-> takes its parameter object
({"query", "limit", "types", "tags", "min_score"}) instead of the arguments, and
--json prints the result envelope {"success":true,"data":{"branch","query","hits":[…]}}.
The prompt-context hook injects what this ranking lists first.

Words are matched after stemming (retrying finds retry); identifiers and
paths are split into their words (CacheBackendInterface finds cache
backend); stop words and question boilerplate are left out. Only authored
text is searched: title, description, tags, kk_phrasings (how a developer
would ask for the node) and the body without its generated Related and
Citations blocks, link targets and URLs. The ranking is BM25F (a match
in the title or the phrasings weighs most, then description and tags,
then body, each normalised by its length), then pseudo-relevance
feedback (the words of the best few hits widen the query, so a question
in other words still finds its note) and a small raise for nodes linked
to the best hits (relates_to, depends_on, related and typed edges,
through .redirects.json); docs/search.md explains each part.

Search ranks; it does not judge: the best matches are listed whatever
their score. --min-score drops the hits scoring below a value (scores are
relative to one query). --type and --tag (both repeatable) keep only
nodes of those types, and nodes carrying every one of those tags.

Each hit prints as "score<TAB>id<TAB>path<TAB>title", path relative to
nodes/, followed by an indented snippet of its body with the
matched words in [brackets]. Nothing found prints nothing and exits 0.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if o.input != "" {
				if len(args) != 0 {
					return usagef("--input holds the whole query; drop the search text")
				}
				return refuseWithInput(app, cmd, "limit", "branch", "type", "tag", "all", "min-score")
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
				if o.limit > search.MaxSearchLimit {
					return usagef("--limit must be at most %d, not %d", search.MaxSearchLimit, o.limit)
				}
				if o.minScore < 0 || math.IsNaN(o.minScore) {
					return usagef("--min-score must be a number of at least 0, not %v", o.minScore)
				}
				o.text = strings.Join(args, " ")
				if !index.Searchable(o.text) {
					return usagef("search text %q holds no word to look for", o.text)
				}
			}
			if cmd.Flags().Changed("all") {
				app.warnf("--all is deprecated and has no effect: search always lists its best matches (see --min-score)")
			}
			return runSearch(cmd.Context(), app, o)
		},
	}
	cmd.Flags().IntVar(&o.limit, "limit", search.DefaultSearchLimit, fmt.Sprintf("list at most N hits (at most %d)", search.MaxSearchLimit))
	cmd.Flags().StringSliceVar(&o.types, "type", nil, "list only nodes of this type: practice, map, molecule, req, … (repeatable)")
	cmd.Flags().StringSliceVar(&o.tags, "tag", nil, "list only nodes carrying this tag (repeatable: every tag given)")
	cmd.Flags().Float64Var(&o.minScore, "min-score", 0, "drop the hits scoring below this")
	cmd.Flags().BoolVar(&o.all, "all", false, "no effect: search always lists its best matches")
	_ = cmd.Flags().MarkHidden("all")
	cmd.Flags().StringVar(&o.branch, "branch", "", "search this branch's index (default: the current branch); another branch's is searched as last synced while it was checked out")
	cmd.Flags().StringVar(&o.input, "input", "", "read the kk_search parameter object from a file, or - for standard input")
	return cmd
}

func runSearch(ctx context.Context, app *App, o searchOpts) error {
	if o.branch != "" {
		k, err := app.findKB()
		if err != nil {
			return err
		}
		if err := knownBranch(ctx, k, o.branch); err != nil {
			return err
		}
	}
	limit := o.limit
	p := search.SearchParams{Query: o.text, Limit: &limit, Types: o.types, Tags: o.tags}
	if o.minScore > 0 {
		p.MinScore = &o.minScore
	}
	resp, err := opCall(ctx, app, o.input, "", nil, "kk-search", p,
		func(ctx context.Context, k *store.KB, p search.SearchParams) (*search.SearchData, error) {
			return search.SearchNodesOn(ctx, k, o.branch, p)
		})
	if err != nil {
		return err
	}
	if d, ok := resp.Data.(*search.SearchData); ok {
		for _, s := range d.Skipped {
			if s.Extractor != "" { // a leaf left out is warned about with the others (warnSkipped)
				app.warnf("left out of the index: %s: %s", s.Path, s.Msg)
			}
		}
	}
	return printGraph(app, resp, func(w io.Writer, data any) {
		d, ok := data.(*search.SearchData)
		if !ok {
			return
		}
		if len(d.Hits) == 0 {
			switch {
			case o.text != "" && !o.all:
				app.noResults("no note answers %q; kk search --all lists weaker matches too, kk node list lists every note", o.text)
			default:
				app.noResults("no note matches; kk node list lists every note")
			}
		}
		for _, h := range d.Hits {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", strconv.FormatFloat(h.Score, 'g', 4, 64), h.ID, h.Path, h.Title)
			if h.Snippet != "" {
				fmt.Fprintf(w, "    %s\n", h.Snippet)
			}
		}
	})
}
