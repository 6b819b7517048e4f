package index

import (
	"context"
	"fmt"
	"strconv"
	"strings"

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

// newSearchDoc analyzes the authored text of a node.
func newSearchDoc(title, description string, tags, phrasings []string, body string) *searchDoc {
	var d searchDoc
	d[fieldTitle] = terms(title)
	d[fieldDescription] = terms(description)
	d[fieldTags] = terms(strings.Join(tags, "\n"))
	for i, p := range phrasings {
		if i > 0 {
			d[fieldPhrasings] = append(d[fieldPhrasings], passageBreak)
		}
		d[fieldPhrasings] = append(d[fieldPhrasings], terms(p)...)
	}
	d[fieldBody] = terms(authoredText(body))
	return &d
}

// leafSearchDoc analyzes a leaf. Its phrasings (kk_phrasings: how a
// developer would ask for it, in their own words) are a field of their
// own: document expansion at write time, so that a prompt sharing no word
// with the leaf's title can still find it.
func leafSearchDoc(n *node.Node) *searchDoc {
	return newSearchDoc(n.Title, n.Description, n.Tags, n.Phrasings, string(n.Body))
}

// passageBreak separates the phrasings of a leaf in its stored terms; the
// full-text table, which splits on punctuation, never sees it.
const passageBreak = "|"

// args are the values of an INSERT INTO search_docs after rid.
func (d *searchDoc) args() []any {
	out := make([]any, 0, 2*numFields)
	for _, f := range d {
		n := 0
		for _, t := range f {
			if t != passageBreak {
				n++
			}
		}
		out = append(out, n)
	}
	for _, f := range d {
		out = append(out, strings.Join(f, " "))
	}
	return out
}

const insertSearchDoc = `INSERT INTO search_docs(rid, len_title, len_description, len_tags, len_phrasings, len_body,
	title, description, tags, phrasings, body) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// putSearchDoc writes the analyzed text of the node at rid, replacing
// what it had.
func (w *writer) putSearchDoc(rid int64, d *searchDoc, replace bool) {
	if replace {
		w.exec(`DELETE FROM search_docs WHERE rid = ?`, rid)
	}
	w.exec(insertSearchDoc, append([]any{rid}, d.args()...)...)
}

// setSearchStats records the number of searchable nodes and the total
// length of each field, which ranking needs for its length normalisation.
func (w *writer) setSearchStats() {
	if w.err != nil {
		return
	}
	var n int64
	var tot [numFields]float64
	w.err = w.tx.QueryRowContext(w.ctx, `SELECT count(*), total(len_title), total(len_description), total(len_tags), total(len_phrasings), total(len_body)
		FROM search_docs INDEXED BY search_docs_lens`).Scan(&n, &tot[0], &tot[1], &tot[2], &tot[3], &tot[4])
	if w.err != nil {
		return
	}
	parts := []string{strconv.FormatInt(n, 10)}
	for _, t := range tot {
		parts = append(parts, strconv.FormatInt(int64(t), 10))
	}
	w.setMeta("search_stats", strings.Join(parts, " "))
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
