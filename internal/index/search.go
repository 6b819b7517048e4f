package index

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/store"
)

// The search engine: one ranking for every face that looks up text (kk
// search, kk_search, query_graph search, /search, the web page, the
// prompt-context hook).
//
// A search analyzes the text (analyze.go) into its distinct terms and asks
// the full-text table for a pool of candidates holding any of them. It
// ranks them with methods that the IR literature shows to hold across
// collections, and nothing fitted to one query set:
//
//  1. BM25F (Robertson & Zaragoza, 2009): a term's frequency in each field
//     (title, description, tags, phrasings, body), weighted by the field
//     and normalised by the field's length against the corpus average, is
//     summed over the fields, saturated (k1) and multiplied by the term's
//     idf. A leaf's phrasings (how developers ask for it, written by the
//     host agent at curate time) are a field of their own: document
//     expansion.
//  2. Pseudo-relevance feedback, RM3 (Lavrenko & Croft, 2001; Abdul-Jaleel
//     et al., 2004): the terms of the best first-pass hits, weighted by
//     their scores, expand the query, and the candidates are ranked again.
//     A prompt that shares few words with the note it needs finds it
//     through the vocabulary of the notes it does match.
//  3. Term proximity, BM25TP (Rasolofo & Savoy, 2003): two terms of the
//     text that stand within a few words of each other in a field of a
//     node (a phrase of the text, or its words kept together) add to that
//     node's score, in the same saturated form as BM25. Term dependence
//     is the one addition to bag-of-words ranking that the literature
//     finds to hold across collections (Metzler & Croft's sequential
//     dependence model, 2005, is the language-model form of it).
//  4. Graph neighbours: a node linked to one of the best hits gains a
//     share of that hit's score, and is brought in when it matched no
//     word at all; an edge to a retired id follows .redirects.json to the
//     live ids.
//
// A log, a trace or code pasted beside the question weighs at most what
// the question does, and the gate judges the question (quoted.go).
//
// Search ranks; it never refuses. A caller for whom noise has a cost (the
// prompt-context hook) asks for the relevance gate (Request.Gate, see
// admits) or a least score (Request.MinScore).

// Ranking is the ranking's parameters. Every face searches with
// DefaultRanking; the evaluation tools (internal/searcheval) try others.
type Ranking struct {
	// FieldWeight weighs a term's frequency in each field: title,
	// description, tags, phrasings, body.
	FieldWeight [numFields]float64
	// FieldB is each field's length normalisation (0: none, 1: full).
	FieldB [numFields]float64
	// K1 is BM25's term frequency saturation.
	K1 float64
	// FeedbackDocs is how many of the best first-pass hits feed the
	// query's expansion; 0 turns pseudo-relevance feedback off.
	FeedbackDocs int
	// FeedbackTerms is how many terms the feedback model keeps.
	FeedbackTerms int
	// FeedbackWeight is the share of the expanded query that the feedback
	// model carries (RM3's 1-λ); the text's own terms carry the rest.
	FeedbackWeight float64
	// Proximity weighs the term-proximity score (see proximity) against
	// BM25F's; 0 turns it off.
	Proximity float64
	// NeighbourTop is how many of the best hits lend score to the nodes
	// they are linked with; 0 turns the graph step off.
	NeighbourTop int
	// NeighbourShare is the share of a strong hit's score that a node
	// linked to it gains (for its strongest such link).
	NeighbourShare float64
}

// DefaultRanking is the ranking every face uses. BM25F keeps the textbook
// k1 and body normalisation and weighs the short fields as the BM25
// reference script repeats them (title three times, description and tags
// twice), phrasings as the title. Feedback and the graph step are the
// smallest the literature uses (three feedback documents, a small share),
// as a collection of a few hundred notes needs: on both public corpora,
// every value tuned on one corpus scored within noise on the other
// (docs/search.md: the protocol, the folds and the figures).
var DefaultRanking = Ranking{
	FieldWeight:    [numFields]float64{3, 2, 2, 3, 1},
	FieldB:         [numFields]float64{0.5, 0.5, 0.3, 0.5, 0.75},
	K1:             1.2,
	FeedbackDocs:   3,
	FeedbackTerms:  10,
	FeedbackWeight: 0.2,
	Proximity:      0.75,
	NeighbourTop:   3,
	NeighbourShare: 0.1,
}

// Pool tunables.
const (
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
)

// poolRank is the bm25 configuration of the full-text table, which picks
// the candidates the ranking looks at.
const poolRank = `bm25(3.0, 2.0, 2.0, 2.0, 1.0)`

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
	// Gate returns nothing when the text is not about what the knowledge
	// base holds (see admits): for a caller that shows the hits
	// unasked, where noise has a cost (the prompt-context hook).
	Gate bool
	// MinScore, when positive, drops the hits scoring below it.
	MinScore float64
	// Every keeps only the nodes holding every word of Text (in any
	// field), as a filter does: query_graph search. Neither feedback nor
	// graph neighbours apply.
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
	// Like, when positive, reads Text as a document rather than a
	// question, for a caller that wants the nodes most like it (kk
	// serve's placement of a posted note): the search keeps the Like
	// terms of the text that best tell it apart, by their frequency in
	// the text times their idf (the query of Lucene's MoreLikeThis), and
	// ranks with those. Terms no node holds are left out: they cannot
	// find a neighbour.
	Like int
	// Ranking, when set, replaces DefaultRanking (evaluation only).
	Ranking *Ranking
	// Early, when set, is called with the text's own ranking (after the
	// gate, before feedback and graph neighbours refine it, without
	// snippets), for a caller that may have to answer before the search
	// ends (the prompt-context hook on a busy machine).
	Early func([]Hit)
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
// It reads line by line and stops at the first such word: a pasted log of
// megabytes is not analyzed whole to tell that.
func Searchable(text string) bool {
	for line := range strings.Lines(text) {
		if len(terms(line)) > 0 {
			return true
		}
	}
	return false
}

