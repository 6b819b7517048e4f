package index

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// The search engine: one ranking for every face that looks up text (kk
// search, kk_search, the text filter of query_graph search, the
// prompt-context hook).
//
// A search analyzes the text (analyze.go) and asks the full-text table for
// a pool of candidates holding any of its terms (bm25 over every field).
// It ranks the pool with BM25F over the stored terms of each field (title,
// description, tags, phrasings and body, each with its weight and length
// normalisation), adds how much of the text the leaf's summary fields
// cover, and raises leaves linked to other strong hits. It returns nothing
// at all when the best hit does not answer the text (see confident).

// Ranking tunables. Field arrays are indexed by field: title,
// description, tags, phrasings, body.
var (
	// fieldWeight weighs a term's frequency in each field.
	fieldWeight = [numFields]float64{5, 2, 2, 3, 1}
	// fieldB is each field's length normalisation (0: none, 1: full).
	fieldB = [numFields]float64{0.5, 0.5, 0.3, 0.6, 0.75}
	// k1 is BM25's term frequency saturation.
	k1 = 1.2
	// coverShare weighs summary coverage: the idf of the query terms the
	// leaf's title, description, tags or phrasings hold, as a share of
	// the query's, squared so that covering most of a short question
	// counts and a few words of a long prompt barely do, times the
	// query's idf.
	coverShare = 1.0
	// minPool is the fewest candidates the full-text table is asked for.
	minPool = 50
	// poolPostings bounds the work of the candidate query (which scores
	// every node holding one of its terms): it looks for the query's
	// terms rarest first, and leaves out the commonest ones once the
	// nodes holding the terms already included would pass poolPostings.
	// A term most nodes hold finds no candidate worth having; it still
	// counts in the ranking of the candidates. The rarest term is always
	// looked for.
	poolPostings = 20000
	// boostTop is how many of the best hits count as strong for the graph
	// boost.
	boostTop = 5
	// boostShare raises a hit linked (relates_to, depends_on, related) to
	// a strong hit by this share of that hit's score, for its strongest
	// such link.
	boostShare = 0.25
)

// Relevance threshold tunables (see confident).
var (
	// minKnownShare is the least share of the text's idf that the terms
	// the index holds must carry.
	minKnownShare = 0.4
	// minPassageTerms is the most distinct query terms the best passage
	// of the best hit is asked to hold (a short text asks for half of its
	// terms, rounded up).
	minPassageTerms = 3
	// passageWords and passageStep cut a body into passages: windows of
	// passageWords terms every passageStep terms.
	passageWords = 25
	passageStep  = 8
)

// poolRank is the bm25 configuration of the full-text table, which picks
// the candidates the ranking looks at.
const poolRank = `bm25(5.0, 2.0, 2.0, 3.0, 1.0)`

// Request is one search.
type Request struct {
	Text  string
	Limit int
	// Types, when set, keeps only nodes of these types.
	Types []string
	// Tags, when set, keeps only nodes carrying every one of these tags
	// (compared without regard to case).
	Tags []string
	// IDs, when set, keeps only these nodes.
	IDs []string
	// All returns the matches even when the best of them does not pass
	// the relevance threshold (a filter, not a question).
	All bool
	// Every keeps only the nodes holding every word of Text (in any
	// field), as a filter does: query_graph search.
	Every bool
	// Lexical leaves out the vector side even when an embedding provider
	// is configured.
	Lexical bool
	// Quick marks a time-critical search (the prompt-time hook): the
	// vector side computes no stale node vectors and gets at most
	// quickVectorTime, past which the lexical ranking is returned.
	Quick bool
	// NoSnippets leaves Hit.Snippet empty, for a caller that does not
	// show it (kk serve), sparing a query and the passage search.
	NoSnippets bool
	// Postings, when positive, bounds the candidate query's work below
	// poolPostings (see poolTerms): a caller that needs the neighbourhood
	// of a text rather than its best answer (kk serve's placement) pays
	// for fewer candidates.
	Postings int
}

// Hit is one search result.
type Hit struct {
	ID          string  `json:"id"`
	Path        string  `json:"path"`
	Type        string  `json:"type"`
	Title       string  `json:"title"`
	Description string  `json:"description"`
	Score       float64 `json:"score"`  // higher is better
	Linked      int     `json:"linked"` // strong hits this one is linked to
	Snippet     string  `json:"snippet"`
}

