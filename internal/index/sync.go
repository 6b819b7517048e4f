package index

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/progress"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/workpool"
)

// bulkRows is the number of files to read from which a sync rebuilds the
// full-text table at the end instead of updating it row by row.
const bulkRows = 500

// Stats tells what a sync did.
type Stats struct {
	Leaves  int `json:"leaves"`  // leaves in the index after the sync
	Added   int `json:"added"`   // new leaves
	Updated int `json:"updated"` // leaves whose content changed
	Touched int `json:"touched"` // size or mtime changed, content the same
	Removed int `json:"removed"` // rows of leaves that are gone (or now unreadable)
	// Unchanged counts the leaves found as recorded: trusted by size
	// and mtime alone, or (too recent for that, and nothing else
	// changed) by their bytes.
	Unchanged int       `json:"unchanged"`
	Skipped   []Problem `json:"skipped"` // leaves and extractor source files left out, wholly or partly
	// Extracted counts the extractors' source files and entities; it
	// is zero when the sync ran without extraction (DB.Sync).
	Extracted ExtractStats `json:"extracted"`
	Duration  time.Duration
	// Gen names the state of the database the sync left: it changes with
	// every sync that writes, and stays when nothing changed.
	Gen string `json:"-"`
	// Hash is the nodes hash of the tree the sync left (store.HashLeaves
	// of its leaves), "" when the tree has leaves kk cannot read.
	Hash string `json:"-"`
}

// Changed reports whether the sync changed the indexed content.
func (s Stats) Changed() bool {
	return s.Added+s.Updated+s.Removed+s.Extracted.Added+s.Extracted.Updated+s.Extracted.Removed > 0
}

// Problem is a file the sync left out of the index, or (for an extractor's
// source file) whose entities it partly left out.
type Problem struct {
	// Path is relative to nodes/ for a leaf, and relative to the
	// repository root when Extractor is set.
	Path      string `json:"path"`
	Extractor string `json:"extractor,omitempty"` // the extractor that read the file; "" for a leaf
	Msg       string `json:"message"`
}

type fileStat struct {
	rel, abs    string
	size, mtime int64
}

type storedRow struct {
	rid         int64
	sha         string
	version     int64 // the effective version (see effectiveVersion)
	fileVersion int64 // kk_version as the file had it
}

// Rows of the nodes table with an origin other than "" come from an
// extractor (origin is the repository-relative file they were read from);
// a leaf sync neither reads nor removes them.

// leafData is one leaf file of a sync: trusted unread (kept), or read.
type leafData struct {
	f       fileStat
	kept    *leafEntry // the state's entry, trusted by store.Unchanged
	old     *leafEntry // the state's entry, not trusted
	entry   *leafEntry // the entry the sync records after reading it
	sha     string
	n       *node.Node
	doc     *docText // the leaf's analyzed text
	err     error
	same    bool  // the hash is the old entry's
	version int64 // the effective version the row records
}

// fileVersion is a leaf's kk_version as its file has it (0 when absent).
func fileVersion(n *node.Node) int64 {
	if v, ok := n.Extra("kk_version"); ok {
		if i, ok := v.(int64); ok && i > 0 {
			return i
		}
	}
	return 0
}

// effectiveVersion is the version the index records for a leaf whose
// content is new to it: the file's kk_version, unless the bytes changed
// while kk_version did not keep up. kk's store transaction raises
// kk_version on every write, so a change whose kk_version is not above the
// version recorded before came from outside kk (an editor, kenkeep, a git
// pull or merge) and counts as a new version: one above the old. An
// optimistic write made with the old version then gets a conflict instead
// of silently overwriting a change its writer never saw. old is the row
// before the change, nil for a leaf new to the index. A leaf without
// kk_version is at version 1.
func effectiveVersion(file int64, old *storedRow) int64 {
	v := max(file, 1)
	if old != nil && v <= old.version {
		v = old.version + 1
	}
	return v
}

// Sync brings the index up to date with the tree under nodes/: leaves
// whose size and mtime are as the leaf state recorded them (and old
// enough, see store.Unchanged) are not read; the others are hashed and,
// when their content changed, parsed and rewritten; rows of removed
// leaves are deleted. Everything happens in one write transaction, so a
// reader sees either the old or the new index, never a half-applied sync,
// and two processes syncing at once take turns; a sync that finds nothing
// to do writes nothing (but the cost of its walk, when it moved far from
// the one recorded: see ExpectedSync). Extracted entities are left as they
// are; SyncWith updates them too.
func (db *DB) Sync(ctx context.Context, nodesDir string) (Stats, error) {
	return db.SyncWith(ctx, nodesDir, nil)
}

// SyncWith is Sync followed, in the same transaction, by the extractors of
// ex (when not nil): their source files are handled like leaves (stat,
// then hash, then extract), the entities of a file that changed replace
// its old ones, and those of a file that is gone or malformed are removed.
// A malformed file is reported in Stats.Skipped, not as an error.
func (db *DB) SyncWith(ctx context.Context, nodesDir string, ex *Extraction) (Stats, error) {
	st, _, err := db.sync(ctx, nodesDir, ex, false)
	return st, err
}

