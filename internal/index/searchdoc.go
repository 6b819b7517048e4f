package index

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/node"
)

// Searchable fields of a node, in the column order of search_docs and
// search_fts.
const (
	fieldTitle = iota
	fieldDescription
	fieldTags
	fieldPhrasings
	fieldBody
	numFields
)

// searchDoc is a node's analyzed text: the terms of each field.
type searchDoc [numFields][]string

// docText is a node's analyzed text and what an embedding is computed
// from.
type docText struct {
	searchDoc
	phrasings []string // as written
	embed     string   // the text a vector is computed from (embedText)
}

// maxEmbedChars bounds the text of a node sent for embedding.
const maxEmbedChars = 4000

// embedText is what a node's vector is computed from: title,
// description, phrasings and the start of the authored body.
func embedText(title, description string, phrasings []string, body string) string {
	var b strings.Builder
	b.WriteString(title)
	for _, s := range append([]string{description}, phrasings...) {
		if s = strings.TrimSpace(s); s != "" {
			b.WriteString("\n" + s)
		}
	}
	if len(body) > 2*maxEmbedChars {
		body = body[:2*maxEmbedChars] // only the start is kept below
	}
	if body = strings.Join(strings.Fields(body), " "); body != "" {
		b.WriteString("\n\n" + body)
	}
	s := b.String()
	if len(s) > maxEmbedChars {
		s = s[:maxEmbedChars]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
	}
	return s
}

// newSearchDoc analyzes the authored text of a node.
func newSearchDoc(title, description string, tags, phrasings []string, body string) *docText {
	authored := authoredText(body)
	d := docText{phrasings: phrasings, embed: embedText(title, description, phrasings, authored)}
	d.searchDoc[fieldTitle] = terms(title)
	d.searchDoc[fieldDescription] = terms(description)
	d.searchDoc[fieldTags] = terms(strings.Join(tags, "\n"))
	for i, p := range phrasings {
		if i > 0 {
			d.searchDoc[fieldPhrasings] = append(d.searchDoc[fieldPhrasings], passageBreak)
		}
		d.searchDoc[fieldPhrasings] = append(d.searchDoc[fieldPhrasings], terms(p)...)
	}
	d.searchDoc[fieldBody] = terms(authored)
	return &d
}

// leafSearchDoc analyzes a leaf. Its phrasings (kk_phrasings: how a
// developer would ask for it, in their own words) are a field of their
// own: document expansion at write time, so that a prompt sharing no word
// with the leaf's title can still find it.
func leafSearchDoc(n *node.Node) *docText {
	return newSearchDoc(n.Title, n.Description, n.Tags, n.Phrasings, string(n.Body))
}

// passageBreak separates the phrasings of a leaf in its stored terms; the
// full-text table, which splits on punctuation, never sees it.
const passageBreak = "|"

// lens are the lengths of the fields (len_title, ...): their terms, not
// counting passage breaks.
func (d *docText) lens() [numFields]int64 {
	var out [numFields]int64
	for i, f := range d.searchDoc {
		for _, t := range f {
			if t != passageBreak {
				out[i]++
			}
		}
	}
	return out
}

// args are the values of an INSERT INTO search_docs after rid.
func (d *docText) args() []any {
	out := make([]any, 0, 2*numFields+1)
	for _, n := range d.lens() {
		out = append(out, n)
	}
	for _, f := range d.searchDoc {
		out = append(out, strings.Join(f, " "))
	}
	return append(out, strings.Join(d.phrasings, "\n"), embedSHA(d.embed))
}

// embedSHA keys a node's vector to the text it was computed from.
func embedSHA(text string) string {
	sum := sha256.Sum256([]byte(text))
	return hex.EncodeToString(sum[:16])
}

