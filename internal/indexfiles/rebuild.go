package indexfiles

import (
	"fmt"

	"bytes"
	"context"
	"errors"
	"github.com/kk-project/kk/internal/node"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/index"
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
	// Unmerged are the generated files git's index still holds in
	// conflict after a rebuild without --stage (relative to the
	// repository), for the command to say how to clear git's mark.
	Unmerged []string `json:"unmerged,omitempty"`
}

// Plan is what bringing the index files in step with a tree changes: the
// files to write and the stale index.md files to remove, both relative to
// .ai/kenkeep. The store transaction applies it with the rest of a
// changeset and then calls Written.
type Plan struct {
	Result *RebuildResult
	Write  map[string][]byte
	Remove []string
	// Edited are the files of Write and Remove that hold text kk did
	// not generate (a person's edit, see handedit.go), for the writer to
	// keep a copy of.
	Edited []string
	// Unsure are the files of Edited kk could not compare with what it
	// generated (they are of other leaves or summaries: a checkout, a
	// merge, a hand edit of a note): not as kk last generated them, so
	// git's or a person's. The writer asks git whether a commit at hand
	// holds them (HEAD, the side a merge brings in): git's are not kept.
	Unsure []string

	ctx   context.Context
	k     *store.KB
	db    *index.DB
	key   string
	gen   *Generated
	rec   *record
	ranks *rankRecord
	nodes int
	// delta marks a generation brought forward from the recorded one
	// (delta.go): only its rendered files are recorded again.
	delta bool
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

// Written records in the branch index, once the plan's files are on disk,
// what generation produced, so that the next plan over the same inputs
// has nothing to do. It is a record of derived state: when it cannot be
// written, the next plan generates again.
func (p *Plan) Written() { p.WrittenSums(nil) }

// WrittenSums is Written when the sha256 (hex) of the files written are
// known already: sums, by path relative to the knowledge base's folder.
func (p *Plan) WrittenSums(sums map[string]string) {
	if p.db == nil {
		return
	}
	if p.gen == nil {
		// Nothing generated: the files were found as recorded; those
		// checked by their bytes are recorded with their new stat.
		if p.rec != nil && len(p.rec.checked) > 0 {
			g := p.rec.g
			_ = p.db.RecordGeneration(p.ctx, index.GenerationUpdate{Key: g.Key, NodesHash: g.NodesHash, Nodes: g.Nodes, Folders: g.Folders, Missing: g.Missing, Put: p.rec.checked})
		}
		return
	}
	u := index.GenerationUpdate{Key: p.key, NodesHash: p.gen.NodesHash, Nodes: p.nodes, Folders: p.gen.Folders, Missing: p.gen.MissingSummaries,
		Put: make(map[string]index.GeneratedFile, len(p.gen.Keys)), Replace: !p.delta}
	for name, key := range p.gen.Keys {
		if p.delta {
			if _, ok := p.gen.Files[name]; !ok {
				if f, ok := p.rec.checked[name]; ok {
					u.Put[name] = f
				}
				continue // recorded as it is
			}
		}
		if data, ok := p.gen.Files[name]; ok {
			f, ok := fileRecord(filepath.Join(p.k.Dir, filepath.FromSlash(name)), key, data, sums[name])
			if !ok {
				return // changed under us: record nothing
			}
			u.Put[name] = f
			continue
		}
		// Skipped as fresh: the file is as recorded (or as checked),
		// so there is a record.
		f, ok := p.rec.checked[name]
		if !ok {
			f = p.rec.g.Files[name]
		}
		u.Put[name] = f
	}
	if p.delta {
		for name := range p.rec.g.Files {
			if _, ok := p.gen.Keys[name]; !ok {
				u.Drop = append(u.Drop, name)
			}
		}
	}
	if p.ranks != nil && p.ranks.used {
		u.Ranks, u.DropRanks = p.ranks.put, p.ranks.drop
	}
	if p.db.RecordGeneration(p.ctx, u) != nil {
		return
	}
	// GRAPH.md, brought forward by the next write from these bytes.
	if data, ok := p.gen.Files["GRAPH.md"]; ok {
		if f, ok := u.Put["GRAPH.md"]; ok {
			p.db.KeepGenerated("GRAPH.md", f.Sum, data)
		}
	}
}

// PlanFor computes the index files of t, a tree read (and possibly changed
// in memory to match what a transaction writes) under the writer lock.
// summaries is the content FOLDER_SUMMARIES.md will have, or nil to read
// it from disk. db, the branch index the tree was read through, holds the
// record of the last generation (nil: there is none, everything is
// generated). d, when not nil, says how t changed since it was read: the
// recorded generation may then be brought forward by that change alone.
func PlanFor(ctx context.Context, k *store.KB, db *index.DB, t *store.Tree, summaries []byte, d *Delta) (*Plan, error) {
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	return planFor(ctx, k, db, treeAfter(t), summaries, d, func() *store.Tree { return t })
}

// PlanChange is PlanFor of the tree a change d makes of snap, a view of
// the tree read through the branch index db (index.DB.TreeOrSnapshot:
// the snapshot a handle keeps, or a view of its leaf state read on
// demand): the generation recorded for snap is brought forward by
// reading snap through its lookups and copying out only the leaves it
// renders. full returns the tree after
// the change, of the caller's own, for a plan that must generate every
// file; it is called only then. Each change's New leaf is hashed in
// hashes (path -> sha256 hex of its file's bytes).
func PlanChange(ctx context.Context, k *store.KB, db *index.DB, snap store.TreeView, summaries []byte, d *Delta, hashes map[string]string, full func() *store.Tree) (*Plan, error) {
	a, ok := snapshotAfter(snap, d, hashes)
	if !ok {
		return PlanFor(ctx, k, db, full(), summaries, d)
	}
	if err := snap.RequireV3(); err != nil {
		return nil, err
	}
	for _, n := range a.put {
		if n.Format != node.SchemaVersion {
			return nil, fmt.Errorf("%w (first one: %s)", store.ErrNeedsMigration, filepath.ToSlash(filepath.Join(store.DirName, "nodes", n.Path)))
		}
	}
	return planFor(ctx, k, db, a, summaries, d, full)
}

// planFor is PlanFor of the tree t reads; full returns it as a tree.
func planFor(ctx context.Context, k *store.KB, db *index.DB, t *after, summaries []byte, d *Delta, full func() *store.Tree) (*Plan, error) {
	if summaries == nil {
		data, err := k.ReadFile(k.SummariesPath())
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		summaries = data
	}
	nodesHash := ""
	if db != nil && d != nil {
		// The branch index holds the leaf lines of the tree as read:
		// only the changed leaves' are hashed into them.
		var gone []string
		put := map[string]string{}
		for _, c := range d.Changes {
			if c.Old != nil {
				gone = append(gone, c.Old.Path)
			}
		}
		for _, c := range d.Changes {
			if c.New != nil {
				put[c.New.Path] = t.hash(c.New.Path)
			}
		}
		nodesHash, _ = db.HashAfter(d.Before, gone, put)
	}
	var tree *store.Tree // the whole tree, when needed
	whole := func() *store.Tree {
		if tree == nil {
			tree = full()
		}
		return tree
	}
	if nodesHash == "" {
		nodesHash = NodesHash(whole())
	}
	key := genKey(k, nodesHash, summaries)
	rec := loadRecord(ctx, db)
	count := t.count()
	indexDirs := t.indexDirs()
	p := &Plan{ctx: ctx, k: k, db: db, key: key, rec: rec, nodes: count, Write: map[string][]byte{}}
	if rec.upToDate(k, key, indexDirs) {
		missing := rec.g.Missing
		if missing == nil {
			missing = []string{}
		}
		p.Result = &RebuildResult{NodeCount: count, NodesHash: "sha256:" + nodesHash, Folders: len(rec.g.Folders),
			MissingSummaries: missing, Changed: []string{}, Removed: []string{}}
		return p, nil
	}
	gen, ok, err := p.bringForward(t, summaries, nodesHash, d)
	if err != nil {
		return nil, err
	}
	p.delta = ok
	if !ok {
		p.ranks = loadRanks(ctx, db)
		if gen, err = generateFor(k, whole(), summaries, rec.freshFunc(k), nodesHash, p.ranks); err != nil {
			return nil, err
		}
	}
	p.gen = gen
	res := &RebuildResult{NodeCount: count, NodesHash: "sha256:" + gen.NodesHash, Folders: len(gen.Folders),
		MissingSummaries: gen.MissingSummaries, Changed: []string{}, Removed: []string{}}
	if res.MissingSummaries == nil {
		res.MissingSummaries = []string{}
	}
	names := make([]string, 0, len(gen.Files))
	for name := range gen.Files {
		names = append(names, name)
	}
	slices.Sort(names)
	// A note a person named index.md is theirs: never overwritten nor
	// removed, and reported like a leaf kk cannot read.
	var kept []error
	for _, name := range names {
		same, text, err := holds(filepath.Join(k.Dir, filepath.FromSlash(name)), gen.Files[name])
		if err != nil {
			return nil, err
		}
		if same || text {
			// A file checked out with CRLF (git's core.autocrlf) is not
			// stale, and is left as it is: git, which would commit it
			// with LF, calls it modified once it holds LF.
			continue
		}
		if e := handIndex(k, t, name); e != nil {
			kept = append(kept, e)
			continue
		}
		p.Write[name] = gen.Files[name]
		res.Changed = append(res.Changed, filepath.ToSlash(filepath.Join(store.DirName, name)))
		if path.Base(name) == "index.md" && !looksGenerated(filepath.Join(k.Dir, filepath.FromSlash(name))) {
			// A page a person wrote as the folder's index.md: kept too.
			p.Edited = append(p.Edited, name)
		}
	}
	for _, d := range staleIndexes(indexDirs, gen) {
		name := store.JoinRel("nodes/"+d, "index.md")
		if d == "" {
			name = "nodes/index.md"
		}
		if e := handIndex(k, t, name); e != nil {
			kept = append(kept, e)
			continue
		}
		p.Remove = append(p.Remove, name)
		res.Removed = append(res.Removed, filepath.ToSlash(filepath.Join(store.DirName, name)))
		if !looksGenerated(filepath.Join(k.Dir, filepath.FromSlash(name))) {
			// Not an index kk (or kenkeep) generated: a page a person
			// wrote (plans/index.md), never committed perhaps. The
			// writer keeps a copy and says where, whether or not the
			// generated files were of other leaves (the edit check
			// below cannot tell an edit in stale files).
			p.Edited = append(p.Edited, name)
		}
	}
	if !p.delta {
		// What the plan replaces or removes may hold a person's words.
		names := append(p.Names(), p.Remove...)
		ec, err := newEditCheck(k, rec, whole, d, nodesHash, names, gen, p.ranks)
		if err != nil {
			return nil, err
		}
		for _, name := range names {
			edited, unsure, err := ec.edited(name)
			if err != nil {
				return nil, err
			}
			if edited && !slices.Contains(p.Edited, name) {
				p.Edited = append(p.Edited, name)
				if unsure {
					p.Unsure = append(p.Unsure, name)
				}
			}
		}
	}
	if hasLegacyCatalog(k) {
		p.Remove = append(p.Remove, LegacyCatalog)
		res.Removed = append(res.Removed, store.DirName+"/"+LegacyCatalog)
	}
	if len(kept) > 0 {
		res.Skipped = store.SkippedLeaves(kept)
		k.NoteSkipped(kept)
	}
	p.Result = res
	return p, nil
}

// handIndex is store.HandIndex of name, a generated file's path relative
// to .ai/kenkeep, when it is an index.md under nodes/ (t the tree
// generated for).
func handIndex(k *store.KB, t *after, name string) error {
	rel, ok := strings.CutPrefix(name, "nodes/")
	if !ok || path.Base(rel) != "index.md" {
		return nil
	}
	return store.HandIndex(k, rel, func(id string) bool {
		_, ok := t.byID(id)
		return ok
	})
}

// Current is the plan of a tree whose index files need nothing, told
// without the tree: the branch index was just synced (sh is the shape it
// found) and the generation it records was made for exactly these
// leaves, summaries and folders, and every file it made is still as it
// made it. It returns nil when any of that does not hold, or when the
// tree has leaves kk cannot read (whose problems the caller reports from
// the tree); the caller then plans from the tree.
func Current(ctx context.Context, k *store.KB, db *index.DB, sh index.Shape) (*Plan, error) {
	if db == nil || sh.Invalid > 0 {
		return nil, nil
	}
	summaries, err := k.ReadFile(k.SummariesPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	hash := sh.Hash
	if sh.Leaves == 0 {
		hash = EmptyHash
	}
	key := genKey(k, hash, summaries)
	rec := loadRecord(ctx, db)
	if !rec.upToDate(k, key, sh.IndexDirs) || rec.g.Nodes != sh.Leaves {
		return nil, nil
	}
	missing := rec.g.Missing
	if missing == nil {
		missing = []string{}
	}
	return &Plan{ctx: ctx, k: k, db: db, key: key, rec: rec, nodes: sh.Leaves, Write: map[string][]byte{},
		Result: &RebuildResult{NodeCount: sh.Leaves, NodesHash: "sha256:" + hash, Folders: len(rec.g.Folders),
			MissingSummaries: missing, Changed: []string{}, Removed: []string{}}}, nil
}

// Check reports which index files differ from what the leaves generate,
// writing nothing (kk index rebuild --check).
func Check(ctx context.Context, k *store.KB) (*RebuildResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	if err := index.CheckedOut(ctx, k); err != nil {
		return nil, err
	}
	var db *index.DB // the branch index, when there is one
	if branch, err := index.CurrentBranch(ctx, k); err == nil {
		db, _ = index.OpenShared(ctx, k, branch)
	}
	if db != nil {
		if _, sh, err := db.SyncShape(ctx, k.NodesDir(), nil); err == nil {
			p, err := Current(ctx, k, db, sh)
			if err != nil {
				return nil, err
			}
			if p != nil {
				return p.Result, nil
			}
		}
	}
	t, err := index.ReadTree(ctx, k)
	if err != nil {
		return nil, err
	}
	p, err := PlanFor(ctx, k, db, t, nil, nil)
	if err != nil {
		return nil, err
	}
	res := *p.Result
	if len(t.Problems) > 0 {
		res.Skipped = append(store.SkippedLeaves(t.Problems), res.Skipped...)
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
func generateFor(k *store.KB, t *store.Tree, src []byte, fresh func(file, key string) bool, nodesHash string, rr *rankRecord) (*Generated, error) {
	summaries, err := store.ParseSummaries(k.SummariesPath(), src)
	if err != nil {
		return nil, err
	}
	if s := k.EntrySummary(); s != "" {
		summaries[""] = s
	}
	return generate(t, summaries, fresh, nodesHash, rr)
}

// staleIndexes lists folders holding a generated index.md but no leaves
// anywhere below them.
func staleIndexes(indexDirs map[string]bool, gen *Generated) []string {
	live := map[string]bool{}
	for _, d := range gen.Folders {
		live[d] = true
	}
	var out []string
	for d := range indexDirs {
		if !live[d] {
			out = append(out, d)
		}
	}
	slices.Sort(out)
	return out
}

// looksGenerated reports whether the index.md at path opens as the
// index files kk and kenkeep generate do, with the heading "# kenkeep
// Index" (or "# kk Index", which earlier kk versions wrote), after the
// root index's front matter, with any line endings and a byte order mark (true too when it cannot be read:
// nothing to keep).
func looksGenerated(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer func() { _ = f.Close() }()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	text := strings.ReplaceAll(strings.TrimPrefix(string(head[:n]), "\uFEFF"), "\r\n", "\n")
	if rest, ok := strings.CutPrefix(text, "---\n"); ok {
		if _, after, found := strings.Cut(rest, "\n---\n"); found {
			text = after
		}
	}
	text = strings.TrimLeft(text, "\n")
	return strings.HasPrefix(text, "# kk Index") || strings.HasPrefix(text, "# kenkeep Index")
}

// holds reports whether the file at path holds exactly data (false when
// it does not exist), and whether it holds data's text with CRLF line
// endings where data has LF (store.SameText: a generated file a clone with
// git's core.autocrlf checked out), which is not stale either. A file of
// a size neither can have is not read: GRAPH.md, which every new leaf
// makes longer, is megabytes at ten thousand leaves.
func holds(path string, data []byte) (same, text bool, err error) {
	// A named pipe in the file's place does not hold the open until a
	// writer comes; it is not a regular file, so it is not read.
	f, err := store.OpenRead(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return false, false, err
	}
	size := fi.Size()
	if !fi.Mode().IsRegular() || size < int64(len(data)) || size > store.MaxSameTextSize(data) {
		return false, false, nil
	}
	old := make([]byte, size+1) // one more: a file that grew since the stat
	n, err := io.ReadFull(f, old)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return false, false, err
	}
	if bytes.Equal(old[:n], data) {
		return true, false, nil
	}
	return false, store.SameText(old[:n], data), nil
}