// SnippetOpen and SnippetClose mark matched terms in Hit.Snippet.
const (
	SnippetOpen  = "["
	SnippetClose = "]"
)

// Searchable reports whether text holds a word search can look for (not
// only stop words, one-letter words and punctuation).
func Searchable(text string) bool { return len(terms(text)) > 0 }

// queryTerm is one distinct term of the searched text.
type queryTerm struct {
	term string
	// whole marks the term of a whole identifier that was also split into
	// parts (cachebackendinterface beside cach, backend, interfac).
	whole bool
	df    int // nodes holding the term
	idf   float64
}

// queryTerms returns the distinct terms of text, in order.
func queryTerms(text string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	analyze(text, func(t string, whole bool) {
		if !seen[t] {
			seen[t] = true
			out = append(out, queryTerm{term: t, whole: whole})
		}
	})
	return out
}

// Search ranks the nodes matching text, best first, at most limit of them.
func Search(ctx context.Context, db *DB, text string, limit int) ([]Hit, error) {
	return db.Search(ctx, Request{Text: text, Limit: limit})
}

type candidate struct {
	rid   int64
	hit   Hit
	score float64
}

// before orders candidates as sortCandidates does: higher score first,
// then by id.
func (c *candidate) before(o *candidate) bool {
	if c.score != o.score {
		return c.score > o.score
	}
	return c.hit.ID < o.hit.ID
}

// stats are the corpus figures the ranking normalises with.
type stats struct {
	docs   int
	avgLen [numFields]float64
}

// Search runs a search on the index.
func (db *DB) Search(ctx context.Context, r Request) ([]Hit, error) {
	if r.Limit <= 0 {
		return nil, fmt.Errorf("search limit must be positive, got %d", r.Limit)
	}
	q := queryTerms(r.Text)
	if len(q) == 0 {
		return []Hit{}, nil
	}
	st, err := db.searchStats(ctx)
	if err != nil || st.docs == 0 {
		return []Hit{}, err
	}
	if err := db.lookupTerms(ctx, q, st); err != nil {
		return nil, err
	}
	cands, best, err := db.pool(ctx, q, r, st, max(minPool, 3*r.Limit))
	if err != nil {
		return nil, err
	}
	sortCandidates(cands)
	if len(cands) > 0 && !r.All && !confident(best, q) {
		cands = nil
	}
	if len(cands) > 0 {
		if err := db.boost(ctx, cands); err != nil {
			return nil, err
		}
		sortCandidates(cands)
	}
	if db.embedder != nil && !r.Lexical {
		cands, err = db.hybrid(ctx, r, cands)
		if err != nil {
			return nil, err
		}
	}
	if len(cands) == 0 {
		return []Hit{}, nil
	}
	if len(cands) > r.Limit {
		cands = cands[:r.Limit]
	}
	if !r.NoSnippets {
		if err := db.snippets(ctx, cands, q); err != nil {
			return nil, err
		}
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		c.hit.Score = math.Round(c.score*1000) / 1000
		hits[i] = c.hit
	}
	return hits, nil
}

func sortCandidates(cands []*candidate) {
	slices.SortStableFunc(cands, func(a, b *candidate) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		return strings.Compare(a.hit.ID, b.hit.ID)
	})
}

