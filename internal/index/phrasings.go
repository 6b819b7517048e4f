package index

import (
	"context"
	"fmt"
)

// Phrasings (kk_phrasings: how developers ask for a leaf, in their own
// words) are how search finds a note from a question that shares few of
// its words. Every path that writes a leaf with an agent at hand writes
// them; a knowledge base made before, imported, or written by hand gets
// them from the kk-phrasings skill. Status, doctor, session start and the
// importers say when too many leaves have none, by one rule (Low).

// PhrasingsLowShare is the share of leaves without phrasings from which kk
// suggests the kk-phrasings backfill.
const PhrasingsLowShare = 0.25

// BackfillHint says how to write the missing phrasings.
const BackfillHint = "run the kk-phrasings skill in your coding agent (/kk-phrasings) to write them; `kk node phrasings` lists the leaves without"

// PhrasingCounts counts the leaves and those without kk_phrasings.
type PhrasingCounts struct {
	Leaves  int `json:"leaves"`
	Without int `json:"without"`
}

// Low reports whether enough leaves lack phrasings to suggest the
// backfill.
func (p PhrasingCounts) Low() bool {
	return p.Without > 0 && float64(p.Without) >= PhrasingsLowShare*float64(p.Leaves)
}

// Summary is "N of M leaves (P%) have no kk_phrasings".
func (p PhrasingCounts) Summary() string {
	pct := 0
	if p.Leaves > 0 {
		pct = (100*p.Without + p.Leaves/2) / p.Leaves
	}
	return fmt.Sprintf("%d of %d leaves (%d%%) have no kk_phrasings", p.Without, p.Leaves, pct)
}

// PhrasingCounts counts the leaves (not extracted entities) the index
// holds, and those without kk_phrasings, as the index last committed them.
func (db *DB) PhrasingCounts(ctx context.Context) (PhrasingCounts, error) {
	var p PhrasingCounts
	err := db.r.QueryRowContext(ctx, `SELECT count(*), coalesce(sum(d.len_phrasings = 0), 0)
		FROM nodes n JOIN search_docs d ON d.rid = n.rid WHERE n.origin = ''`).Scan(&p.Leaves, &p.Without)
	if err != nil {
		return p, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	return p, nil
}
