package txn

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Init creates the knowledge base's setup (store.Scaffold) and then, in a
// transaction under the same hold of the writer lock, FOLDER_SUMMARIES.md
// and the redirect ledger nodes/.redirects.json when there are none
// (stageSetup), and the generated
// index files of whatever tree is there (usually none). Existing user
// content is never overwritten; a second run changes nothing. A tree that
// still needs migrating gets its summaries file all the same, and a
// warning instead of index files.
func Init(ctx context.Context, k *store.KB, opts store.InitOptions) (*store.InitResult, error) {
	if err := k.CanScaffold(opts); err != nil {
		return nil, err
	}
	meta := Meta{Source: "cli", Command: opts.Command}
	// One hold of the lock for the scaffold and the transaction after
	// it: no other writer sees the setup half made.
	release, err := acquire(ctx, k, meta.Command, 0)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := k.Scaffold(opts)
	if err != nil {
		return nil, err
	}
	old := 0
	done, err := updateLocked(ctx, k, meta, false, func(tx *Tx) error {
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
		return stageSetup(tx)
	})
	if old > 0 {
		// kenkeep, too, only warns: init never touches the leaves.
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d leaf file(s) are in kenkeep's v1 (flat) format, which kk reads only to migrate it; kk skips them until then: `kk migrate status` lists the steps", old))
	}
	if errors.Is(err, store.ErrNeedsMigration) {
		res.Warnings = append(res.Warnings, "index files not generated: "+err.Error())
		done, err = updateLocked(ctx, k, meta, false, stageSetup)
	}
	if err != nil {
		return nil, err
	}
	for _, c := range done.Written {
		rel := store.DirName + "/" + c
		if slices.Contains(res.Created, rel) || slices.Contains(res.Updated, rel) {
			continue
		}
		if createdBy(done, c) {
			res.Created = append(res.Created, rel)
		} else {
			res.Updated = append(res.Updated, rel)
		}
	}
	res.Unchanged = len(res.Created) == 0 && len(res.Updated) == 0
	return res, nil
}

// summariesFile is FOLDER_SUMMARIES.md, relative to .ai/kenkeep.
const summariesFile = "FOLDER_SUMMARIES.md"

// stageSummaries stages an empty FOLDER_SUMMARIES.md when the knowledge
// base has none; one that exists is the user's and stays as it is.
func stageSummaries(tx *Tx) error {
	old, err := tx.StagedFile(summariesFile)
	if err != nil || old != nil {
		return err
	}
	data, err := store.RenderSummaries(store.Summaries{})
	if err != nil {
		return err
	}
	tx.WriteFile(summariesFile, data)
	return nil
}

// ledgerFile is the redirect ledger, relative to .ai/kenkeep.
const ledgerFile = "nodes/.redirects.json"

// stageSetup stages the files of the setup a transaction writes: an empty
// FOLDER_SUMMARIES.md and an empty redirect ledger, each when the
// knowledge base has none.
//
// The ledger is there from the start so that no rename or delete commit
// creates it: git sends a file to a merge driver only when both sides hold
// it, so a revert of the commit that created it, or a rebase or
// cherry-pick that moves a later rename before it, stopped on a
// modify/delete conflict there instead of going through kk-redirects.
func stageSetup(tx *Tx) error {
	if err := stageSummaries(tx); err != nil {
		return err
	}
	old, err := tx.StagedFile(ledgerFile)
	if err != nil || old != nil {
		return err
	}
	tx.SetRedirects(store.Redirects{})
	return nil
}

// createdBy reports whether the transaction created file rel (relative to
// .ai/kenkeep) rather than changing it.
func createdBy(done *Result, rel string) bool { return slices.Contains(done.Created, rel) }