// sync is SyncWith, returning the leaf state the index holds after it.
// A handle told where the tree changed (Watch) reads only there. facts
// asks for the state with the leaves' facts when the sync finds the tree
// as recorded (a tree read's), read in the same pass as their stats
// rather than in a second one.
func (db *DB) sync(ctx context.Context, nodesDir string, ex *Extraction, facts bool) (Stats, *treeState, error) {
	if db.changeSource() != nil {
		return db.syncWatched(ctx, nodesDir, ex, facts)
	}
	l, base, start, err := db.listAll(ctx, nodesDir)
	if err != nil {
		return Stats{}, nil, err
	}
	return db.syncListed(ctx, nodesDir, start, ex, l, nil, base, facts)
}

// listAll lists the whole tree (store.ScanDir), after reading which
// generation of the leaf state the index holds (base, "" when it holds
// none), and when the listing started: syncListed's arguments.
func (db *DB) listAll(ctx context.Context, nodesDir string) (*store.Listing, string, time.Time, error) {
	var base sql.NullString
	if err := db.r.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'stat_gen'`).Scan(&base); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return nil, "", time.Time{}, fmt.Errorf("reading index %s: %w", db.Path, err)
	}
	start := time.Now()
	l, err := store.ScanDir(ctx, nodesDir)
	if err != nil {
		return nil, "", time.Time{}, fmt.Errorf("reading %s: %w", nodesDir, err)
	}
	return l, base.String, start, nil
}

// syncListed is sync with the listing l made since start: of the whole
// tree (scope nil), or of the folders of scope alone, the others being as
// the leaf state records them (see treeState.diffIn), which must then be
// the generation base the scope was chosen on (else errStateMoved, and
// nothing is written).
//
// A listing of the whole tree made while the leaf state was generation
// base ("": unknown) is made again, under the write transaction, when the
// state has moved on since: another process synced meanwhile, perhaps a
// change made after this listing (a leaf kk node write wrote and
// recorded), which the listing would undo. The index's state never goes
// back to an older walk's, so a reader that answers from it without a
// sync still finds what was recorded.
func (db *DB) syncListed(ctx context.Context, nodesDir string, start time.Time, ex *Extraction, l *store.Listing, scope map[string]bool, base string, facts bool) (Stats, *treeState, error) {
	var srcFiles []*sourceWork
	var srcProblems []Problem
	if ex != nil {
		srcFiles, srcProblems = listSources(ex)
	}
	scanned := time.Since(start)
	if st, s, ok := db.quiet(ctx, l, scope, base, ex, srcFiles, srcProblems, facts); ok {
		st.Duration = time.Since(start)
		st.Hash = s.hash
		if scope == nil {
			db.noteQuietWalk(ctx, walkCost{d: st.Duration, leaves: st.Leaves})
		}
		return st, s, nil
	}
	gen := newGen()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return Stats{}, nil, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	defer tx.Rollback()
	locked := time.Now()
	prev, err := db.state(ctx, tx, false)
	if err != nil {
		return Stats{}, nil, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	if scope != nil && prev.gen != base {
		return Stats{}, nil, errStateMoved
	}
	if scope == nil && base != "" && prev.gen != base {
		// No other writer lands while the transaction is held.
		start = time.Now()
		if l, err = store.ScanDir(ctx, nodesDir); err != nil {
			return Stats{}, nil, fmt.Errorf("reading %s: %w", nodesDir, err)
		}
	}
	d := prev.diffIn(l, scope)
	// The walk as a sync finding nothing would have paid it: the listing,
	// the leaf state and the comparison, without the wait for the lock.
	walked := scanned + time.Since(locked)
	st := Stats{Unchanged: d.unchanged}
	reading := progress.Start(ctx, "index: reading leaves", len(d.work))
	workpool.Run(0, len(d.work), func(i int) {
		defer reading.Add(1)
		d.work[i].read()
	})
	reading.Done()
	w := newWriter(ctx, tx)
	// Many changes at once (a first sync, a big checkout): the full-text
	// table is rebuilt in one pass at the end instead of row by row, which
	// the triggers would do flushing FTS5's buffer on every statement.
	bulk := len(d.work)+len(srcFiles) >= bulkRows
	if bulk {
		for _, name := range ftsTriggerNames {
			w.exec(`DROP TRIGGER IF EXISTS ` + name)
		}
	}
	defer w.close()
	writing := progress.Start(ctx, "index: writing rows", len(d.work))
	defer writing.Done()
	// A folder written again keeps the facts of its unchanged leaves.
	for dir := range d.dirty {
		f, err := withFacts(ctx, tx, dir, prev.folders[dir])
		if err != nil {
			return st, nil, fmt.Errorf("syncing index %s: %w", db.Path, err)
		}
		for _, ld := range d.files[dir] {
			if ld.kept != nil {
				ld.kept = f.entry(ld.kept.name)
			}
			if ld.old != nil {
				e := *f.entry(ld.old.name)
				ld.old = &e
			}
		}
	}
	for _, ld := range d.work {
		writing.Add(1)
		w.apply(ld, &st)
	}
	for _, e := range d.gone {
		if e.indexed() {
			w.deleteNodes(`path = ? AND origin = ''`, e.name)
			st.Removed++
		}
	}
	next := d.next(prev, gen)
	for dir := range d.dirty {
		w.writeFolder(dir, next.folders[dir])
	}
	for _, dir := range d.removedDirs {
		w.writeFolder(dir, nil)
	}
	st.Leaves = next.leaves()
	if ex != nil && w.err == nil {
		var kept []Problem
		r, err := db.syncExtracted(w, ex, srcFiles, srcProblems, prev.synced-int64(store.RacyWindow), st.Added+st.Updated+st.Removed > 0, &st, &kept)
		if err != nil {
			return st, nil, fmt.Errorf("syncing index %s: %w", db.Path, err)
		}
		d.racy = d.racy || r
	}
	if bulk {
		w.exec(`INSERT INTO search_fts(search_fts) VALUES ('rebuild')`)
		for _, stmt := range ftsTriggers {
			w.exec(stmt)
		}
	}
	if st.Changed() || prev.synced == 0 {
		w.setSearchStats()
	}
	if st.Changed() || st.Touched > 0 || st.Extracted.Touched > 0 || d.racy || prev.synced == 0 {
		next.synced = start.UnixNano()
		w.setMeta("synced_at_ns", strconv.FormatInt(next.synced, 10))
	} else {
		next.synced = prev.synced
	}
	if d.reshaped || prev.synced == 0 {
		w.setSummary(next)
	}
	w.flushDF()
	w.setMeta("last_sync", time.Now().UTC().Format(time.RFC3339Nano))
	w.setMeta("leaves", strconv.Itoa(st.Leaves))
	w.setMeta("stat_gen", gen)
	if scope == nil {
		w.setWalk(walkCost{d: walked, leaves: st.Leaves})
	}
	if w.err != nil {
		return st, nil, fmt.Errorf("syncing index %s: %w", db.Path, w.err)
	}
	if err := tx.Commit(); err != nil {
		return st, nil, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	if bulk {
		// The log now holds about the whole database: copy it back and
		// empty it, so that the next process does not read it all (see
		// walLimit). A reader still using it only delays that.
		_, _ = db.w.ExecContext(ctx, `PRAGMA wal_checkpoint(TRUNCATE)`)
	}
	db.keep(next)
	st.Skipped = append(st.Skipped, next.problems()...)
	st.Skipped = append(st.Skipped, d.unread...)
	sortProblems(st.Skipped)
	st.Duration = time.Since(start)
	st.Gen, st.Hash = gen, next.hash
	return st, next, nil
}

// quiet answers a sync that finds every leaf (and, with ex, every source
// file) as the index recorded it and old enough to be trusted, from one
// read snapshot and without taking the write lock; ok is false when
// anything differs, and the caller takes the write path, which compares
// again inside its transaction. The state is read with the leaves' facts
// when facts is set.
func (db *DB) quiet(ctx context.Context, l *store.Listing, scope map[string]bool, base string, ex *Extraction, srcFiles []*sourceWork, srcProblems []Problem, facts bool) (Stats, *treeState, bool) {
	rtx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Stats{}, nil, false
	}
	defer rtx.Rollback()
	s, err := db.state(ctx, rtx, facts)
	if err != nil || s.synced == 0 || scope != nil && s.gen != base {
		return Stats{}, nil, false
	}
	d := s.diffIn(l, scope)
	racy, ok := d.racyOnly()
	if !ok {
		return Stats{}, nil, false
	}
	st := Stats{Leaves: d.unchanged + racy, Unchanged: d.unchanged + racy, Skipped: s.problems(), Gen: s.gen}
	if ex != nil {
		stored, err := readSources(ctx, rtx)
		if err != nil || len(stored) != len(srcFiles) {
			return Stats{}, nil, false
		}
		for _, sf := range srcFiles {
			r, ok := stored[sf.f.rel]
			if !ok || r.extractor != sf.ex.Name() || !store.Unchanged(sf.f.size, sf.f.mtime, r.size, r.mtime, s.synced) {
				return Stats{}, nil, false
			}
		}
		var counts string
		if err := rtx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'extracted_counts'`).Scan(&counts); err != nil {
			return Stats{}, nil, false
		}
		x := &st.Extracted
		if _, err := fmt.Sscanf(counts, "%d %d", &x.Entities, &x.Edges); err != nil {
			return Stats{}, nil, false
		}
		kept, err := sourceProblems(ctx, rtx)
		if err != nil {
			return Stats{}, nil, false
		}
		x.Sources, x.Unchanged = len(srcFiles), len(srcFiles)
		st.Skipped = append(append(st.Skipped, srcProblems...), kept...)
	}
	sortProblems(st.Skipped)
	return st, s, true
}