// queryTerm is one distinct term of the searched text, or of its
// expansion.
type queryTerm struct {
	term string
	// whole marks the term of a whole identifier that was also split into
	// parts (cachebackendinterface beside cach, backend, interfac).
	whole bool
	df    int // nodes holding the term
	idf   float64
	// authored is how many nodes hold the term outside their phrasings:
	// in the notes' own words (see admits).
	authored int
	// weight is the term's weight in the query: 1 for each term of the
	// text before feedback.
	weight float64
	// added marks a term feedback added (not in the text).
	added bool
	// quoted marks a term only the material pasted beside the question
	// holds (see textTerms).
	quoted bool
}

// queryTerms returns the distinct terms of text, in order.
func queryTerms(text string) []queryTerm {
	var out []queryTerm
	seen := map[string]bool{}
	analyze(text, func(t string, whole bool) {
		if !seen[t] {
			seen[t] = true
			out = append(out, queryTerm{term: t, whole: whole, weight: 1})
		}
	})
	return out
}

// Search ranks the nodes matching text, best first, at most limit of them.
func Search(ctx context.Context, db *DB, text string, limit int) ([]Hit, error) {
	return db.Search(ctx, Request{Text: text, Limit: limit})
}

// candidate is one node a search ranks. It keeps its fields' lengths and
// how often each term of the query occurs in each field, not its text:
// only the few best (feedbackDocs) keep their analyzed text, for
// pseudo-relevance feedback, so a search holds a bounded amount of text
// however long the notes are.
type candidate struct {
	rid   int64
	hit   Hit
	score float64
	lens  [numFields]int
	tf    [][numFields]int // per term of the query searched, in its order
	doc   *searchDoc       // the analyzed text, for the best few only
	// prox is the node's term-proximity score for the text's own terms
	// (see proximity).
	prox float64
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
	rk := DefaultRanking
	if r.Ranking != nil {
		rk = *r.Ranking
	}
	r.Text = boundText(r.Text)
	// own: the text's own terms, its prose's (see textTerms); a document
	// (Like) or a filter (Every) is taken whole.
	var q []queryTerm
	var own int
	if r.Like > 0 || r.Every {
		q = queryTerms(r.Text)
		own = len(q)
	} else {
		q, own = textTerms(r.Text)
	}
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
	if r.Like > 0 {
		if q = likeTerms(r.Text, q, r.Like); len(q) == 0 {
			return []Hit{}, nil
		}
		own = len(q)
	}
	if own < len(q) {
		q = tellingMaterial(r.Text, q, own)
	}
	// The gate judges the question, not what was pasted beside it.
	if r.Gate && indiscriminate(q[:own], st, postingsBudget(r)) {
		return []Hit{}, nil
	}
	cands, err := db.pool(ctx, q, own, r, st, &rk, max(minPool, 3*r.Limit))
	if err != nil {
		return nil, err
	}
	sortCandidates(cands)
	if r.Gate {
		if len(cands) == 0 {
			return []Hit{}, nil
		}
		best := questionBest(cands, q, own, st, &rk)
		ok, err := db.admits(ctx, r.Text, q[:own], best.hit.Title, best.tf[:own], st)
		if err != nil || !ok {
			return []Hit{}, err
		}
	}
	// Leaves sharing an id leave before anything is offered (Early) or
	// learnt from (feedback); neighbours may bring more, dropped below.
	if cands, err = db.dropShared(ctx, cands); err != nil {
		return nil, err
	}
	if r.Early != nil {
		r.Early(earlyHits(cands, r))
	}
	query := q
	// Feedback expands a short question with the words of its best
	// hits; a text that carries material of its own (own < len(q)) has
	// words enough, and its first-pass hits are the likelier to be led
	// astray by that material, which feedback would then amplify.
	if !r.Every && own == len(q) && rk.FeedbackDocs > 0 && len(cands) > 0 {
		if query, err = db.feedback(ctx, cands, q, st, &rk); err != nil {
			return nil, err
		}
	}
	if !r.Every && rk.NeighbourTop > 0 && len(cands) > 0 {
		if cands, err = db.neighbours(ctx, cands, query, st, &rk, r); err != nil {
			return nil, err
		}
	}
	if cands, err = db.dropShared(ctx, cands); err != nil {
		return nil, err
	}
	if r.MinScore > 0 {
		cands = slices.DeleteFunc(cands, func(c *candidate) bool { return shownScore(c.score) < r.MinScore })
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
		c.hit.Score = shownScore(c.score)
		hits[i] = c.hit
	}
	return hits, nil
}

