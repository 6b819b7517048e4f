package checks

import (
	"context"
	"slices"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
)

// staleGenerated lists the generated files (paths relative to the
// repository root) that differ from what the leaves and
// FOLDER_SUMMARIES.md generate, or that no folder with leaves accounts for
// any more, as kk index rebuild --check finds them. ENTRY.md's nodes_hash
// is a hash of the leaves alone: it misses a folder summary written by
// hand and a generated file edited by hand, which CI's --check refuses.
// It lists nothing when the comparison cannot be made (a broken config or
// v2 leaves, which the other checks report).
func staleGenerated(ctx context.Context, k *store.KB) []string {
	res, err := indexfiles.Check(ctx, k)
	if err != nil {
		return nil
	}
	files := append(slices.Clone(res.Changed), res.Removed...)
	slices.Sort(files)
	return files
}