func sortProblems(p []Problem) {
	slices.SortFunc(p, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Extractor, b.Extractor), strings.Compare(a.Path, b.Path), strings.Compare(a.Msg, b.Msg))
	})
}

// walkDiff is what a walk of nodes/ found that the leaf state does not
// trust.
type walkDiff struct {
	walks       map[string]*folderState // what the walk found in each folder, leaves aside
	files       map[string][]*leafData  // each folder's leaf files, by name
	work        []*leafData             // the files to read
	gone        []leafEntry             // entries of files the walk did not find (name: the path)
	dirty       map[string]bool         // folders whose state changes
	removedDirs []string                // folders that are gone
	unchanged   int                     // indexed leaves trusted unread
	racy        bool                    // a file had the recorded size and mtime, too recent to trust
	reshaped    bool                    // the set of leaves, their hashes or problems may change
	unread      []Problem               // files that could not be read (set by next)
}

// quietRacy is the most files a sync that finds nothing else changed
// reads because their stat is as recorded but too recent to trust (see
// walkDiff.racyOnly); more, and it writes the state with a later sync
// time, after which they are trusted by their stat.
const quietRacy = 64

// racyOnly reports whether the walk found the tree as the state records
// it, reading (at most quietRacy) files whose size and mtime are as
// recorded but too recent to trust (store.Unchanged): each must hold the
// bytes recorded. A writer's files are such files for RacyWindow after it
// wrote them; a long-running process syncing between writes (kk serve's
// jobs) then neither writes the state nor changes its generation for
// them. racy counts those of them that are leaves of the tree.
func (d *walkDiff) racyOnly() (racy int, ok bool) {
	if len(d.gone) > 0 || len(d.removedDirs) > 0 || d.reshaped || len(d.work) > quietRacy {
		return 0, false
	}
	for _, ld := range d.work {
		if ld.old == nil || ld.old.size != ld.f.size || ld.old.mtime != ld.f.mtime {
			return 0, false
		}
	}
	workpool.Run(0, len(d.work), func(i int) { d.work[i].read() })
	for _, ld := range d.work {
		if !ld.same {
			return 0, false
		}
		if ld.old.indexed() {
			racy++
		}
	}
	return racy, true
}

