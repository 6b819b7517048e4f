package txn

import (
	"context"
	"fmt"
	"slices"
	"strings"

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
	if !gitx.InWorkTree(ctx, k.Root) {
		return res, nil
	}
	// A generated file git holds in conflict: a modify/delete one (a
	// folder's index.md one side removed with the folder and the other
	// regenerated), which no merge driver sees, or one a merge made where
	// the driver is not set up. The files are current now; only git's
	// mark is left, which staging them clears.
	unmerged := unmergedGenerated(ctx, k)
	if !opts.Stage {
		res.Unmerged = unmerged
		return res, nil
	}
	paths := append(slices.Clone(res.Changed), res.Removed...)
	for _, p := range append(unmerged, changedGenerated(ctx, k)...) {
		if !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	if len(paths) > 0 {
		if err := gitx.Add(ctx, k.Root, paths); err != nil {
			return nil, fmt.Errorf("staging the rebuilt files: %w", err)
		}
		res.Staged = true
	}
	return res, nil
}

// unmergedGenerated lists the generated files of k that git's index holds
// in conflict, relative to k.Root.
func unmergedGenerated(ctx context.Context, k *store.KB) []string {
	out, err := gitx.Read(ctx, k.Root, "ls-files", "-u", "-z", "--", store.DirName)
	if err != nil {
		return nil
	}
	var paths []string
	for _, rec := range strings.Split(string(out), "\x00") {
		// <mode> <object> <stage>\t<path>
		_, p, ok := strings.Cut(rec, "\t")
		if ok && generatedPath(k, p) && !slices.Contains(paths, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// changedGenerated lists the generated files of k whose work-tree text
// (or absence) differs from git's index, relative to k.Root: a rebuild
// without --stage, or an editor, changed them since they were staged.
func changedGenerated(ctx context.Context, k *store.KB) []string {
	out, err := gitx.Read(ctx, k.Root, "diff", "--relative", "--name-only", "--no-renames", "-z", "--", store.DirName)
	if err != nil {
		return nil
	}
	var paths []string
	for _, p := range strings.Split(string(out), "\x00") {
		if p != "" && generatedPath(k, p) {
			paths = append(paths, p)
		}
	}
	return paths
}

// generatedPath reports whether p (relative to k.Root, slash-separated)
// is one of the files kk generates: ENTRY.md, GRAPH.md, a folder's
// index.md, but not a note a person named index.md (store.HandIndex).
func generatedPath(k *store.KB, p string) bool {
	rel, ok := strings.CutPrefix(p, store.DirName+"/")
	if !ok {
		return false
	}
	if rel == "ENTRY.md" || rel == "GRAPH.md" {
		return true
	}
	leaf, ok := strings.CutPrefix(rel, "nodes/")
	if !ok || (leaf != "index.md" && !strings.HasSuffix(leaf, "/index.md")) {
		return false
	}
	return store.HandIndex(k, leaf, nil) == nil
}
