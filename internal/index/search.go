package index

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"
)

// Column weights of the bm25 ranking: title, description, tags, body (the
// order of the nodes_fts columns).
const rankConfig = `bm25(10.0, 3.0, 5.0, 1.0)`

// Ranking tunables.
const (
	// minPool is the fewest candidates fetched before the graph boost
	// reorders them.
	minPool = 30
	// boostTop is how many of the best text matches count as "top hits"
	// for the graph boost.
	boostTop = 10
	// boostPerLink raises a hit's score by this fraction for each top hit
	// it is linked to, up to boostMaxLinks links.
	boostPerLink  = 0.08
	boostMaxLinks = 3
	// partialScale caps the score of a leaf holding only some of the words
	// at this fraction of the weakest leaf holding all of them.
	partialScale = 0.5
)

// Hit is one search result.
type Hit struct {
	ID          string  `json:"id"`
	Path        string  `json:"path"`
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`  // higher is better
	Linked      int     `json:"linked"` // top hits this one is linked to
	Snippet     string  `json:"snippet"`
}

// SnippetOpen and SnippetClose mark matched terms in Hit.Snippet.
const (
	SnippetOpen  = "["
	SnippetClose = "]"
)

// Query turns user text into a safe FTS5 expression: every
// whitespace-separated word becomes a quoted phrase (so punctuation and FTS
// operators are plain text; control characters separate words), words without a letter or digit are dropped,
// repeats are removed. op joins the phrases ("AND" or "OR"). It returns ""
// when nothing searchable remains.
func Query(text, op string) string {
	var terms []string
	text = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text)
	for _, w := range strings.Fields(text) {
		if !strings.ContainsFunc(w, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
			continue
		}
		q := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`
		if !slices.Contains(terms, q) {
			terms = append(terms, q)
		}
	}
	return strings.Join(terms, " "+op+" ")
}

type candidate struct {
	rid  int64
	hit  Hit
	base float64
}

// Search ranks the leaves matching text: leaves holding every word come
// first, then (when they are fewer than limit) leaves holding some of them, each group by bm25 (title
// weighs most, then tags, description, body; porter stemming), with a
// small boost for leaves linked (relates_to, depends_on, related) to other
// top hits. Each hit carries a snippet of its best matching column.
func Search(ctx context.Context, db *DB, text string, limit int) ([]Hit, error) {
	if limit <= 0 {
		return nil, fmt.Errorf("search limit must be positive, got %d", limit)
	}
	all := Query(text, "AND")
	if all == "" {
		return []Hit{}, nil
	}
	pool := max(limit*3, minPool)
	cands, err := db.candidates(ctx, all, pool, nil)
	if err != nil {
		return nil, err
	}
	if some := Query(text, "OR"); len(cands) < limit && some != all {
		seen := map[int64]bool{}
		for _, c := range cands {
			seen[c.rid] = true
		}
		more, err := db.candidates(ctx, some, pool, seen)
		if err != nil {
			return nil, err
		}
		// Partial matches rank below every full match, in their own order.
		top := 0.0
		for _, c := range more {
			top = max(top, c.base)
		}
		floor := 0.0
		if len(cands) > 0 {
			floor = cands[len(cands)-1].base
		}
		for _, c := range more {
			if len(cands) == pool {
				break
			}
			if floor > 0 && top > 0 {
				c.base = floor * partialScale * c.base / top
			}
			cands = append(cands, c)
		}
	}
	if err := db.boost(ctx, cands); err != nil {
		return nil, err
	}
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		if a.hit.Score != b.hit.Score {
			if a.hit.Score > b.hit.Score {
				return -1
			}
			return 1
		}
		return strings.Compare(a.hit.ID, b.hit.ID)
	})
	if len(cands) > limit {
		cands = cands[:limit]
	}
	if err := db.snippets(ctx, Query(text, "OR"), cands); err != nil {
		return nil, err
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = c.hit
	}
	return hits, nil
}

func (db *DB) candidates(ctx context.Context, match string, limit int, skip map[int64]bool) ([]*candidate, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT n.rid, n.id, n.path, n.type, n.title, n.description, f.rank
		FROM nodes_fts f JOIN nodes n ON n.rid = f.rowid
		WHERE nodes_fts MATCH ? ORDER BY f.rank LIMIT ?`, match, limit+len(skip))
	if err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []*candidate
	for rows.Next() {
		c := &candidate{}
		var rank float64
		if err := rows.Scan(&c.rid, &c.hit.ID, &c.hit.Path, &c.hit.Type, &c.hit.Title, &c.hit.Description, &rank); err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		if skip[c.rid] {
			continue
		}
		c.base = -rank // bm25 is negative; more negative is better
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	return out, nil
}

// boost sets every candidate's score: its text score, raised a little for
// each of the best boostTop candidates it shares an edge with.
func (db *DB) boost(ctx context.Context, cands []*candidate) error {
	if len(cands) == 0 {
		return nil
	}
	ids := make([]any, len(cands))
	marks := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = c.hit.ID
		marks[i] = "?"
	}
	in := strings.Join(marks, ",")
	args := append(append([]any{}, ids...), ids...)
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT src, dst FROM edges
		WHERE type IN ('`+EdgeRelatesTo+`', '`+EdgeDependsOn+`', '`+EdgeRelated+`') AND src IN (`+in+`) AND dst IN (`+in+`) AND src <> dst`, args...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	top := map[string]bool{}
	for i, c := range cands {
		if i < boostTop {
			top[c.hit.ID] = true
		}
	}
	links := map[string]map[string]bool{}
	add := func(a, b string) {
		if top[b] {
			if links[a] == nil {
				links[a] = map[string]bool{}
			}
			links[a][b] = true
		}
	}
	for rows.Next() {
		var src, dst string
		if err := rows.Scan(&src, &dst); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		add(src, dst)
		add(dst, src)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	for _, c := range cands {
		c.hit.Linked = len(links[c.hit.ID])
		c.hit.Score = c.base * (1 + boostPerLink*float64(min(c.hit.Linked, boostMaxLinks)))
	}
	return nil
}

func (db *DB) snippets(ctx context.Context, match string, cands []*candidate) error {
	if len(cands) == 0 {
		return nil
	}
	args := []any{match}
	marks := make([]string, len(cands))
	byRid := map[int64]*candidate{}
	for i, c := range cands {
		args = append(args, c.rid)
		marks[i] = "?"
		byRid[c.rid] = c
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rowid, snippet(nodes_fts, -1, '`+SnippetOpen+`', '`+SnippetClose+`', '…', 16)
		FROM nodes_fts WHERE nodes_fts MATCH ? AND rowid IN (`+strings.Join(marks, ",")+`)`, args...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var s string
		if err := rows.Scan(&rid, &s); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		if c := byRid[rid]; c != nil {
			c.hit.Snippet = strings.Join(strings.Fields(s), " ")
		}
	}
	return rows.Err()
}