// diff compares a walk of nodes/ (store.ScanDir's listing) with the state.
func (s *treeState) diff(l *store.Listing) *walkDiff {
	d := &walkDiff{walks: map[string]*folderState{}, files: map[string][]*leafData{}, dirty: map[string]bool{}}
	for _, dir := range l.Dirs {
		d.walks[dir] = &folderState{index: l.IndexDirs[dir], hasFacts: true}
	}
	in := func(rel string) *folderState {
		f := d.walks[store.DirOf(rel)]
		if f == nil { // a folder the walk did not list: cannot be, but stay whole
			f = &folderState{hasFacts: true}
			d.walks[store.DirOf(rel)] = f
		}
		return f
	}
	for _, rel := range l.Leftovers {
		f := in(rel)
		f.leftovers = append(f.leftovers, rel)
	}
	for _, rel := range l.Irregular {
		f := in(rel)
		f.irregular = append(f.irregular, rel)
	}
	for _, p := range l.Problems {
		pr := Problem{Msg: p.Error()}
		if ne, ok := errors.AsType[*node.Error](p); ok {
			pr = Problem{Path: ne.Path, Msg: ne.Msg}
		}
		f := in(pr.Path)
		if g := d.walks[pr.Path]; g != nil && pr.Path != "" {
			f = g // a folder's own problem (one kk may not read)
		}
		f.problems = append(f.problems, pr)
	}
	// The listing holds a folder's files in runs (its subfolders' files
	// sort between them): a folder's maps are read once per run, not
	// once per file. A first pass compares every file with the state's
	// entry; only the folders that change get the second, which makes
	// each of their files' leafData (an unchanged tree makes none).
	runs := func(fn func(dir string, files []store.LeafFile)) {
		for i := 0; i < len(l.Files); {
			dir := store.DirOf(l.Files[i].Rel)
			j := i + 1
			for j < len(l.Files) && store.DirOf(l.Files[j].Rel) == dir {
				j++
			}
			fn(dir, l.Files[i:j])
			i = j
		}
	}
	matched := map[string]int{} // files with an entry in the state, per folder
	runs(func(dir string, files []store.LeafFile) {
		in(files[0].Rel)
		folder := s.folders[dir]
		n := 0
		for _, lf := range files {
			old := folder.entry(path.Base(lf.Rel))
			if old == nil {
				d.dirty[dir] = true
				continue
			}
			n++
			if store.Unchanged(lf.Size, lf.ModTime(), old.size, old.mtime, s.synced) {
				if old.indexed() {
					d.unchanged++
				}
				continue
			}
			d.racy = d.racy || old.size == lf.Size && old.mtime == lf.ModTime()
			d.dirty[dir] = true
		}
		matched[dir] += n
	})
	for dir, walk := range d.walks {
		old := s.folders[dir]
		if old == nil || !old.sameShape(walk) {
			d.dirty[dir] = true
			d.reshaped = true
		}
		if old != nil && matched[dir] < len(old.leaves) {
			d.dirty[dir] = true // an entry no file matched: gone
		}
	}
	runs(func(dir string, files []store.LeafFile) {
		if !d.dirty[dir] {
			return
		}
		folder := s.folders[dir]
		lds := make([]leafData, len(files)) // one allocation, not one per file
		for i, lf := range files {
			ld := &lds[i]
			ld.f = fileStat{rel: lf.Rel, abs: lf.Abs, size: lf.Size, mtime: lf.ModTime()}
			d.files[dir] = append(d.files[dir], ld)
			old := folder.entry(path.Base(lf.Rel))
			if old != nil && store.Unchanged(lf.Size, lf.ModTime(), old.size, old.mtime, s.synced) {
				ld.kept = old
				continue
			}
			if old != nil {
				e := *old
				ld.old = &e
			}
			d.work = append(d.work, ld)
		}
	})
	for dir := range d.dirty {
		old := s.folders[dir]
		if old == nil || d.walks[dir] == nil {
			continue
		}
		byName := make(map[string]bool, len(d.files[dir]))
		for _, ld := range d.files[dir] {
			byName[path.Base(ld.f.rel)] = true
		}
		for _, e := range old.leaves {
			if !byName[e.name] {
				e.name = store.JoinRel(dir, e.name)
				d.gone = append(d.gone, e)
			}
		}
	}
	for dir := range s.folders {
		if d.walks[dir] == nil {
			d.removedDirs = append(d.removedDirs, dir)
			for _, e := range s.folders[dir].leaves {
				e.name = store.JoinRel(dir, e.name)
				d.gone = append(d.gone, e)
			}
		}
	}
	slices.Sort(d.removedDirs)
	if len(d.gone) > 0 || len(d.removedDirs) > 0 {
		d.reshaped = true
	}
	return d
}

