package reorg

import (
	"context"
	"slices"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// RelinkedLink is one link Relink pointed at its leaf's new home.
type RelinkedLink struct {
	File string `json:"file"` // the linking leaf, relative to the repository root
	Line int    `json:"line"` // the link's line in it before the fix
	From string `json:"from"` // the target as it was
	To   string `json:"to"`   // the target now
}

// RelinkResult is what Relink changed.
type RelinkResult struct {
	Links []RelinkedLink `json:"links"`
	// Leaves are the leaf files rewritten, relative to the repository root.
	Leaves []string `json:"leaves"`
	// Dead are the dead links Relink could not point anywhere: the leaf
	// they named is gone, or was split into several.
	Dead []store.DeadLink `json:"-"`
}

// Relink points every dead link from a leaf to another leaf's path at the
// path the leaf has now: after a note was moved by hand (git mv), a link
// to its old path is found by the id it names (the file name, or the edge
// of a generated Related block), through the redirect ledger when the id
// was retired. Links a person wrote are rewritten in place, in the form
// they had (relative, or bundle-absolute); a leaf whose Related block
// holds a dead link is written again, which renders the block from its
// edges. Everything goes through one transaction, which regenerates the
// index files. Links to a leaf that no longer exists, or to one split
// into several, are left as they are and returned in Dead.
func Relink(ctx context.Context, k *store.KB, cmd string) (*RelinkResult, error) {
	res := &RelinkResult{Links: []RelinkedLink{}, Leaves: []string{}}
	_, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: cmd}, func(tx *txn.Tx) error {
		t, err := tx.Tree()
		if err != nil {
			return err
		}
		if err := store.RequireV3(t); err != nil {
			return err
		}
		redirects, err := tx.Redirects()
		if err != nil {
			return err
		}
		dead, err := k.DeadLinks(t, redirects)
		if err != nil {
			return err
		}
		var froms []string
		for _, d := range dead {
			if !d.Relinkable() {
				res.Dead = append(res.Dead, d)
				continue
			}
			if !slices.Contains(froms, d.From) {
				froms = append(froms, d.From)
			}
			res.Links = append(res.Links, RelinkedLink{File: k.Rel(k.NodePath(d.From)), Line: d.Line, From: d.Target, To: d.NewTarget()})
		}
		for _, from := range froms {
			n, err := tx.LeafAt(from)
			if err != nil {
				return err
			}
			if n == nil {
				continue
			}
			// The body as the transaction read it; links are found again
			// in it, the last first so that earlier offsets hold.
			body := n.Body
			links := k.BodyDeadLinks(t, redirects, from, body)
			for i := len(links) - 1; i >= 0; i-- {
				d := links[i]
				if d.Generated || !d.Relinkable() {
					continue // the Related block is rendered from the edges
				}
				start, end := d.Span()
				body = slices.Concat(body[:start:start], []byte(d.NewTarget()), body[end:])
			}
			n.Body = body
			tx.Put(n)
			res.Leaves = append(res.Leaves, k.Rel(k.NodePath(from)))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