// dropShared leaves out the candidates whose id two leaves of the tree
// have (a note copied by hand, not given an id of its own), as every
// other reader of the index does (see sharedLeaf), but the one the id
// names (store.Holder): kk read shows that one, and refuses an id that
// names none.
func (db *DB) dropShared(ctx context.Context, cands []*candidate) ([]*candidate, error) {
	if len(cands) == 0 {
		return cands, nil
	}
	ids := make([]any, len(cands))
	for i, c := range cands {
		ids[i] = c.hit.ID
	}
	type leaves struct{ ids, types, paths []string }
	holding := map[string]*leaves{} // the leaves of each id (by store.IDKey)
	err := db.queryIn(ctx, `SELECT id, type, path FROM nodes INDEXED BY nodes_id WHERE id IN (?) AND origin = ''`, ids, func(rows *sql.Rows) error {
		var id, typ, p string
		err := rows.Scan(&id, &typ, &p)
		l := holding[store.IDKey(id)]
		if l == nil {
			l = &leaves{}
			holding[store.IDKey(id)] = l
		}
		l.ids, l.types, l.paths = append(l.ids, id), append(l.types, typ), append(l.paths, p)
		return err
	})
	if err != nil {
		return cands, err
	}
	return slices.DeleteFunc(cands, func(c *candidate) bool {
		l := holding[store.IDKey(c.hit.ID)]
		if l == nil || len(l.paths) < 2 {
			return false
		}
		i, ok := store.HolderOf(l.ids, l.types, l.paths)
		return !ok || l.paths[i] != c.hit.Path
	}), nil
}

// earlyHits are the hits of ranked candidates as Request.Early gets them.
func earlyHits(cands []*candidate, r Request) []Hit {
	var hits []Hit
	for _, c := range cands {
		if len(hits) == r.Limit {
			break
		}
		if r.MinScore > 0 && shownScore(c.score) < r.MinScore {
			continue
		}
		h := c.hit
		h.Score = shownScore(c.score)
		hits = append(hits, h)
	}
	return hits
}