// next is the state after the sync applied d's work (leafData.entry).
func (d *walkDiff) next(prev *treeState, gen string) *treeState {
	n := &treeState{gen: gen, synced: prev.synced, hash: prev.hash, invalid: prev.invalid, lines: prev.lines, folders: make(map[string]*folderState, len(d.walks))}
	for dir, walk := range d.walks {
		if !d.dirty[dir] {
			n.folders[dir] = prev.folders[dir]
			continue
		}
		f := walk
		for _, ld := range d.files[dir] {
			switch {
			case ld.kept != nil:
				f.leaves = append(f.leaves, *ld.kept)
			case ld.entry != nil:
				f.leaves = append(f.leaves, *ld.entry)
			default:
				d.unread = append(d.unread, Problem{Path: ld.f.rel, Msg: ld.err.Error()})
				d.reshaped = true
			}
			if ld.entry != nil && (ld.old == nil || !ld.old.equal(ld.entry)) && !ld.same {
				d.reshaped = true
			}
		}
		n.folders[dir] = f
	}
	return n
}

// leaves counts the indexed leaves.
func (s *treeState) leaves() int {
	n := 0
	for _, f := range s.folders {
		for i := range f.leaves {
			if f.leaves[i].indexed() {
				n++
			}
		}
	}
	return n
}

// problems lists what the state leaves out: broken symlinks, irregular
// files and leaves that cannot be read.
func (s *treeState) problems() []Problem {
	var out []Problem
	for dir, f := range s.folders {
		out = append(out, f.problems...)
		for _, rel := range f.irregular {
			out = append(out, Problem{Path: rel, Msg: "not a regular file; kk does not open it"})
		}
		for i := range f.leaves {
			if e := &f.leaves[i]; !e.indexed() {
				rel := store.JoinRel(dir, e.name)
				msg := e.problem()
				if p := store.MergeToolTemporary(rel, e.err(rel).ID); p != nil {
					msg = p.Detail() // git mergetool's, as a tree read says
				}
				out = append(out, Problem{Path: rel, Msg: msg})
			}
		}
	}
	return out
}

// problem renders why an entry is not indexed, as a sync reports it:
// every problem of the leaf.
func (e *leafEntry) problem() string { return e.err("").Detail() }

// read reads, hashes and (when its content is new to the index) parses a
// leaf file.
func (ld *leafData) read() {
	src, err := os.ReadFile(ld.f.abs)
	if err != nil {
		ld.err = err
		return
	}
	ld.sha = store.LeafSum(src)
	if ld.old != nil && ld.old.sha == ld.sha {
		ld.same = true
		return
	}
	ld.n, ld.err = node.Parse(ld.f.rel, src)
	if ld.err == nil {
		ld.doc = leafSearchDoc(ld.n)
	}
}

// apply writes what reading one leaf file found: its row, and its entry
// in the leaf state.
func (w *writer) apply(ld *leafData, st *Stats) {
	name := path.Base(ld.f.rel)
	old := ld.old
	ne, parseErr := errors.AsType[*node.Error](ld.err)
	switch {
	case ld.err != nil && !parseErr: // unreadable now: read again next time
		if old != nil && old.indexed() {
			w.deleteNodes(`path = ? AND origin = ''`, ld.f.rel)
			st.Removed++
		}
	case ld.same:
		e := *old
		e.size, e.mtime = ld.f.size, ld.f.mtime
		ld.entry = &e
		if old.indexed() {
			w.exec(`UPDATE nodes SET size = ?, mtime = ? WHERE path = ? AND origin = ''`, ld.f.size, ld.f.mtime, ld.f.rel)
			st.Touched++
		}
	case parseErr:
		ld.entry = &leafEntry{name: name, size: ld.f.size, mtime: ld.f.mtime, sha: ld.sha}
		ld.entry.setErr(ne)
		if old != nil && old.indexed() {
			w.deleteNodes(`path = ? AND origin = ''`, ld.f.rel)
			st.Removed++
		}
	default:
		ld.entry = &leafEntry{name: name, size: ld.f.size, mtime: ld.f.mtime, sha: ld.sha, id: ld.n.ID, facts: string(appendFacts(nil, ld.n))}
		var s storedRow
		err := w.tx.QueryRowContext(w.ctx, `SELECT rid, sha256, version, file_version FROM nodes WHERE path = ? AND origin = ''`, ld.f.rel).Scan(&s.rid, &s.sha, &s.version, &s.fileVersion)
		switch {
		case err == nil && s.sha == ld.sha: // the row has it (the state did not)
			w.exec(`UPDATE nodes SET size = ?, mtime = ? WHERE rid = ?`, ld.f.size, ld.f.mtime, s.rid)
			st.Touched++
		case errors.Is(err, sql.ErrNoRows):
			ld.version = effectiveVersion(fileVersion(ld.n), nil)
			w.insert(ld)
			st.Added++
		case err != nil:
			if w.err == nil {
				w.err = err
			}
		default:
			ld.version = effectiveVersion(fileVersion(ld.n), &s)
			w.update(s.rid, ld)
			st.Updated++
		}
	}
}

