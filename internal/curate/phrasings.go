package curate

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// MaxPhrasings bounds the phrasings of one leaf.
const MaxPhrasings = 12

// PhrasingsResult says what SetPhrasings did.
type PhrasingsResult struct {
	Updated   []string `json:"updated"`   // ids whose leaves were rewritten
	Unchanged []string `json:"unchanged"` // ids that already had these phrasings
	Index     []string `json:"index_changed"`
}

// SetPhrasings gives each leaf named in phrasings (id → phrasings) its
// kk_phrasings, replacing the ones it had (an empty list removes the
// key), in one store transaction that also brings the index files up to
// date. Every id must name a leaf and every phrasing must be one
// non-empty line; nothing is written when one does not.
func SetPhrasings(ctx context.Context, k *store.KB, phrasings map[string][]string, command string) (*PhrasingsResult, error) {
	ids := make([]string, 0, len(phrasings))
	for id, list := range phrasings {
		if len(list) > MaxPhrasings {
			return nil, fmt.Errorf("%s: %d phrasings; give at most %d", id, len(list), MaxPhrasings)
		}
		for _, p := range list {
			if strings.TrimSpace(p) == "" || strings.ContainsAny(p, "\n\r\x00") {
				return nil, fmt.Errorf("%s: phrasing %q must be non-empty and on one line", id, p)
			}
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	res := &PhrasingsResult{Updated: []string{}, Unchanged: []string{}, Index: []string{}}
	done, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: command}, func(tx *txn.Tx) error {
		t, err := tx.Tree()
		if err != nil {
			return err
		}
		if err := store.RequireV3(t); err != nil {
			return err
		}
		for _, id := range ids {
			n, err := tx.Leaf(id)
			if err != nil {
				return err
			}
			if n == nil {
				return fmt.Errorf("no leaf has the id %s", id)
			}
			want := phrasings[id]
			if len(want) == 0 {
				want = nil
			}
			if slices.Equal(n.Phrasings, want) {
				res.Unchanged = append(res.Unchanged, n.ID)
				continue
			}
			n.Phrasings = want
			if err := n.Validate(); err != nil {
				return err
			}
			tx.Put(n)
			res.Updated = append(res.Updated, n.ID)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		res.Index = done.Index.Changed
	}
	return res, nil
}
