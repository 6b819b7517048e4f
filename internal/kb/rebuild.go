package kb

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/progress"
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

// WithLock runs fn while holding the writer lock.
func (k *KB) WithLock(ctx context.Context, cmd string, fn func() error) error {
	l, err := lock.Acquire(ctx, k.LockPath(), lock.Wait, cmd)
	if err != nil {
		return err
	}
	defer l.Release()
	return fn()
}

// Rebuild regenerates every index file from the leaves. With Check it only
// reports the files that differ.
func (k *KB) Rebuild(ctx context.Context, opts RebuildOptions) (*RebuildResult, error) {
	if opts.Check {
		return k.rebuild(ctx, opts)
	}
	var res *RebuildResult
	err := k.WithLock(ctx, opts.Command, func() error {
		var err error
		res, err = k.rebuild(ctx, opts)
		return err
	})
	return res, err
}

// RebuildLocked is Rebuild for a caller that already holds the writer lock.
func (k *KB) RebuildLocked(ctx context.Context, opts RebuildOptions) (*RebuildResult, error) {
	return k.rebuild(ctx, opts)
}

func (k *KB) rebuild(ctx context.Context, opts RebuildOptions) (*RebuildResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	task := progress.Start(ctx, "reading leaves", 0)
	t, err := k.ReadTree(LoadOptions{NoSave: opts.Check, Progress: task})
	task.Done()
	if err != nil {
		return nil, err
	}
	return k.rebuildTree(ctx, t, opts)
}

// rebuildTree regenerates the index files of t, a tree the caller read (and
// possibly changed in memory to match what it wrote) under the lock.
func (k *KB) rebuildTree(ctx context.Context, t *Tree, opts RebuildOptions) (*RebuildResult, error) {
	if err := requireV3(t); err != nil {
		return nil, err
	}
	nodesHash := NodesHash(t)
	key := k.genKey(nodesHash)
	c := k.loadGenCache()
	if c.upToDate(k, key, t) {
		missing := c.missing
		if missing == nil {
			missing = []string{}
		}
		return &RebuildResult{NodeCount: len(t.Leaves), NodesHash: "sha256:" + nodesHash, Folders: len(c.folders),
			MissingSummaries: missing, Changed: []string{}, Removed: []string{}}, nil
	}
	gen, err := k.generate(t, c.freshFunc(k))
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
		res.Changed = append(res.Changed, filepath.ToSlash(filepath.Join(DirName, name)))
	}
	for _, d := range stale {
		res.Removed = append(res.Removed, filepath.ToSlash(filepath.Join(DirName, "nodes", d, "index.md")))
	}
	if opts.Check {
		return res, nil
	}
	// Each file is replaced atomically; doing several at once overlaps
	// their fsyncs, which dominate a cold rebuild of a large tree.
	writeErrs := make([]error, len(changed))
	parallelN(writeConcurrency, len(changed), func(i int) {
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
	k.saveGenCache(key, gen, c)
	if opts.Stage && (len(res.Changed) > 0 || len(res.Removed) > 0) && gitx.InWorkTree(ctx, k.Root) {
		paths := append(slices.Clone(res.Changed), res.Removed...)
		if err := gitx.Add(ctx, k.Root, paths); err != nil {
			return nil, fmt.Errorf("staging the rebuilt files: %w", err)
		}
		res.Staged = true
	}
	return res, nil
}

// generate renders the generated files of t with the current summaries.
func (k *KB) generate(t *Tree, fresh func(file, key string) bool) (*Generated, error) {
	summaries, err := ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, err
	}
	if s := k.entrySummary(); s != "" {
		summaries[""] = s
	}
	return generate(t, summaries, fresh)
}

// staleIndexes lists folders holding a generated index.md but no leaves
// anywhere below them.
func staleIndexes(t *Tree, gen *Generated) []string {
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

// ErrNeedsMigration is returned by writers when the tree still holds v2
// leaves: their folder summaries live in the old index.md files, which a
// rebuild would overwrite before `kk migrate okf-v3` could harvest them.
var ErrNeedsMigration = errors.New("the knowledge tree holds v2 leaves; run `kk migrate okf-v3` first")

func requireV3(t *Tree) error {
	for _, n := range t.Leaves {
		if n.Format != node.SchemaVersion {
			return fmt.Errorf("%w (first one: %s)", ErrNeedsMigration, filepath.ToSlash(filepath.Join(DirName, "nodes", n.Path)))
		}
	}
	return nil
}