// setSummary records what the state says of the whole tree (see
// treeState.summary), which session-start reads instead of the tree.
func (w *writer) setSummary(s *treeState) {
	s.hash, s.invalid, s.lines = s.summaryLines()
	w.setMeta("tree_hash", s.hash)
	w.setMeta("tree_invalid", strconv.Itoa(s.invalid))
}

// setSummaryAfter is setSummary for state next, which differs from prev
// by the leaves at the paths changed alone (see summaryAfter): a leaf's
// id is taken when the nodes table holds more than one leaf with it
// (compared as SQLite's NOCASE does, which is IDKey for an ASCII id).
func (w *writer) setSummaryAfter(prev, next *treeState, changed []string) {
	taken := func(id string) bool {
		for i := 0; i < len(id); i++ {
			if id[i] >= 0x80 {
				return true // not told by NOCASE: summarize whole
			}
		}
		n, err := strconv.Atoi(w.queryString(`SELECT count(*) FROM nodes INDEXED BY nodes_id WHERE id = ? AND origin = ''`, id))
		return err != nil || n != 1
	}
	hash, lines, ok := summaryAfter(prev, next, changed, taken)
	if !ok || w.err != nil {
		w.setSummary(next)
		return
	}
	next.hash, next.invalid, next.lines = hash, 0, lines
	w.setMeta("tree_hash", next.hash)
	w.setMeta("tree_invalid", "0")
}

// writer applies a sync's changes inside its transaction; the first error
// sticks and later calls do nothing.
type writer struct {
	ctx context.Context
	tx  *sql.Tx
	err error

	stmts map[string]*sql.Stmt

	// delta, when not nil, counts every search doc the writer inserts or
	// deletes, those going with a node row it deletes included: plus the
	// new docs' figures, minus the old ones'. SyncPaths sets it to update
	// search_stats by it.
	delta *docStats

	// df is the change to search_df the writer's inserts and deletes of
	// search docs make, by term; flushDF writes it.
	df     map[string]dfCounts
	dfSeen map[string]uint8 // countTerms' record of a doc's terms, reused
}

func newWriter(ctx context.Context, tx *sql.Tx) *writer {
	return &writer{ctx: ctx, tx: tx, stmts: map[string]*sql.Stmt{}}
}

func (w *writer) close() {
	for _, s := range w.stmts {
		_ = s.Close()
	}
}

// prepare returns the writer's prepared statement of query (nil after an
// error).
func (w *writer) prepare(query string) *sql.Stmt {
	if w.err != nil {
		return nil
	}
	s, ok := w.stmts[query]
	if !ok {
		s, w.err = w.tx.PrepareContext(w.ctx, query)
		if w.err != nil {
			return nil
		}
		w.stmts[query] = s
	}
	return s
}

func (w *writer) exec(query string, args ...any) sql.Result {
	s := w.prepare(query)
	if s == nil {
		return nil
	}
	var res sql.Result
	res, w.err = s.ExecContext(w.ctx, args...)
	return res
}

func (w *writer) setMeta(key, value string) {
	w.exec(`INSERT INTO meta(key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value`, key, value)
}

// deleteNodes deletes the node rows matching where. Their search docs go
// with them (ON DELETE CASCADE; the connection enables foreign keys):
// w.delta forgets them first.
func (w *writer) deleteNodes(where string, args ...any) {
	w.forgetDocs(`SELECT rid FROM nodes WHERE `+where, args...)
	w.forgetTerms(`SELECT rid FROM nodes WHERE `+where, args...)
	w.exec(`DELETE FROM nodes WHERE `+where, args...)
}

func nodeArgs(d *leafData) []any {
	n := d.n
	molecule := stringExtra(n, "kk_molecule")
	priority := stringExtra(n, "kk_priority")
	severity := stringExtra(n, "kk_severity")
	owner := stringExtra(n, "kk_owner")
	return []any{d.f.rel, n.ID, n.Type, n.Title, n.Description, strings.Join(n.Tags, " "), string(n.Body), n.Dir(),
		n.Status, n.Confidence, molecule, priority, severity, owner, "", d.version, fileVersion(n), d.f.mtime, d.f.size, d.sha, graphJSON(n), metaJSON(n.Meta())}
}

func (w *writer) insert(d *leafData) {
	res := w.exec(`INSERT INTO nodes(path, id, type, title, description, tags, body, folder, status, confidence, molecule,
		priority, severity, owner, origin, version, file_version, mtime, size, sha256, graph, meta)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`, nodeArgs(d)...)
	if w.err != nil {
		return
	}
	var rid int64
	rid, w.err = res.LastInsertId()
	w.putSearchDoc(rid, d.doc, false)
	w.children(rid, d.n)
}

