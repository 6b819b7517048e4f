package txn

import (
	"context"
	"fmt"
	"slices"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
)

// RebuildOptions select what Rebuild does.
type RebuildOptions struct {
	Check bool // compare only; write nothing and take no lock
	Stage bool // git add the written files
}

// Rebuild brings the generated index files (every nodes/**/index.md,
// ENTRY.md, GRAPH.md) in step with the leaves, as a transaction that
// changes no leaf (kk index rebuild). With Check it only reports the files
// that differ. It also removes temporary files in the tree that no journal
// accounts for (left by another tool or an older kk).
func Rebuild(ctx context.Context, k *store.KB, m Meta, opts RebuildOptions) (*indexfiles.RebuildResult, error) {
	if opts.Check {
		return indexfiles.Check(ctx, k)
	}
	done, err := update(ctx, k, m, true, func(tx *Tx) error {
		if _, err := tx.Config(); err != nil { // a broken config is named before anything is written
			return err
		}
		tx.Regenerate()
		return nil
	})
	if err != nil {
		return nil, err
	}
	res := done.Index
	if opts.Stage && (len(res.Changed) > 0 || len(res.Removed) > 0) && gitx.InWorkTree(ctx, k.Root) {
		paths := append(slices.Clone(res.Changed), res.Removed...)
		if err := gitx.Add(ctx, k.Root, paths); err != nil {
			return nil, fmt.Errorf("staging the rebuilt files: %w", err)
		}
		res.Staged = true
	}
	return res, nil
}