// rank scores the candidates against q (their counts of its terms) and
// sorts them, best first.
func rank(cands []*candidate, q []queryTerm, st stats, rk *Ranking) {
	for _, c := range cands {
		c.score = score(c, q, st, rk)
	}
	sortCandidates(cands)
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

// lookupTerms sets how many nodes hold each term, and its idf, and how
// many hold it outside their phrasings.
func (db *DB) lookupTerms(ctx context.Context, q []queryTerm, st stats) error {
	df := map[string]dfCounts{}
	for chunk := range slices.Chunk(q, maxLookup) {
		if err := db.lookupChunk(ctx, chunk, df); err != nil {
			return err
		}
	}
	for i := range q {
		c := df[q[i].term]
		n := min(c.docs, st.docs)
		q[i].df = n
		q[i].idf = idf(st.docs, n)
		q[i].authored = min(c.authored, n)
	}
	return nil
}

// maxLookup bounds the terms one query of lookupTerms names (a text read
// as a document may hold thousands), well below SQLite's limit on a
// statement's parameters.
const maxLookup = 500

// lookupChunk adds to df the counts of search_df for each term of q.
func (db *DB) lookupChunk(ctx context.Context, q []queryTerm, df map[string]dfCounts) error {
	args := make([]any, len(q))
	for i, t := range q {
		args[i] = t.term
	}
	rows, err := db.r.QueryContext(ctx, `SELECT term, docs, authored FROM search_df WHERE term IN (`+marks(len(q))+`)`, args...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var c dfCounts
		if err := rows.Scan(&t, &c.docs, &c.authored); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		df[t] = c
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	return nil
}

// likeTerms keeps the n terms of q (the distinct terms of text, their
// document frequencies looked up) that best describe text as a document:
// the highest by their count in text times their idf, among those some
// node holds; a split identifier counts by its parts, not as a whole. The
// kept terms stay in the text's order.
func likeTerms(text string, q []queryTerm, n int) []queryTerm {
	tf := map[string]int{}
	analyze(text, func(t string, _ bool) { tf[t]++ })
	type scored struct {
		at    int
		score float64
	}
	var cand []scored
	for i, t := range q {
		if t.df == 0 || t.whole {
			continue
		}
		cand = append(cand, scored{i, float64(tf[t.term]) * t.idf})
	}
	slices.SortStableFunc(cand, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	cand = cand[:min(n, len(cand))]
	slices.SortFunc(cand, func(a, b scored) int { return a.at - b.at })
	out := make([]queryTerm, len(cand))
	for i, c := range cand {
		out[i] = q[c.at]
	}
	return out
}

// idf is BM25's inverse document frequency of a term n of docs nodes
// hold (always positive).
func idf(docs, n int) float64 {
	return math.Log(1 + (float64(docs-n)+0.5)/(float64(n)+0.5))
}

func marks(n int) string {
	return strings.TrimSuffix(strings.Repeat("?,", n), ",")
}

// candidateColumns are the columns pool and neighbours read into a
// candidate.
const candidateColumns = `n.rid, n.id, n.path, n.type, n.title, n.description,
		d.title, d.description, d.tags, d.phrasings, d.body`

// pool asks the full-text table for the best n candidates holding any of
// the terms (see poolTerms), within the request's filters (and, with
// r.Every, holding every term), and scores each against q as it reads it.
// postingsBudget is the most postings the candidate query of r reads
// beyond its rarest term (see poolTerms).
func postingsBudget(r Request) int {
	if r.Postings > 0 {
		return min(poolPostings, r.Postings)
	}
	return poolPostings
}

func (db *DB) pool(ctx context.Context, q []queryTerm, own int, r Request, st stats, rk *Ranking, n int) ([]*candidate, error) {
	cands, err := db.poolFor(ctx, poolTerms(q, postingsBudget(r)), q, r, st, rk, n, nil)
	if err != nil || own == len(q) {
		return cands, err
	}
	// Material pasted beside the question (see textTerms): the candidates
	// holding the question's terms are asked for too, since the full-text
	// table's ranking weighs every term alike and the material's many
	// terms could otherwise fill the pool.
	have := make(map[int64]*candidate, len(cands))
	for _, c := range cands {
		have[c.rid] = c
	}
	more, err := db.poolFor(ctx, poolTerms(q[:own], postingsBudget(r)), q, r, st, rk, n, have)
	return append(cands, more...), err
}

// poolFor asks the full-text table for the best n candidates holding any
// of the match terms, within the request's filters (and, with r.Every,
// holding every term of q), leaving out those in have, and scores each
// against q as it reads it.
func (db *DB) poolFor(ctx context.Context, match []string, q []queryTerm, r Request, st stats, rk *Ranking, n int, have map[int64]*candidate) ([]*candidate, error) {
	if len(match) == 0 {
		return nil, nil
	}
	filters, fargs := filterSQL(r)
	where := append([]string{"search_fts MATCH ?"}, filters...)
	args := append(append([]any{strings.Join(match, " OR ")}, fargs...), n)
	rows, err := db.r.QueryContext(ctx, `SELECT `+candidateColumns+`
		FROM search_fts f JOIN nodes n ON n.rid = f.rowid JOIN search_docs d ON d.rid = f.rowid
		WHERE `+strings.Join(where, " AND ")+` ORDER BY f.rank LIMIT ?`, args...)
	if err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	return db.scanCandidates(rows, q, st, rk, r.Every, have)
}

// rowScanner is what scanCandidates reads: *sql.Rows.
type rowScanner interface {
	Next() bool
	Scan(...any) error
	Err() error
	Close() error
}

// scanCandidates reads rows of candidateColumns (leaving out the nodes in
// have and, with every, those not holding every term of q), scores each
// against q, and keeps the analyzed text of the best feedbackDocs only.
func (db *DB) scanCandidates(rows rowScanner, q []queryTerm, st stats, rk *Ranking, every bool, have map[int64]*candidate) ([]*candidate, error) {
	defer func() { _ = rows.Close() }()
	var out []*candidate
	var kept []*candidate // holding their text, best first
	for rows.Next() {
		c := &candidate{}
		var fields [numFields]string
		if err := rows.Scan(&c.rid, &c.hit.ID, &c.hit.Path, &c.hit.Type, &c.hit.Title, &c.hit.Description,
			&fields[0], &fields[1], &fields[2], &fields[3], &fields[4]); err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		if have[c.rid] != nil {
			continue
		}
		var doc searchDoc
		for i, f := range fields {
			doc[i] = strings.Fields(f)
			c.lens[i] = fieldLen(doc[i])
		}
		c.tf = termCounts(&doc, q)
		if every && !holdsEvery(c.tf) {
			continue
		}
		if rk.Proximity > 0 {
			c.prox = proximity(&doc, q, c.lens, st, rk)
		}
		c.score = score(c, q, st, rk)
		out = append(out, c)
		if keep := rk.FeedbackDocs; keep > 0 && (len(kept) < keep || c.before(kept[len(kept)-1])) {
			c.doc = &doc
			i, _ := slices.BinarySearchFunc(kept, c, func(a, b *candidate) int {
				if a.before(b) {
					return -1
				}
				return 1
			})
			kept = slices.Insert(kept, i, c)
			if len(kept) > keep {
				kept[len(kept)-1].doc = nil
				kept = kept[:keep]
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	return out, nil
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

// holdsEvery reports whether a document with these counts of the query's
// terms holds every one of them in some field.
func holdsEvery(tf [][numFields]int) bool {
	for _, c := range tf {
		if c == ([numFields]int{}) {
			return false
		}
	}
	return true
}

// bm25f scores a node from its counts of the query's terms and its
// fields' lengths: for each term, its frequency in each field, weighted by
// the field and normalised by the field's length against the corpus
// average, summed over the fields, saturated (k1) and multiplied by the
// term's idf and its weight in the query.
// score is a candidate's score for q: BM25F, plus its term proximity.
func score(c *candidate, q []queryTerm, st stats, rk *Ranking) float64 {
	return bm25f(c.tf, c.lens, q, st, rk) + rk.Proximity*c.prox
}

// proximityWindow is how near two terms must stand, in terms of a field
// (stop words not counted), to count as near: BM25TP's window.
const proximityWindow = 5

// proximity is BM25TP's term-proximity score of a node (its analyzed
// fields d, their lengths lens) for the text's own terms of q (not those
// feedback added, nor those only material pasted beside the question
// holds). Each occurrence of two distinct terms within
// proximityWindow of each other in one field adds 1/distance² to the
// pair's weight; each pair then scores as a BM25 term would, saturated
// by k1 and normalised by the node's length, times the smaller idf of its
// two terms.
func proximity(d *searchDoc, q []queryTerm, lens [numFields]int, st stats, rk *Ranking) float64 {
	at := make(map[string]int, len(q))
	for i, t := range q {
		if !t.added && !t.quoted {
			at[t.term] = i
		}
	}
	type seen struct{ pos, term int }
	var pairs map[[2]int]float64
	var recent []seen
	length, avg := 0, 0.0
	for f := range numFields {
		length += lens[f]
		avg += st.avgLen[f]
		recent = recent[:0]
		for pos, tok := range d[f] {
			if tok == passageBreak { // the next phrasing
				recent = recent[:0]
				continue
			}
			i, ok := at[tok]
			if !ok {
				continue
			}
			near := recent[:0]
			for _, s := range recent {
				dist := pos - s.pos
				if dist > proximityWindow {
					continue
				}
				near = append(near, s)
				if s.term != i {
					if pairs == nil {
						pairs = map[[2]int]float64{}
					}
					pairs[[2]int{min(i, s.term), max(i, s.term)}] += 1 / float64(dist*dist)
				}
			}
			recent = append(near, seen{pos, i})
		}
	}
	if len(pairs) == 0 {
		return 0
	}
	b := rk.FieldB[fieldBody]
	norm := 1.0
	if avg > 0 {
		norm = 1 - b + b*float64(length)/avg
	}
	total := 0.0
	for p, w := range pairs {
		total += min(q[p[0]].idf, q[p[1]].idf) * w / (rk.K1*norm + w)
	}
	return total
}

func bm25f(tf [][numFields]int, lens [numFields]int, q []queryTerm, st stats, rk *Ranking) float64 {
	var norm [numFields]float64
	for f := range numFields {
		norm[f] = 1
		if st.avgLen[f] > 0 {
			norm[f] = 1 - rk.FieldB[f] + rk.FieldB[f]*float64(lens[f])/st.avgLen[f]
		}
	}
	score := 0.0
	for i, t := range q {
		w := 0.0
		for f := range numFields {
			if tf[i][f] > 0 {
				w += rk.FieldWeight[f] * float64(tf[i][f]) / norm[f]
			}
		}
		if w > 0 {
			score += t.weight * t.idf * w / (rk.K1 + w)
		}
	}
	return score
}

// fieldLen is the number of terms of a stored field, passage breaks not
// counted.
func fieldLen(f []string) int {
	n := len(f)
	for _, t := range f {
		if t == passageBreak {
			n--
		}
	}
	return n
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

// feedback expands q with RM3, ranks the candidates again and returns
// the expanded query. The feedback model is the mixture of the best
// FeedbackDocs hits' term distributions (field-weighted term counts over
// the document's length), each weighted by its share of their scores; it
// keeps its FeedbackTerms most likely terms. The expanded query gives each
// term (1-FeedbackWeight) for being in the text plus FeedbackWeight times
// |q| times its feedback probability, so that the scores of an expanded
// query stay comparable with the text's. The expanded query re-ranks the
// candidate pool rather than asking the full-text table again: on both
// public corpora that ranked as well, at a quarter of the cost at 10,000
// leaves. cands must be sorted, best first.
func (db *DB) feedback(ctx context.Context, cands []*candidate, q []queryTerm, st stats, rk *Ranking) ([]queryTerm, error) {
	model := feedbackModel(cands[:min(rk.FeedbackDocs, len(cands))], rk)
	if len(model) == 0 {
		return q, nil
	}
	size := float64(len(q))
	expanded := slices.Clone(q)
	at := map[string]int{}
	for i, t := range expanded {
		at[t.term] = i
		expanded[i].weight = 1 - rk.FeedbackWeight
	}
	var added []queryTerm
	for _, m := range model {
		w := rk.FeedbackWeight * size * m.p
		if i, ok := at[m.term]; ok {
			expanded[i].weight += w
			continue
		}
		added = append(added, queryTerm{term: m.term, weight: w, added: true})
	}
	if len(added) > 0 {
		if err := db.lookupTerms(ctx, added, st); err != nil {
			return nil, err
		}
		if err := db.countTerms(ctx, cands, added); err != nil {
			return nil, err
		}
		expanded = append(expanded, added...)
	}
	rank(cands, expanded, st, rk)
	return expanded, nil
}

// countTerms appends to each candidate's counts those of the terms added,
// reading the candidates' analyzed text again, one row at a time.
func (db *DB) countTerms(ctx context.Context, cands []*candidate, added []queryTerm) error {
	byRid := make(map[int64]*candidate, len(cands))
	rids := make([]any, len(cands))
	for i, c := range cands {
		byRid[c.rid] = c
		rids[i] = c.rid
	}
	rows, err := db.r.QueryContext(ctx, `SELECT rid, title, description, tags, phrasings, body FROM search_docs WHERE rid IN (`+marks(len(rids))+`)`, rids...)
	if err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	for rows.Next() {
		var rid int64
		var fields [numFields]string
		if err := rows.Scan(&rid, &fields[0], &fields[1], &fields[2], &fields[3], &fields[4]); err != nil {
			return fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		c := byRid[rid]
		if c == nil {
			continue
		}
		var doc searchDoc
		for i, f := range fields {
			doc[i] = strings.Fields(f)
		}
		c.tf = append(c.tf, termCounts(&doc, added)...)
		delete(byRid, rid)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	for _, c := range byRid { // gone since the pool was read: no counts
		c.tf = append(c.tf, make([][numFields]int, len(added))...)
	}
	return nil
}

// modelTerm is one term of a feedback model and its probability.
type modelTerm struct {
	term string
	p    float64
}

// feedbackModel returns the RM3 feedback model of the given hits (best
// first), its most likely terms normalised to sum to one.
func feedbackModel(top []*candidate, rk *Ranking) []modelTerm {
	total := 0.0
	for _, c := range top {
		total += c.score
	}
	if total <= 0 {
		return nil
	}
	p := map[string]float64{}
	for _, c := range top {
		if c.doc == nil {
			continue // not among the best when the pool was read
		}
		counts := map[string]float64{}
		length := 0.0
		for f := range numFields {
			for _, t := range c.doc[f] {
				if t == passageBreak {
					continue
				}
				counts[t] += rk.FieldWeight[f]
				length += rk.FieldWeight[f]
			}
		}
		if length == 0 {
			continue
		}
		share := c.score / total
		for t, n := range counts {
			p[t] += share * n / length
		}
	}
	model := make([]modelTerm, 0, len(p))
	for t, v := range p {
		model = append(model, modelTerm{t, v})
	}
	slices.SortFunc(model, func(a, b modelTerm) int {
		return cmp.Or(cmp.Compare(b.p, a.p), strings.Compare(a.term, b.term))
	})
	model = model[:min(rk.FeedbackTerms, len(model))]
	sum := 0.0
	for _, m := range model {
		sum += m.p
	}
	for i := range model {
		model[i].p /= sum
	}
	return model
}

// neighbours raises each node linked (by any edge, either way) to one of
// the NeighbourTop best hits by NeighbourShare of the strongest such
// hit's score, and brings in, scored the same way, a linked node the pool
// did not hold (within the request's filters). An edge naming a retired
// id counts for the live ids .redirects.json gives it.
func (db *DB) neighbours(ctx context.Context, cands []*candidate, q []queryTerm, st stats, rk *Ranking, r Request) ([]*candidate, error) {
	top := cands[:min(rk.NeighbourTop, len(cands))]
	redirects := db.redirects()
	// Each strong hit answers for its own id and every retired id that
	// leads to it.
	strong := map[string]*candidate{}
	for _, c := range top {
		strong[store.IDKey(c.hit.ID)] = c
	}
	for old := range redirects {
		for _, live := range liveIDs(redirects, old) {
			if c := strong[store.IDKey(live)]; c != nil && strong[store.IDKey(old)] == nil {
				strong[store.IDKey(old)] = c
			}
		}
	}
	keys := make([]any, 0, len(strong))
	for k := range strong {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
	in := marks(len(keys))
	rows, err := db.r.QueryContext(ctx, `SELECT src, dst FROM edges WHERE src IN (`+in+`) OR dst IN (`+in+`)`,
		append(slices.Clone(keys), keys...)...)
	if err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	gain := map[string]float64{} // node id key → its boost
	linked := map[string]map[string]bool{}
	link := func(a, b string) {
		c := strong[store.IDKey(b)]
		if c == nil {
			return
		}
		for _, id := range liveIDs(redirects, a) {
			k := store.IDKey(id)
			if k == store.IDKey(c.hit.ID) {
				continue
			}
			if linked[k] == nil {
				linked[k] = map[string]bool{}
			}
			linked[k][c.hit.ID] = true
			gain[k] = max(gain[k], rk.NeighbourShare*c.score)
		}
	}
	for rows.Next() {
		var src, dst string
		if err := rows.Scan(&src, &dst); err != nil {
			rows.Close()
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		link(src, dst)
		link(dst, src)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	if len(gain) == 0 {
		return cands, nil
	}
	have := make(map[int64]*candidate, len(cands))
	byKey := make(map[string]*candidate, len(cands))
	for _, c := range cands {
		have[c.rid] = c
		byKey[store.IDKey(c.hit.ID)] = c
	}
	var missing []any
	for k := range gain {
		if byKey[k] == nil {
			missing = append(missing, k)
		}
	}
	if len(missing) > 0 {
		slices.SortFunc(missing, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		filters, fargs := filterSQL(r)
		where := append([]string{"n.id COLLATE NOCASE IN (" + marks(len(missing)) + ")"}, filters...)
		rows, err := db.r.QueryContext(ctx, `SELECT `+candidateColumns+`
			FROM nodes n JOIN search_docs d ON d.rid = n.rid WHERE `+strings.Join(where, " AND "),
			append(missing, fargs...)...)
		if err != nil {
			return nil, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		noText := *rk
		noText.FeedbackDocs = 0
		more, err := db.scanCandidates(rows, q, st, &noText, false, have)
		if err != nil {
			return nil, err
		}
		for _, c := range more {
			byKey[store.IDKey(c.hit.ID)] = c
		}
		cands = append(cands, more...)
	}
	for k, g := range gain {
		if c := byKey[k]; c != nil {
			c.score += g
			c.hit.Linked = len(linked[k])
		}
	}
	sortCandidates(cands)
	return cands, nil
}

// liveIDs returns the live ids an edge end names: itself, or, for a
// retired id, its successors.
func liveIDs(r store.Redirects, id string) []string {
	if _, retired := r[id]; !retired {
		return []string{id}
	}
	return store.ResolveRedirect(r, id, func(s string) bool { _, retired := r[s]; return !retired })
}

// redirects returns the knowledge base's ledger of retired ids
// (nodes/.redirects.json); none when the handle has no knowledge base or
// the ledger does not parse (kk lint reports that).
func (db *DB) redirects() store.Redirects {
	if db.kb == nil {
		return nil
	}
	r, err := db.kb.ReadRedirects()
	if err != nil {
		return nil
	}
	return r
}

// Relevance gate tunables (see admits).
const (
	// minKnownShare is the least share of the text's idf that the terms
	// some node holds must carry (less in a knowledge base whose own notes
	// carry less: see ownKnownShare).
	minKnownShare = 0.25
	// minShared is the fewest distinct terms of the text the best hit must
	// hold (fewer when the text has fewer).
	minShared = 2
	// ownSample is how many notes ownKnownShare reads, and ownQuantile
	// the share of them (one in ownQuantile) whose known share it leaves
	// below its answer.
	ownSample   = 400
	ownQuantile = 10
)

// admits is the relevance gate of a caller that shows hits unasked (the
// prompt-context hook): whether text, whose question's terms are q, is
// about what the knowledge base holds, given the title of the candidate
// those terms rank first and its counts of them per field (tf). It is
// built to let every answerable prompt through and to stop only the
// prompts plainly about something else, since a missed note costs an
// agent more than five lines it may ignore:
//
//   - a question that names that candidate by its title (namesTitle) is
//     about it;
//   - otherwise the candidate holds at least minShared distinct terms of
//     the question (or all of them, for a shorter one): a single shared
//     word is a coincidence, not an answer;
//   - and the terms some node holds carry at least minKnownShare of the
//     text's idf (knownShare), or, in a knowledge base whose own notes
//     are less known to the rest of it, as much as the least known of
//     them (ownKnownShare): a question about another technology is
//     mostly made of names the knowledge base has never seen, but a
//     young knowledge base of a few notes has never seen most words.
//     A node holds a term here when its own words do (title,
//     description, tags, body): phrasings, written in the everyday words
//     of any question, widen what search finds, not what the knowledge
//     base is about.
//
// On the public corpora no rule refuses an answerable question;
// docs/search.md gives the refusals they make and miss.
func (db *DB) admits(ctx context.Context, text string, q []queryTerm, title string, tf [][numFields]int, st stats) (bool, error) {
	if prose, quoted := splitQuoted(text); quoted != "" && len(queryTerms(prose)) > 0 {
		text = prose // the question, as textTerms reads it
	}
	if namesTitle(text, title) {
		return true, nil
	}
	share, n := knownShare(q, func(t queryTerm) (int, float64) { return t.authored, idf(st.docs, t.authored) })
	if n == 0 || share == 0 {
		return false, nil
	}
	shared := 0
	for _, c := range tf {
		if c != ([numFields]int{}) {
			shared++
		}
	}
	if shared < min(minShared, n) {
		return false, nil
	}
	if share >= minKnownShare {
		return true, nil
	}
	own, err := db.ownKnownShare(ctx, st)
	return share >= own, err
}

// knownShare is the share of the idf of the terms q that the terms some
// node holds carry, with df and idf giving each term's; n is how many
// terms count. A term no node holds has the highest idf; the whole of a
// split identifier that no node holds does not count, its parts do.
func knownShare(q []queryTerm, df func(queryTerm) (int, float64)) (share float64, n int) {
	var total, known float64
	for _, t := range q {
		d, w := df(t)
		if t.whole && d == 0 {
			continue
		}
		n++
		total += w
		if d > 0 {
			known += w
		}
	}
	if total == 0 {
		return 0, n
	}
	return known / total, n
}

// ownKnownShare is the knownShare that all but a tenth of the knowledge
// base's own notes reach (the least, of fewer than 2*ownQuantile notes),
// each note's title and description read as a question naming it would
// be and judged against the other notes' own words (leave one out: a
// term only that note holds is one the rest has never seen), over at most
// ownSample notes, and at most minKnownShare. It is the share an answerable
// question can be expected to reach: in a knowledge base of some size
// nearly every note shares most of its words with the rest, in one of a
// few notes hardly any (of one note, none: 0). The tenth left out keeps
// a few notes with words of their own (a product's name, an error code)
// from opening the gate for every text of a large knowledge base.
func (db *DB) ownKnownShare(ctx context.Context, st stats) (float64, error) {
	rows, err := db.r.QueryContext(ctx, `SELECT title, description FROM nodes ORDER BY rid LIMIT ?`, ownSample)
	if err != nil {
		return 0, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	defer rows.Close()
	var notes [][]queryTerm
	var all []queryTerm
	seen := map[string]bool{}
	for rows.Next() {
		var title, desc string
		if err := rows.Scan(&title, &desc); err != nil {
			return 0, fmt.Errorf("searching index %s: %w", db.Path, err)
		}
		q := queryTerms(title + "\n" + desc)
		notes = append(notes, q)
		for _, t := range q {
			if !seen[t.term] {
				seen[t.term] = true
				all = append(all, t)
			}
		}
	}
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("searching index %s: %w", db.Path, err)
	}
	if err := db.lookupTerms(ctx, all, st); err != nil {
		return 0, err
	}
	df := make(map[string]int, len(all))
	for _, t := range all {
		df[t.term] = t.authored
	}
	others := func(t queryTerm) (int, float64) {
		n := max(df[t.term]-1, 0)
		return n, idf(st.docs-1, n)
	}
	var shares []float64
	for _, q := range notes {
		if share, n := knownShare(q, others); n > 0 {
			shares = append(shares, share)
		}
	}
	if len(shares) == 0 {
		return 0, nil
	}
	slices.Sort(shares)
	return min(minKnownShare, shares[len(shares)/ownQuantile]), nil
}

// namesTitle reports whether question names a leaf by its title: two
// terms standing next to each other in the title stand next to each
// other in the question too, in the same order (stop words aside, as
// everywhere in search). A question naming a leaf's subject ("how does
// the render cache work") asks about it, whatever its other words: in a
// knowledge base whose notes share a narrow vocabulary, the words a
// question wraps its subject in ("work", "watch", "change") are ones no
// note holds, which the known share reads as another subject.
func namesTitle(question, title string) bool {
	pairs := map[[2]string]bool{}
	prev := ""
	analyze(title, func(t string, whole bool) {
		if whole {
			return
		}
		if prev != "" {
			pairs[[2]string{prev, t}] = true
		}
		prev = t
	})
	if len(pairs) == 0 {
		return false
	}
	named := false
	prev = ""
	analyze(question, func(t string, whole bool) {
		if whole || named {
			return
		}
		named = prev != "" && pairs[[2]string{prev, t}]
		prev = t
	})
	return named
}

// questionBest returns the candidate (cands sorted, best first) that the
// text's own terms, q[:own], rank first: the best hit itself, unless
// material pasted beside the question carries terms of its own (see
// textTerms), whose best hit may be the material's rather than the
// question's. The gate judges the question by it.
func questionBest(cands []*candidate, q []queryTerm, own int, st stats, rk *Ranking) *candidate {
	if own == len(q) {
		return cands[0]
	}
	best, top := cands[0], -1.0
	for _, c := range cands {
		// proximity counts the question's terms alone already.
		if s := bm25f(c.tf[:own], c.lens, q[:own], st, rk) + rk.Proximity*c.prox; s > top {
			best, top = c, s
		}
	}
	return best
}

// indiscriminate is the gate's first rule, decided before any candidate
// is scored: the text has no term that tells leaves apart, since even its
// rarest term some leaf holds is held by more than half of the leaves (its
// Robertson–Sparck Jones weight, log((N-n+0.5)/(n+0.5)), is below zero:
// holding it is no evidence of being about it), and by more than budget
// leaves, so that ranking them would score every one of those postings
// (at 100,000 leaves, 0.3 s of a prompt's time for four common words).
// Below that size the gate lets such a text through to admits, since a
// few notes that all hold its words may still be what it asks about.
func indiscriminate(q []queryTerm, st stats, budget int) bool {
	rarest := 0
	for _, t := range q {
		if t.df > 0 && (rarest == 0 || t.df < rarest) {
			rarest = t.df
		}
	}
	return rarest > budget && 2*rarest > st.docs
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
	// unspaced marks one character (a letter and its marks) of a run
	// of a script written without spaces (see analyzeUnspaced).
	unspaced bool
	terms    []string
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
		switch {
		case unicode.IsMark(r) && start < 0 && len(words) > 0 && words[len(words)-1].unspaced && words[len(words)-1].end == i:
			// A mark written on a character of a script written without
			// spaces (Thai's vowel and tone marks) is part of it.
			words[len(words)-1].end += utf8.RuneLen(r)
		case unspacedRune(r):
			// Each character of a run of a script written without
			// spaces is a word of the snippet, and holds the bigrams it
			// is part of (see analyzeUnspaced).
			if start >= 0 {
				flush(i)
			}
			words = append(words, span{start: i, end: i + utf8.RuneLen(r), unspaced: true})
		case r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && start >= 0:
			if start < 0 {
				start = i
			}
		case start >= 0:
			flush(i)
		}
	}
	if start >= 0 {
		flush(len(text))
	}
	if len(words) == 0 {
		return ""
	}
	unspacedTerms(text, words, want)
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
	// A match runs on across touching words (the characters of a word
	// of a script written without spaces): one pair of brackets around
	// it.
	matched := func(i int) bool { return i >= best && i < end && len(words[i].terms) > 0 }
	for i, w := range words[best:end] {
		i += best
		b.WriteString(clip(text[pos:w.start]))
		if matched(i) && !(matched(i-1) && words[i-1].end == w.start) {
			b.WriteString(SnippetOpen)
		}
		b.WriteString(clip(text[w.start:w.end]))
		if matched(i) && !(matched(i+1) && words[i+1].start == w.end) {
			b.WriteString(SnippetClose)
		}
		pos = w.end
	}
	if end < len(words) {
		b.WriteString("…")
	} else {
		b.WriteString(clip(text[pos:]))
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// unspacedTerms sets the terms the characters of scripts written without
// spaces among words hold: the bigram of each character and the next one
// in its run, held by both (analyzeUnspaced), or a lone character itself.
func unspacedTerms(text string, words []span, want map[string]bool) {
	for i := range words {
		if !words[i].unspaced {
			continue
		}
		next := i+1 < len(words) && words[i+1].unspaced && words[i+1].start == words[i].end
		prev := i > 0 && words[i-1].unspaced && words[i-1].end == words[i].start
		switch {
		case next:
			if t := text[words[i].start:words[i+1].end]; want[t] {
				words[i].terms = append(words[i].terms, t)
				words[i+1].terms = append(words[i+1].terms, t)
			}
		case !prev:
			if t := text[words[i].start:words[i].end]; want[t] {
				words[i].terms = append(words[i].terms, t)
			}
		}
	}
}

// clip shortens a word of a snippet, or what separates two, to about
// maxWordLen bytes (a hash pasted whole, a line of dashes), ending it
// with "…": a snippet is a few words of context.
func clip(s string) string {
	if len(s) <= maxWordLen {
		return s
	}
	cut := maxWordLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// shownScore is a hit's score as the faces show it, to three decimals; a
// least score (Request.MinScore) is compared with it, so that a score
// copied from the output keeps its hit.
func shownScore(s float64) float64 { return math.Round(s*1000) / 1000 }
