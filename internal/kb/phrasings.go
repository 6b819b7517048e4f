package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/node"
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
// key), under the writer lock, and then brings the index files up to
// date once. Every id must name a leaf and every phrasing must be one
// non-empty line; nothing is written when one does not.
func (k *KB) SetPhrasings(ctx context.Context, phrasings map[string][]string, command string) (*PhrasingsResult, error) {
	ids := make([]string, 0, len(phrasings))
	for id, list := range phrasings {
		if len(list) > MaxPhrasings {
			return nil, fmt.Errorf("%s: %d phrasings; give at most %d", id, len(list), MaxPhrasings)
		}
		for _, p := range list {
			if strings.TrimSpace(p) == "" || strings.ContainsAny(p, "\n\r") {
				return nil, fmt.Errorf("%s: phrasing %q must be non-empty and on one line", id, p)
			}
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	res := &PhrasingsResult{Updated: []string{}, Unchanged: []string{}, Index: []string{}}
	err := k.WithLock(ctx, command, func() error {
		t, err := k.ReadTree(LoadOptions{})
		if err != nil {
			return err
		}
		if err := requireV3(t); err != nil {
			return err
		}
		redirects, err := k.readRedirects()
		if err != nil {
			return err
		}
		resolve := t.LinkResolver(redirects)
		type write struct {
			old  *node.Node
			n    *node.Node
			data []byte
		}
		var writes []write
		for _, id := range ids {
			existing, ok := t.ByID(id)
			if !ok {
				return fmt.Errorf("no leaf has the id %s", id)
			}
			n, err := k.ReadLeaf(existing.Path)
			if err != nil {
				return err
			}
			want := phrasings[id]
			if len(want) == 0 {
				want = nil
			}
			if slices.Equal(n.Phrasings, want) {
				res.Unchanged = append(res.Unchanged, id)
				continue
			}
			n.Phrasings = want
			if err := n.Validate(); err != nil {
				return err
			}
			data, err := n.Render(resolve)
			if err != nil {
				return err
			}
			if len(data) > node.MaxSize {
				return fmt.Errorf("%s: the leaf would be %d bytes; the limit is %d", n.Path, len(data), node.MaxSize)
			}
			writes = append(writes, write{existing, n, data})
		}
		for _, w := range writes {
			if err := atomicfile.Write(k.NodePath(w.n.Path), w.data, 0o644); err != nil {
				return err
			}
			sum := sha256.Sum256(w.data)
			t.put(w.old, w.n, hex.EncodeToString(sum[:]))
			res.Updated = append(res.Updated, w.n.ID)
		}
		if len(writes) == 0 {
			return nil
		}
		rb, err := k.rebuildTree(ctx, t, RebuildOptions{})
		if err != nil {
			return err
		}
		res.Index = rb.Changed
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
