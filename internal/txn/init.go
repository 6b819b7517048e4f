package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Init creates the knowledge base layout (store.Scaffold) and then, in a
// transaction, the generated index files of whatever tree is there
// (usually none). Existing user content is never overwritten; a second run
// changes nothing.
func Init(ctx context.Context, k *store.KB, opts store.InitOptions) (*store.InitResult, error) {
	res, err := k.Scaffold(ctx, opts)
	if err != nil {
		return nil, err
	}
	old := 0
	done, err := Update(ctx, k, Meta{Source: "cli", Command: opts.Command}, func(tx *Tx) error {
		tx.Regenerate()
		t, err := tx.Tree()
		if err != nil {
			return err
		}
		for _, p := range t.Problems {
			if errors.Is(p, node.ErrOldLayout) {
				old++
			}
		}
		return nil
	})
	if old > 0 {
		// kenkeep, too, only warns: init never touches the leaves.
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d leaf file(s) are in kenkeep's v1 (flat) format, which kk reads only to migrate it; kk skips them until then: `kk migrate status` lists the steps", old))
	}
	if errors.Is(err, store.ErrNeedsMigration) {
		res.Warnings = append(res.Warnings, "index files not generated: "+err.Error())
		return res, nil
	}
	if err != nil {
		return nil, err
	}
	for _, c := range done.Written {
		rel := store.DirName + "/" + c
		if slices.Contains(res.Created, rel) || slices.Contains(res.Updated, rel) {
			continue
		}
		if done.Index != nil && slices.Contains(done.Index.Changed, rel) && !createdBy(done, c) {
			res.Updated = append(res.Updated, rel)
		} else {
			res.Created = append(res.Created, rel)
		}
	}
	res.Unchanged = len(res.Created) == 0 && len(res.Updated) == 0
	return res, nil
}

// createdBy reports whether the transaction created file rel (relative to
// .ai/kenkeep) rather than changing it.
func createdBy(done *Result, rel string) bool { return slices.Contains(done.Created, rel) }