const insertSearchDoc = `INSERT INTO search_docs(rid, len_title, len_description, len_tags, len_phrasings, len_body,
	title, description, tags, phrasings, body, raw_phrasings, embed_sha) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// putSearchDoc writes the analyzed text of the node at rid, replacing
// what it had.
func (w *writer) putSearchDoc(rid int64, d *docText, replace bool) {
	if replace {
		w.forgetDocs(`?`, rid)
		w.forgetTerms(`?`, rid)
		w.exec(`DELETE FROM search_docs WHERE rid = ?`, rid)
	}
	w.exec(insertSearchDoc, append([]any{rid}, d.args()...)...)
	w.countTerms(d.searchDoc, 1)
	if w.delta != nil {
		w.delta.docs++
		for i, n := range d.lens() {
			w.delta.lens[i] += n
		}
	}
}

// docStats are the corpus figures search_stats records: the number of
// search docs and the total length of each field.
type docStats struct {
	docs int64
	lens [numFields]int64
}

// String is the value of search_stats: the figures separated by spaces.
func (s docStats) String() string {
	parts := []string{strconv.FormatInt(s.docs, 10)}
	for _, n := range s.lens {
		parts = append(parts, strconv.FormatInt(n, 10))
	}
	return strings.Join(parts, " ")
}

// maxExactTotal bounds the figures a delta may produce: the full count
// sums in floating point (total()), exact for integers up to 2^53.
const maxExactTotal = 1 << 53

// plus returns s changed by delta (nil: no delta), and false when there
// is none or a figure leaves the range the full count gives exactly: the
// caller then counts the corpus again.
func (s docStats) plus(delta *docStats) (docStats, bool) {
	if delta == nil {
		return s, false
	}
	s.docs += delta.docs
	ok := s.docs >= 0 && s.docs <= maxExactTotal
	for i, n := range delta.lens {
		s.lens[i] += n
		ok = ok && s.lens[i] >= 0 && s.lens[i] <= maxExactTotal
	}
	return s, ok
}

// parseDocStats reads a value of search_stats; false unless it is exactly
// what String writes.
func parseDocStats(v string) (docStats, bool) {
	var s docStats
	f := strings.Split(v, " ")
	if len(f) != numFields+1 {
		return s, false
	}
	for i, x := range f {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil || n < 0 || n > maxExactTotal {
			return s, false
		}
		if i == 0 {
			s.docs = n
		} else {
			s.lens[i-1] = n
		}
	}
	return s, s.String() == v
}

// forgetDocs subtracts from w.delta (when the writer keeps one) the search
// docs of the nodes whose rid the SQL rids selects, which the caller is
// about to delete.
func (w *writer) forgetDocs(rids string, args ...any) {
	if w.delta == nil || w.err != nil {
		return
	}
	s := w.prepare(`SELECT count(*), coalesce(sum(len_title), 0), coalesce(sum(len_description), 0), coalesce(sum(len_tags), 0),
		coalesce(sum(len_phrasings), 0), coalesce(sum(len_body), 0) FROM search_docs WHERE rid IN (` + rids + `)`)
	if s == nil {
		return
	}
	var gone docStats
	if w.err = s.QueryRowContext(w.ctx, args...).Scan(&gone.docs, &gone.lens[0], &gone.lens[1], &gone.lens[2], &gone.lens[3], &gone.lens[4]); w.err != nil {
		return
	}
	w.delta.docs -= gone.docs
	for i, n := range gone.lens {
		w.delta.lens[i] -= n
	}
}

// setSearchStats records the number of searchable nodes and the total
// length of each field, which ranking needs for its length normalisation,
// counting them over every search doc.
func (w *writer) setSearchStats() {
	if w.err != nil {
		return
	}
	var s docStats
	var tot [numFields]float64
	w.err = w.tx.QueryRowContext(w.ctx, `SELECT count(*), total(len_title), total(len_description), total(len_tags), total(len_phrasings), total(len_body)
		FROM search_docs INDEXED BY search_docs_lens`).Scan(&s.docs, &tot[0], &tot[1], &tot[2], &tot[3], &tot[4])
	if w.err != nil {
		return
	}
	for i, t := range tot {
		s.lens[i] = int64(t)
	}
	w.setMeta("search_stats", s.String())
}

// Unphrased is a leaf without kk_phrasings.
type Unphrased struct {
	ID    string `json:"id"`
	Path  string `json:"path"` // relative to nodes/
	Title string `json:"title"`
}

// Unphrased lists up to limit leaves (not extracted entities) that have no
// kk_phrasings, by path.
func (db *DB) Unphrased(ctx context.Context, limit int) ([]Unphrased, int, error) {
	var total int
	if err := db.r.QueryRowContext(ctx, `SELECT count(*) FROM nodes n JOIN search_docs d ON d.rid = n.rid
		WHERE n.origin = '' AND d.len_phrasings = 0`).Scan(&total); err != nil {
		return nil, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	rows, err := db.r.QueryContext(ctx, `SELECT n.id, n.path, n.title FROM nodes n JOIN search_docs d ON d.rid = n.rid
		WHERE n.origin = '' AND d.len_phrasings = 0 ORDER BY n.path LIMIT ?`, limit)
	if err != nil {
		return nil, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	defer rows.Close()
	out := []Unphrased{}
	for rows.Next() {
		var u Unphrased
		if err := rows.Scan(&u.ID, &u.Path, &u.Title); err != nil {
			return nil, 0, fmt.Errorf("reading index %s: %w", db.Path, err)
		}
		out = append(out, u)
	}
	return out, total, rows.Err()
}

// countTerms adds n to the change of search_df for each distinct term of
// a search doc's fields: to its docs, and to its authored count when a
// field other than the phrasings holds it.
func (w *writer) countTerms(fields [numFields][]string, n int) {
	if w.df == nil {
		w.df, w.dfSeen = map[string]dfCounts{}, map[string]uint8{}
	}
	clear(w.dfSeen)
	for f, terms := range fields {
		bit := seenAuthored
		if f == fieldPhrasings {
			bit = seenPhrasings
		}
		for _, t := range terms {
			if t == passageBreak || t == "" {
				continue
			}
			seen := w.dfSeen[t]
			if seen&bit != 0 {
				continue
			}
			w.dfSeen[t] = seen | bit
			c := w.df[t]
			if seen == 0 {
				c.docs += n
			}
			if bit == seenAuthored {
				c.authored += n
			}
			w.df[t] = c
		}
	}
}

// dfCounts is one term's counts in search_df, or a change of them.
type dfCounts struct{ docs, authored int }

// The bits of countTerms' record of where a doc holds a term.
const (
	seenAuthored uint8 = 1 << iota
	seenPhrasings
)

// forgetTerms subtracts from the change of search_df the terms of the
// search docs of the nodes whose rid the SQL rids selects, which the
// caller is about to delete or replace. A stored field is its terms
// joined by spaces (docText.args).
func (w *writer) forgetTerms(rids string, args ...any) {
	if w.err != nil {
		return
	}
	s := w.prepare(`SELECT title, description, tags, phrasings, body FROM search_docs WHERE rid IN (` + rids + `)`)
	if s == nil {
		return
	}
	rows, err := s.QueryContext(w.ctx, args...)
	if err != nil {
		w.err = err
		return
	}
	defer rows.Close()
	var text [numFields]string
	for rows.Next() {
		if w.err = rows.Scan(&text[0], &text[1], &text[2], &text[3], &text[4]); w.err != nil {
			return
		}
		var fields [numFields][]string
		for i, t := range text {
			fields[i] = strings.Split(t, " ")
		}
		w.countTerms(fields, -1)
	}
	w.err = rows.Err()
}

// flushDF writes the writer's change of search_df: each term's counts
// moved by their change, the terms no doc holds any more removed.
func (w *writer) flushDF() {
	if w.err != nil || len(w.df) == 0 {
		return
	}
	terms := slices.Sorted(maps.Keys(w.df))
	for _, t := range terms {
		switch c := w.df[t]; {
		case c == dfCounts{}:
		case c.docs >= 0 && c.authored >= 0:
			w.exec(`INSERT INTO search_df(term, docs, authored) VALUES (?, ?, ?)
				ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs, authored = authored + excluded.authored`, t, c.docs, c.authored)
		default:
			w.exec(`UPDATE search_df SET docs = docs + ?, authored = authored + ? WHERE term = ?`, c.docs, c.authored, t)
			w.exec(`DELETE FROM search_df WHERE term = ? AND docs <= 0`, t)
		}
	}
	w.df = nil
}
