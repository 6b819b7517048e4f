package indexfiles

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/kk-project/kk/internal/store"
)

// RebuildResult reports what a regeneration of the index files found or
// did (txn.Rebuild, Check). Paths are relative to
// the repository root.
type RebuildResult struct {
	NodeCount        int      `json:"node_count"`
	NodesHash        string   `json:"nodes_hash"`
	Folders          int      `json:"folders"`
	Changed          []string `json:"changed"`
	Removed          []string `json:"removed"`
	MissingSummaries []string `json:"missing_summaries"`
	Staged           bool     `json:"staged"`
	// Skipped are the leaf files generation left out because they cannot
	// be read; --check fails on them.
	Skipped []store.SkippedLeaf `json:"skipped,omitempty"`
}

// Plan is what bringing the index files in step with a tree changes: the
// files to write and the stale index.md files to remove, both relative to
// .ai/kenkeep. The store transaction applies it with the rest of a
// changeset and then calls Written.
type Plan struct {
	Result *RebuildResult
	Write  map[string][]byte
	Remove []string

	k     *store.KB
	key   string
	gen   *Generated
	cache *genCache
}

// Names lists the files of Write in order.
func (p *Plan) Names() []string {
	names := make([]string, 0, len(p.Write))
	for n := range p.Write {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// Written records, once the plan's files are on disk, what generation
// produced, so that the next plan over the same inputs has nothing to do.
func (p *Plan) Written() {
	if p.gen != nil {
		saveGenCache(p.k, p.key, p.gen, p.cache)
	}
}

// PlanFor computes the index files of t, a tree read (and possibly changed
// in memory to match what a transaction writes) under the writer lock.
// summaries is the content FOLDER_SUMMARIES.md will have, or nil to read
// it from disk.
func PlanFor(k *store.KB, t *store.Tree, summaries []byte) (*Plan, error) {
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	if summaries == nil {
		data, err := os.ReadFile(k.SummariesPath())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		summaries = data
	}
	nodesHash := memoFor(k).nodesHash(t)
	key := genKey(k, nodesHash, summaries)
	c := loadGenCache(k)
	p := &Plan{k: k, key: key, cache: c, Write: map[string][]byte{}}
	if c.upToDate(k, key, t) {
		missing := c.missing
		if missing == nil {
			missing = []string{}
		}
		p.Result = &RebuildResult{NodeCount: len(t.Leaves), NodesHash: "sha256:" + nodesHash, Folders: len(c.folders),
			MissingSummaries: missing, Changed: []string{}, Removed: []string{}}
		return p, nil
	}
	gen, err := generateFor(k, t, summaries, c.freshFunc(k), nodesHash)
	if err != nil {
		return nil, err
	}
	p.gen = gen
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
	for _, name := range names {
		same, err := holds(filepath.Join(k.Dir, filepath.FromSlash(name)), gen.Files[name])
		if err != nil {
			return nil, err
		}
		if same {
			continue
		}
		p.Write[name] = gen.Files[name]
		res.Changed = append(res.Changed, filepath.ToSlash(filepath.Join(store.DirName, name)))
	}
	for _, d := range staleIndexes(t, gen) {
		name := store.JoinRel("nodes/"+d, "index.md")
		if d == "" {
			name = "nodes/index.md"
		}
		p.Remove = append(p.Remove, name)
		res.Removed = append(res.Removed, filepath.ToSlash(filepath.Join(store.DirName, name)))
	}
	p.Result = res
	return p, nil
}

// Check reports which index files differ from what the leaves generate,
// writing nothing (kk index rebuild --check).
func Check(ctx context.Context, k *store.KB) (*RebuildResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	t, err := k.ReadTree(store.LoadOptions{NoSave: true})
	if err != nil {
		return nil, err
	}
	p, err := PlanFor(k, t, nil)
	if err != nil {
		return nil, err
	}
	res := *p.Result
	if len(t.Problems) > 0 {
		res.Skipped = store.SkippedLeaves(t.Problems)
	}
	return &res, nil
}

// GenerateFor renders every generated file of t as the knowledge base k
// generates them, with FOLDER_SUMMARIES.md's content src (the root's
// summary from ENTRY.md), using no cache and no memo: kk serve generates
// the files of a commit whose leaves differ from the work tree's.
func GenerateFor(k *store.KB, t *store.Tree, src []byte) (*Generated, error) {
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	summaries, err := store.ParseSummaries(k.SummariesPath(), src)
	if err != nil {
		return nil, err
	}
	if s := k.EntrySummary(); s != "" {
		summaries[""] = s
	}
	return Generate(t, summaries)
}

// generateFor renders the generated files of t with the current summaries.
func generateFor(k *store.KB, t *store.Tree, src []byte, fresh func(file, key string) bool, nodesHash string) (*Generated, error) {
	summaries, err := store.ParseSummaries(k.SummariesPath(), src)
	if err != nil {
		return nil, err
	}
	if s := k.EntrySummary(); s != "" {
		summaries[""] = s
	}
	return generate(t, summaries, fresh, memoFor(k), nodesHash)
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

// holds reports whether the file at path holds exactly data (false when
// it does not exist). A file of another size is not read: GRAPH.md, which
// every new leaf makes longer, is megabytes at ten thousand leaves.
func holds(path string, data []byte) (bool, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if !fi.Mode().IsRegular() || fi.Size() != int64(len(data)) {
		return false, nil
	}
	old := make([]byte, len(data)+1) // one more: a file that grew since the stat
	n, err := io.ReadFull(f, old)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, err
	}
	return bytes.Equal(old[:n], data), nil
}