// searchStats reads the corpus figures the last sync recorded.
func (db *DB) searchStats(ctx context.Context) (stats, error) {
	var st stats
	v, err := db.Meta(ctx, "search_stats")
	if err != nil {
		return st, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	f := strings.Fields(v)
	if len(f) != numFields+1 {
		return st, nil
	}
	st.docs, _ = strconv.Atoi(f[0])
	for i := range numFields {
		total, _ := strconv.ParseFloat(f[i+1], 64)
		if st.docs > 0 {
			st.avgLen[i] = total / float64(st.docs)
		}
	}
	return st, nil
}

// lookupTerms sets how many nodes hold each term, and its idf.
func (db *DB) lookupTerms(ctx context.Context, q []queryTerm, st stats) error {
	args := make([]any, len(q))
	for i, t := range q {
		args[i] = t.term
	}
	rows, err := db.r.QueryContext(ctx, `SELECT term, doc FROM search_vocab WHERE term IN (`+marks(len(q))+`)`, args...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	df := map[string]int{}
	for rows.Next() {
		var t string
		var n int
		if err := rows.Scan(&t, &n); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		df[t] = n
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	for i := range q {
		n := min(df[q[i].term], st.docs)
		q[i].df = n
		q[i].idf = math.Log(1 + (float64(st.docs-n)+0.5)/(float64(n)+0.5))
	}
	return nil
}

func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// pool asks the full-text table for the best n candidates holding any of
// the terms (see poolTerms), within the request's filters (and, with
// r.Every, holding every term), and scores each from its fields as it
// reads them. It returns the candidates and the analyzed text of the best
// one (for confident): the others' text is dropped once scored, so a
// search holds at most two candidates' text, however long the notes.
func (db *DB) pool(ctx context.Context, q []queryTerm, r Request, st stats, n int) ([]*candidate, *searchDoc, error) {
	budget := poolPostings
	if r.Postings > 0 {
		budget = min(budget, r.Postings)
	}
	match := poolTerms(q, budget)
	if len(match) == 0 {
		return nil, nil, nil
	}
	filters, fargs := filterSQL(r)
	where := append([]string{"search_fts MATCH ?"}, filters...)
	args := append(append([]any{strings.Join(match, " OR ")}, fargs...), n)
	rows, err := db.r.QueryContext(ctx, `SELECT n.rid, n.id, n.path, n.type, n.title, n.description,
		d.title, d.description, d.tags, d.phrasings, d.body
		FROM search_fts f JOIN nodes n ON n.rid = f.rowid JOIN search_docs d ON d.rid = f.rowid
		WHERE `+strings.Join(where, " AND ")+` ORDER BY f.rank LIMIT ?`, args...)
	if err != nil {
		return nil, nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var out []*candidate
	var best *candidate
	var bestDoc searchDoc
	for rows.Next() {
		c := &candidate{}
		var fields [numFields]string
		if err := rows.Scan(&c.rid, &c.hit.ID, &c.hit.Path, &c.hit.Type, &c.hit.Title, &c.hit.Description,
			&fields[0], &fields[1], &fields[2], &fields[3], &fields[4]); err != nil {
			return nil, nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		var doc searchDoc
		for i, f := range fields {
			doc[i] = strings.Fields(f)
		}
		if r.Every && !holdsEvery(&doc, q) {
			continue
		}
		c.score = bm25f(&doc, q, st)
		if best == nil || c.before(best) {
			best, bestDoc = c, doc
		}
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	return out, &bestDoc, nil
}

// poolTerms returns the quoted terms the candidate query looks for: those
// some node holds, rarest first, until the nodes holding them would pass
// budget (but at least one term).
func poolTerms(q []queryTerm, budget int) []string {
	var held []queryTerm
	for _, t := range q {
		if t.df > 0 {
			held = append(held, t)
		}
	}
	slices.SortStableFunc(held, func(a, b queryTerm) int { return cmp.Compare(a.df, b.df) })
	var out []string
	postings := 0
	for _, t := range held {
		if len(out) >= 1 && postings+t.df > budget {
			break
		}
		postings += t.df
		out = append(out, `"`+t.term+`"`)
	}
	return out
}

// filterSQL returns the conditions on nodes n (and their arguments) that
// keep a request's types, tags and ids.
func filterSQL(r Request) ([]string, []any) {
	var where []string
	var args []any
	if len(r.Types) > 0 {
		where = append(where, "n.type IN ("+marks(len(r.Types))+")")
		for _, t := range r.Types {
			args = append(args, t)
		}
	}
	for _, tag := range r.Tags {
		where = append(where, `(' ' || n.tags || ' ') LIKE ? ESCAPE '\'`)
		args = append(args, "% "+likeEscape(tag)+" %")
	}
	if len(r.IDs) > 0 {
		where = append(where, "n.id IN ("+marks(len(r.IDs))+")")
		for _, id := range r.IDs {
			args = append(args, id)
		}
	}
	return where, args
}

func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// bm25f scores a node against the query terms. For each term, its
// frequency in each field, weighted by the field and normalised by the
// field's length against the corpus average, is saturated (k1) and
// multiplied by the term's idf. Summary coverage is added (coverShare).
// holdsEvery reports whether document d holds every term of q in some
// field.
func holdsEvery(d *searchDoc, q []queryTerm) bool {
	tf := termCounts(d, q)
	for i := range q {
		n := 0
		for f := range numFields {
			n += tf[i][f]
		}
		if n == 0 {
			return false
		}
	}
	return true
}

func bm25f(d *searchDoc, q []queryTerm, st stats) float64 {
	tf := termCounts(d, q)
	score, total, covered := 0.0, 0.0, 0.0
	for i, t := range q {
		total += t.idf
		w := 0.0
		for f := range numFields {
			if tf[i][f] == 0 {
				continue
			}
			norm := 1.0
			if st.avgLen[f] > 0 {
				norm = 1 - fieldB[f] + fieldB[f]*float64(len(d[f]))/st.avgLen[f]
			}
			w += fieldWeight[f] * float64(tf[i][f]) / norm
		}
		if w > 0 {
			score += t.idf * w / (k1 + w)
		}
		if tf[i][fieldTitle]+tf[i][fieldDescription]+tf[i][fieldTags]+tf[i][fieldPhrasings] > 0 {
			covered += t.idf
		}
	}
	if total > 0 {
		score += coverShare * covered * covered / total
	}
	return score
}

// termCounts counts each query term in each field of d.
func termCounts(d *searchDoc, q []queryTerm) [][numFields]int {
	index := make(map[string]int, len(q))
	for i, t := range q {
		index[t.term] = i
	}
	out := make([][numFields]int, len(q))
	for f := range numFields {
		for _, t := range d[f] {
			if i, ok := index[t]; ok {
				out[i][f]++
			}
		}
	}
	return out
}

// confident reports whether d, the best hit, answers the text rather than
// sharing a few words with it. Two conditions, both measured on the
// query's terms:
//
//   - the text is mostly about things the knowledge base knows: the terms
//     some node holds carry at least minKnownShare of the text's idf (a
//     term no node holds has the highest idf; the whole of a split
//     identifier does not count when no node holds it, its parts do);
//   - d answers it in one place: one of its passages (title with
//     description and tags, one phrasing, or a window of its body) holds
//     at least minPassageTerms distinct query terms, or half of them for
//     a short text. A question about something else shares scattered
//     common words with its best hit; a question the leaf answers shares
//     several words with one sentence of it.
func confident(d *searchDoc, q []queryTerm) bool {
	var total, known float64
	n := 0
	for _, t := range q {
		if t.whole && t.df == 0 {
			continue
		}
		n++
		total += t.idf
		if t.df > 0 {
			known += t.idf
		}
	}
	if total == 0 || known < minKnownShare*total {
		return false
	}
	return bestPassage(d, q) >= min(minPassageTerms, (n+1)/2)
}

// bestPassage returns the most distinct query terms one passage of d
// holds.
func bestPassage(d *searchDoc, q []queryTerm) int {
	want := make(map[string]int, len(q))
	for i, t := range q {
		want[t.term] = i
	}
	best := 0
	seen := make([]int, len(q)) // passage number + 1 that last saw each term
	pass := 0
	count := func(terms []string) {
		pass++
		n := 0
		for _, t := range terms {
			if i, ok := want[t]; ok && seen[i] != pass {
				seen[i] = pass
				n++
			}
		}
		best = max(best, n)
	}
	count(slices.Concat(d[fieldTitle], d[fieldDescription], d[fieldTags]))
	ph := d[fieldPhrasings]
	for start := 0; start < len(ph); {
		end := slices.Index(ph[start:], passageBreak)
		if end < 0 {
			end = len(ph)
		} else {
			end += start
		}
		count(ph[start:end])
		start = end + 1
	}
	body := d[fieldBody]
	for start := 0; start < len(body); start += passageStep {
		count(body[start:min(len(body), start+passageWords)])
		if start+passageWords >= len(body) {
			break
		}
	}
	return best
}

// boost raises each candidate linked to one of the boostTop best by
// boostShare of the strongest such neighbour's score.
func (db *DB) boost(ctx context.Context, cands []*candidate) error {
	top := map[string]float64{}
	for _, c := range cands[:min(boostTop, len(cands))] {
		top[c.hit.ID] = c.score
	}
	ids := make([]any, len(cands))
	for i, c := range cands {
		ids[i] = c.hit.ID
	}
	in := marks(len(cands))
	rows, err := db.r.QueryContext(ctx, `SELECT DISTINCT src, dst FROM edges
		WHERE type IN ('`+EdgeRelatesTo+`', '`+EdgeDependsOn+`', '`+EdgeRelated+`') AND src IN (`+in+`) AND dst IN (`+in+`) AND src <> dst`,
		append(slices.Clone(ids), ids...)...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	best := map[string]float64{}
	linked := map[string]map[string]bool{}
	add := func(a, b string) {
		s, ok := top[b]
		if !ok {
			return
		}
		if linked[a] == nil {
			linked[a] = map[string]bool{}
		}
		linked[a][b] = true
		best[a] = max(best[a], s)
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
		c.hit.Linked = len(linked[c.hit.ID])
		c.score += boostShare * best[c.hit.ID]
	}
	return nil
}

// snippetWords is the length of a snippet, in words.
const snippetWords = 24

// snippets sets each hit's snippet: the window of its authored body that
// holds the most distinct query terms, matched words in brackets.
func (db *DB) snippets(ctx context.Context, cands []*candidate, q []queryTerm) error {
	ids := make([]any, len(cands))
	byRid := map[int64]*candidate{}
	for i, c := range cands {
		ids[i] = c.rid
		byRid[c.rid] = c
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rid, body FROM nodes WHERE rid IN (`+marks(len(ids))+`)`, ids...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	want := map[string]bool{}
	for _, t := range q {
		want[t.term] = true
	}
	for rows.Next() {
		var rid int64
		var body string
		if err := rows.Scan(&rid, &body); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		if c := byRid[rid]; c != nil {
			c.hit.Snippet = snippet(authoredText(body), want)
		}
	}
	return rows.Err()
}

// span is one word of a text, by byte offsets, and the query terms it
// holds.
type span struct {
	start, end int
	terms      []string
}

// snippet returns the snippetWords-word window of text holding the most
// distinct wanted terms (the first window when none holds any), matched
// words in brackets and "…" where the text was cut.
func snippet(text string, want map[string]bool) string {
	var words []span
	start := -1
	flush := func(end int) {
		sp := span{start: start, end: end}
		analyzeWord(text[start:end], func(t string, _ bool) {
			if want[t] {
				sp.terms = append(sp.terms, t)
			}
		})
		words = append(words, sp)
		start = -1
	}
	for i, r := range text {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
		} else if start >= 0 {
			flush(i)
		}
	}
	if start >= 0 {
		flush(len(text))
	}
	if len(words) == 0 {
		return ""
	}
	// The best window starts on a matched word and holds the most
	// distinct matches (the first such window); then it moves back up to
	// three words for context, as far as its last match stays inside.
	best, bestN, bestLast := 0, 0, -1
	for i := range words {
		if len(words[i].terms) == 0 {
			continue
		}
		seen := map[string]bool{}
		last := i
		for j := i; j < min(len(words), i+snippetWords); j++ {
			for _, t := range words[j].terms {
				seen[t] = true
				last = j
			}
		}
		if len(seen) > bestN {
			best, bestN, bestLast = i, len(seen), last
		}
	}
	if bestN > 0 {
		best -= min(3, best, best+snippetWords-1-bestLast)
		// A window running past the end moves back to be full (its end
		// stays at or after the last match): a short text shows whole.
		best = max(0, min(best, len(words)-snippetWords))
	}
	end := min(len(words), best+snippetWords)
	var b strings.Builder
	pos := words[best].start
	if best == 0 {
		pos = 0
	} else {
		b.WriteString("…")
	}
	for _, w := range words[best:end] {
		b.WriteString(text[pos:w.start])
		if len(w.terms) > 0 {
			b.WriteString(SnippetOpen + text[w.start:w.end] + SnippetClose)
		} else {
			b.WriteString(text[w.start:w.end])
		}
		pos = w.end
	}
	if end < len(words) {
		b.WriteString("…")
	} else {
		b.WriteString(text[pos:])
	}
	return strings.Join(strings.Fields(b.String()), " ")
}
