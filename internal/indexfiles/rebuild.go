package indexfiles

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"github.com/kk-project/kk/internal/store"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
)

// RebuildOptions select what Rebuild does.
type RebuildOptions struct {
	Check   bool   // compare only; write nothing
	Stage   bool   // git add the written files
	Command string // recorded in the writer lock
}

// RebuildResult reports what Rebuild found or did. Paths are relative to
// the repository root.
type RebuildResult struct {
	NodeCount        int      `json:"node_count"`
	NodesHash        string   `json:"nodes_hash"`
	Folders          int      `json:"folders"`
	Changed          []string `json:"changed"`
	Removed          []string `json:"removed"`
	MissingSummaries []string `json:"missing_summaries"`
	Staged           bool     `json:"staged"`
}

// writeConcurrency is how many generated files Rebuild writes at once.
const writeConcurrency = 8

// Rebuild regenerates every index file from the leaves. With Check it only
// reports the files that differ.
func Rebuild(ctx context.Context, k *store.KB, opts RebuildOptions) (*RebuildResult, error) {
	if opts.Check {
		return rebuild(ctx, k, opts)
	}
	var res *RebuildResult
	err := k.WithLock(ctx, opts.Command, func() error {
		var err error
		res, err = rebuild(ctx, k, opts)
		return err
	})
	return res, err
}

// RebuildLocked is Rebuild for a caller that already holds the writer lock.
func RebuildLocked(ctx context.Context, k *store.KB, opts RebuildOptions) (*RebuildResult, error) {
	return rebuild(ctx, k, opts)
}

func rebuild(ctx context.Context, k *store.KB, opts RebuildOptions) (*RebuildResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	t, err := k.ReadTree(store.LoadOptions{NoSave: opts.Check})
	if err != nil {
		return nil, err
	}
	return RebuildTree(ctx, k, t, opts)
}

// rebuildTree regenerates the index files of t, a tree the caller read (and
// possibly changed in memory to match what it wrote) under the lock.
func RebuildTree(ctx context.Context, k *store.KB, t *store.Tree, opts RebuildOptions) (*RebuildResult, error) {
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	nodesHash := NodesHash(t)
	key := genKey(k, nodesHash)
	c := loadGenCache(k)
	if c.upToDate(k, key, t) {
		missing := c.missing
		if missing == nil {
			missing = []string{}
		}
		return &RebuildResult{NodeCount: len(t.Leaves), NodesHash: "sha256:" + nodesHash, Folders: len(c.folders),
			MissingSummaries: missing, Changed: []string{}, Removed: []string{}}, nil
	}
	gen, err := generateFor(k, t, c.freshFunc(k))
	if err != nil {
		return nil, err
	}
	res := &RebuildResult{NodeCount: len(t.Leaves), NodesHash: "sha256:" + gen.NodesHash, Folders: len(gen.Folders),
		MissingSummaries: gen.MissingSummaries, Changed: []string{}, Removed: []string{}}
	if res.MissingSummaries == nil {
		res.MissingSummaries = []string{}
	}
	names := make([]string, 0, len(gen.Files))
	for name := range gen.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	var changed []string
	for _, name := range names {
		old, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(name)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		if err == nil && bytes.Equal(old, gen.Files[name]) {
			continue
		}
		changed = append(changed, name)
	}
	stale := staleIndexes(t, gen)
	for _, name := range changed {
		res.Changed = append(res.Changed, filepath.ToSlash(filepath.Join(store.DirName, name)))
	}
	for _, d := range stale {
		res.Removed = append(res.Removed, filepath.ToSlash(filepath.Join(store.DirName, "nodes", d, "index.md")))
	}
	if opts.Check {
		return res, nil
	}
	// Each file is replaced atomically; doing several at once overlaps
	// their fsyncs, which dominate a cold rebuild of a large tree.
	writeErrs := make([]error, len(changed))
	store.ParallelN(writeConcurrency, len(changed), func(i int) {
		p := filepath.Join(k.Dir, filepath.FromSlash(changed[i]))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			writeErrs[i] = err
			return
		}
		writeErrs[i] = atomicfile.Write(p, gen.Files[changed[i]], 0o644)
	})
	if err := errors.Join(writeErrs...); err != nil {
		return nil, err
	}
	for _, d := range stale {
		dir := filepath.Join(k.NodesDir(), filepath.FromSlash(d))
		if err := os.Remove(filepath.Join(dir, "index.md")); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		os.Remove(dir) // only succeeds when the folder is now empty
	}
	saveGenCache(k, key, gen, c)
	if opts.Stage && (len(res.Changed) > 0 || len(res.Removed) > 0) && gitx.InWorkTree(ctx, k.Root) {
		paths := append(slices.Clone(res.Changed), res.Removed...)
		if err := gitx.Add(ctx, k.Root, paths); err != nil {
			return nil, fmt.Errorf("staging the rebuilt files: %w", err)
		}
		res.Staged = true
	}
	return res, nil
}

// generateFor renders the generated files of t with the current summaries.
func generateFor(k *store.KB, t *store.Tree, fresh func(file, key string) bool) (*Generated, error) {
	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, err
	}
	if s := k.EntrySummary(); s != "" {
		summaries[""] = s
	}
	return generate(t, summaries, fresh)
}

// staleIndexes lists folders holding a generated index.md but no leaves
// anywhere below them.
func staleIndexes(t *store.Tree, gen *Generated) []string {
	live := map[string]bool{}
	for _, d := range gen.Folders {
		live[d] = true
	}
	var out []string
	for d := range t.IndexDirs {
		if !live[d] {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}