func (w *writer) update(rid int64, d *leafData) {
	w.exec(`UPDATE nodes SET path = ?, id = ?, type = ?, title = ?, description = ?, tags = ?, body = ?, folder = ?, status = ?,
		confidence = ?, molecule = ?, priority = ?, severity = ?, owner = ?, origin = ?, version = ?, file_version = ?, mtime = ?, size = ?, sha256 = ?, graph = ?, meta = ? WHERE rid = ?`, append(nodeArgs(d), rid)...)
	w.exec(`DELETE FROM kk_paths WHERE rid = ?`, rid)
	w.exec(`DELETE FROM edges WHERE rid = ?`, rid)
	w.exec(`DELETE FROM changelog WHERE rid = ?`, rid)
	w.putSearchDoc(rid, d.doc, true)
	w.children(rid, d.n)
}

// children writes a leaf's atom patterns, edges and changelog entries.
func (w *writer) children(rid int64, n *node.Node) {
	for i, p := range stringList(n, "kk_paths") {
		w.exec(`INSERT INTO kk_paths(rid, seq, pattern, bucket) VALUES (?, ?, ?, ?)`, rid, i, p, PatternBucket(p))
	}
	for _, e := range edgesOf(n) {
		w.exec(`INSERT INTO edges(rid, src, type, dst, created_at, created_by, source, confidence) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
			rid, n.ID, e.Type, e.To, e.CreatedAt, e.CreatedBy, e.Source, e.Confidence)
	}
	if v, ok := n.Extra("kk_changelog"); ok {
		list, _ := v.([]any)
		for i, item := range list {
			m, ok := item.(map[string]any)
			if !ok {
				continue
			}
			w.exec(`INSERT INTO changelog(rid, seq, at, task, summary) VALUES (?, ?, ?, ?, ?)`, rid, i, scalar(m["at"]), scalar(m["task"]), scalar(m["summary"]))
		}
	}
}

// Edge is one typed edge of the index, from the leaf that declares it.
type Edge struct {
	From       string `json:"from"`
	Type       string `json:"type"`
	To         string `json:"to"`
	CreatedAt  string `json:"created_at,omitempty"`
	CreatedBy  string `json:"created_by,omitempty"`
	Source     string `json:"source,omitempty"`
	Confidence string `json:"confidence,omitempty"`
}

// Edge types the index derives from kenkeep's relationship keys.
const (
	EdgeRelatesTo = "relates_to"
	EdgeDependsOn = "depends_on"
	EdgeRelated   = "related" // kk_related
)

// edgesOf lists a leaf's outgoing edges: kk_relates_to, kk_depends_on,
// kk_related ids and kk_edges entries, in that order.
func edgesOf(n *node.Node) []Edge {
	var out []Edge
	for _, to := range n.RelatesTo {
		out = append(out, Edge{From: n.ID, Type: EdgeRelatesTo, To: to})
	}
	for _, to := range n.DependsOn {
		out = append(out, Edge{From: n.ID, Type: EdgeDependsOn, To: to})
	}
	if v, ok := n.Extra("kk_related"); ok {
		list, _ := v.([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok && scalar(m["id"]) != "" {
				out = append(out, Edge{From: n.ID, Type: EdgeRelated, To: scalar(m["id"])})
			}
		}
	}
	if v, ok := n.Extra("kk_edges"); ok {
		list, _ := v.([]any)
		for _, item := range list {
			m, ok := item.(map[string]any)
			if !ok || scalar(m["type"]) == "" || scalar(m["to"]) == "" {
				continue
			}
			out = append(out, Edge{From: n.ID, Type: scalar(m["type"]), To: scalar(m["to"]),
				CreatedAt: scalar(m["created_at"]), CreatedBy: scalar(m["created_by"]), Source: scalar(m["source"]), Confidence: scalar(m["confidence"])})
		}
	}
	return out
}

func stringExtra(n *node.Node, key string) string {
	v, _ := n.Extra(key)
	s, _ := v.(string)
	return s
}

func stringList(n *node.Node, key string) []string {
	v, ok := n.Extra(key)
	if !ok {
		return nil
	}
	list, _ := v.([]any)
	var out []string
	for _, item := range list {
		if s, ok := item.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

// scalar renders a decoded YAML scalar as text ("" for nil, lists and maps).
func scalar(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	default:
		return ""
	}
}

// SyncPaths brings the index up to date after a writer holding the writer
// lock changed exactly the leaves rels (paths relative to nodesDir, written
// or removed): it reads and writes only their rows and their folders'
// leaf state instead of comparing every leaf's stat, which is what keeps a
// write's cost independent of the tree's size. The entries it records
// are as recent as the writes, so the next sync reads those files again
// (store.Unchanged) and trusts them after that. A leaf edited by hand in
// the meantime is not looked at here; the next sync finds it. Without a
// leaf state (the index was never synced), or when a changed leaf is not
// a regular file or does not parse, it is SyncWith.
func (db *DB) SyncPaths(ctx context.Context, nodesDir string, ex *Extraction, rels []string) (Stats, error) {
	start := time.Now()
	rels = slices.Compact(slices.Sorted(slices.Values(rels)))
	var work []*leafData
	var gone []string
	for _, rel := range rels {
		abs := filepath.Join(nodesDir, filepath.FromSlash(rel))
		fi, err := os.Lstat(abs)
		if errors.Is(err, fs.ErrNotExist) {
			gone = append(gone, rel)
			continue
		}
		if err != nil || !fi.Mode().IsRegular() {
			return db.SyncWith(ctx, nodesDir, ex)
		}
		ld := &leafData{f: fileStat{rel: rel, abs: abs, size: fi.Size(), mtime: fi.ModTime().UnixNano()}}
		if ld.read(); ld.err != nil {
			return db.SyncWith(ctx, nodesDir, ex)
		}
		work = append(work, ld)
	}
	var st Stats
	gen := newGen()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	defer tx.Rollback()
	prev, err := db.state(ctx, tx, false)
	if err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	if prev.synced == 0 {
		tx.Rollback()
		return db.SyncWith(ctx, nodesDir, ex)
	}
	if prev.lines == nil && prev.invalid == 0 {
		// The lines a plan made of the state before this change, if it
		// made them (leafLines): the summary after it patches them.
		db.kept.Lock()
		kl := db.kept.lines
		db.kept.Unlock()
		if kl.hash != "" && kl.hash == prev.hash {
			p := *prev
			p.lines = kl.l
			prev = &p
		}
	}
	w := newWriter(ctx, tx)
	defer w.close()
	// search_stats is updated by this sync's changes instead of counted
	// again over every search doc, a count whose cost grows with the tree:
	// the writer adds the docs it inserts and subtracts those it deletes
	// or replaces, leaves' and extracted entities' alike. It starts from
	// the recorded value, which every sync that changed a doc left exact;
	// one that does not read back as written is counted again.
	base, baseOK := parseDocStats(w.queryString(`SELECT value FROM meta WHERE key = 'search_stats'`))
	if baseOK {
		w.delta = &docStats{}
	}
	next := &treeState{gen: gen, synced: prev.synced, hash: prev.hash, invalid: prev.invalid, lines: prev.lines, folders: maps.Clone(prev.folders)}
	// edit returns the folder's new state, a copy (with the leaves'
	// facts) of the old one.
	edit := func(dir string) *folderState {
		f := next.folders[dir]
		if f == nil || f == prev.folders[dir] {
			c := &folderState{hasFacts: true}
			if f != nil {
				g, err := withFacts(ctx, tx, dir, f)
				if err != nil {
					if w.err == nil {
						w.err = err
					}
					return c
				}
				*c = *g
				c.leaves = slices.Clone(g.leaves)
			}
			next.folders[dir] = c
			f = c
		}
		return f
	}
	for _, ld := range work {
		f := edit(store.DirOf(ld.f.rel))
		// Each folder above is in the state: a new one is recorded as
		// the walk would list it.
		for d := store.DirOf(ld.f.rel); d != ""; {
			d = store.DirOf(d)
			if next.folders[d] != nil {
				break
			}
			next.folders[d] = &folderState{hasFacts: true}
		}
		name := path.Base(ld.f.rel)
		if old := f.entry(name); old != nil {
			e := *old
			ld.old = &e
			ld.same = old.sha == ld.sha && old.indexed()
		}
		w.apply(ld, &st)
		i, found := slices.BinarySearchFunc(f.leaves, name, func(e leafEntry, n string) int { return strings.Compare(e.name, n) })
		if found {
			f.leaves[i] = *ld.entry
		} else {
			f.leaves = slices.Insert(f.leaves, i, *ld.entry)
		}
	}
	for _, rel := range gone {
		f := next.folders[store.DirOf(rel)]
		e := f.entry(path.Base(rel))
		if e == nil {
			continue
		}
		if e.indexed() {
			w.deleteNodes(`path = ? AND origin = ''`, rel)
			st.Removed++
		}
		f = edit(store.DirOf(rel))
		f.leaves = slices.DeleteFunc(f.leaves, func(e leafEntry) bool { return e.name == path.Base(rel) })
	}
	for dir, f := range next.folders {
		if f != prev.folders[dir] {
			w.writeFolder(dir, f)
		}
	}
	st.Leaves = next.leaves()
	var keptProblems []Problem
	if ex != nil && w.err == nil {
		srcFiles, srcProblems := listSources(ex)
		if _, err := db.syncExtracted(w, ex, srcFiles, srcProblems, prev.synced-int64(store.RacyWindow), st.Added+st.Updated+st.Removed > 0, &st, &keptProblems); err != nil {
			return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
		}
	}
	if st.Changed() {
		if s, ok := base.plus(w.delta); ok {
			w.setMeta("search_stats", s.String())
		} else {
			w.setSearchStats()
		}
		w.setSummaryAfter(prev, next, rels)
	}
	w.flushDF()
	w.setMeta("last_sync", time.Now().UTC().Format(time.RFC3339Nano))
	w.setMeta("leaves", strconv.Itoa(st.Leaves))
	w.setMeta("stat_gen", gen)
	if w.err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, w.err)
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	db.keep(next)
	sortProblems(st.Skipped)
	st.Duration = time.Since(start)
	st.Gen = gen
	return st, nil
}
