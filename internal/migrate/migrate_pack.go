package migrate

import (
	"context"
	"fmt"
	"github.com/kk-project/kk/internal/store"
)

// MigrateCopy converts, in place, the v2 leaves of k when k is a private
// copy of a tree that nothing else uses, such as a knowledge pack unpacked
// for import. It is the conversion of MigrateOKFv3 (the same leaf rewrite,
// read-back check and harvest of the old index.md summaries into
// FOLDER_SUMMARIES.md, whose existing entries win) without the writer lock
// and without regenerating the index files, which the caller does not use.
// Every converted file is computed and checked before the first one is
// written. A copy with no v2 leaves is left alone and reported as
// Noop.
func MigrateCopy(ctx context.Context, k *store.KB) (*MigrateResult, error) {
	res := &MigrateResult{Collisions: []Collision{}, IndexChanged: []string{}, IndexRemoved: []string{}}
	v, err := DetectSchemaVersion(k)
	if err != nil {
		return nil, err
	}
	res.Detected = v
	switch {
	case v == 0 || v == TargetSchemaVersion:
		res.Noop = true
		return res, nil
	case v > TargetSchemaVersion:
		_, err := PlanMigration(v)
		return nil, err
	case v < 2:
		return nil, fmt.Errorf("%w: the tree is at schema version %d (kenkeep's flat layout), and only version 2 converts here", ErrStepOrder, v)
	}
	t, err := k.ReadTree(store.LoadOptions{})
	if err == nil {
		err = t.Err() // a pack converts whole or not at all
	}
	if err != nil {
		return nil, err
	}
	files, err := planOKFv3(k, t, t.Resolve, res)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for _, f := range files {
		if err := writeFile(f.Abs, f.data, 0o644); err != nil {
			return nil, err
		}
	}
	return res, nil
}
