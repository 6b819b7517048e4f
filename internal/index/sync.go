package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
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

// A row whose file mtime is within store.RacyWindow of (or after) the
// time of the sync that recorded it is re-hashed even when size and mtime
// match.

// bulkRows is the number of files to read from which a sync rebuilds the
// full-text table at the end instead of updating it row by row.
const bulkRows = 500

// Stats tells what a sync did.
type Stats struct {
	Leaves    int       `json:"leaves"`    // leaves in the index after the sync
	Added     int       `json:"added"`     // new leaves
	Updated   int       `json:"updated"`   // leaves whose content changed
	Touched   int       `json:"touched"`   // size or mtime changed, content the same
	Removed   int       `json:"removed"`   // rows of leaves that are gone (or now unreadable)
	Unchanged int       `json:"unchanged"` // leaves trusted by size and mtime alone
	Skipped   []Problem `json:"skipped"`   // leaves and extractor source files left out, wholly or partly
	// Extracted counts the extractors' source files and entities; it
	// is zero when the sync ran without extraction (DB.Sync).
	Extracted ExtractStats `json:"extracted"`
	Duration  time.Duration
	// Gen names the state of the database the sync left: it changes with
	// every sync that writes, and stays when nothing changed.
	Gen string `json:"-"`
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
	size, mtime int64
	sha         string
	version     int64 // the effective version (see effectiveVersion)
	fileVersion int64 // kk_version as the file had it
}

// Rows of the nodes table with an origin other than "" come from an
// extractor (origin is the repository-relative file they were read from);
// a leaf sync neither reads nor removes them.

// leafData is what a sync reads for one new or changed leaf.
type leafData struct {
	f       fileStat
	sha     string
	n       *node.Node
	doc     *docText // the leaf's analyzed text
	err     error
	same    bool  // the hash matches the stored row
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

// Sync brings the index up to date with the tree under nodes/: leaves whose
// size and mtime are unchanged are not read; the others are hashed and,
// when their content changed, parsed and rewritten; rows of removed leaves
// are deleted. Everything happens in one write transaction, so a reader
// sees either the old or the new index, never a half-applied sync, and two
// processes syncing at once take turns. Extracted entities are left as
// they are; SyncWith updates them too.
func (db *DB) Sync(ctx context.Context, nodesDir string) (Stats, error) {
	return db.SyncWith(ctx, nodesDir, nil)
}

// SyncWith is Sync followed, in the same transaction, by the extractors of
// ex (when not nil): their source files are handled like leaves (stat,
// then hash, then extract), the entities of a file that changed replace
// its old ones, and those of a file that is gone or malformed are removed.
// A malformed file is reported in Stats.Skipped, not as an error.
func (db *DB) SyncWith(ctx context.Context, nodesDir string, ex *Extraction) (Stats, error) {
	start := time.Now()
	var st Stats
	files, problems, err := scanLeaves(ctx, nodesDir)
	if err != nil {
		return st, err
	}
	st.Skipped = problems
	var srcFiles []*sourceWork
	var srcProblems, keptProblems []Problem
	if ex != nil {
		srcFiles, srcProblems = listSources(ex)
	}
	if fast, ok := db.fastSync(ctx, files, problems, ex, srcFiles, srcProblems); ok {
		fast.Duration = time.Since(start)
		return fast, nil
	}
	gen := newGen()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	defer tx.Rollback()
	stored, syncedAt, err := readStored(ctx, tx)
	if err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	trustBefore := syncedAt - int64(store.RacyWindow)
	var work []*leafData
	seen := make(map[string]bool, len(files))
	racy := false
	for _, f := range files {
		seen[f.rel] = true
		if s, ok := stored[f.rel]; ok && s.size == f.size && s.mtime == f.mtime {
			if f.mtime < trustBefore {
				st.Unchanged++
				continue
			}
			racy = true
		}
		work = append(work, &leafData{f: f})
	}
	// Hashes are read only for the rows a sync has to look at.
	for _, d := range work {
		if s, ok := stored[d.f.rel]; ok {
			if err := tx.QueryRowContext(ctx, `SELECT sha256, version, file_version FROM nodes WHERE rid = ?`, s.rid).Scan(&s.sha, &s.version, &s.fileVersion); err != nil {
				return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
			}
			stored[d.f.rel] = s
		}
	}
	reading := progress.Start(ctx, "index: reading leaves", len(work))
	workpool.Run(0, len(work), func(i int) {
		defer reading.Add(1)
		d := work[i]
		src, err := os.ReadFile(d.f.abs)
		if err != nil {
			d.err = err
			return
		}
		sum := sha256.Sum256(src)
		d.sha = hex.EncodeToString(sum[:])
		if s, ok := stored[d.f.rel]; ok && s.sha == d.sha {
			d.same = true
			return
		}
		d.n, d.err = node.Parse(d.f.rel, src)
		if d.err == nil {
			d.doc = leafSearchDoc(d.n)
		}
	})
	reading.Done()
	w := newWriter(ctx, tx)
	// Many changes at once (a first sync, a big checkout): the full-text
	// table is rebuilt in one pass at the end instead of row by row, which
	// the triggers would do flushing FTS5's buffer on every statement.
	bulk := len(work)+len(srcFiles) >= bulkRows
	if bulk {
		for _, name := range ftsTriggerNames {
			w.exec(`DROP TRIGGER IF EXISTS ` + name)
		}
	}
	defer w.close()
	writing := progress.Start(ctx, "index: writing rows", len(work))
	defer writing.Done()
	for _, d := range work {
		writing.Add(1)
		s, had := stored[d.f.rel]
		switch {
		case d.err != nil:
			msg := d.err.Error()
			if ne, ok := errors.AsType[*node.Error](d.err); ok {
				msg = ne.Detail() // every problem of the leaf
			}
			st.Skipped = append(st.Skipped, Problem{Path: d.f.rel, Msg: msg})
			if had {
				w.delete(s.rid)
				st.Removed++
			}
		case d.same:
			w.touch(s.rid, d.f)
			st.Touched++
		case had:
			d.version = effectiveVersion(fileVersion(d.n), &s)
			w.update(s.rid, d)
			st.Updated++
		default:
			d.version = effectiveVersion(fileVersion(d.n), nil)
			w.insert(d)
			st.Added++
		}
	}
	for rel, s := range stored {
		if !seen[rel] {
			w.delete(s.rid)
			st.Removed++
		}
	}
	st.Leaves = len(stored) + st.Added - st.Removed
	if ex != nil && w.err == nil {
		r, err := db.syncExtracted(w, ex, srcFiles, srcProblems, trustBefore, st.Added+st.Updated+st.Removed > 0, &st, &keptProblems)
		if err != nil {
			return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
		}
		racy = racy || r
	}
	if bulk {
		w.exec(`INSERT INTO search_fts(search_fts) VALUES ('rebuild')`)
		for _, stmt := range ftsTriggers {
			w.exec(stmt)
		}
	}
	if st.Changed() || syncedAt == 0 {
		w.setSearchStats()
	}
	now := time.Now()
	if st.Changed() || st.Touched > 0 || st.Extracted.Touched > 0 || racy || syncedAt == 0 {
		syncedAt = start.UnixNano()
		w.setMeta("synced_at_ns", strconv.FormatInt(syncedAt, 10))
	}
	w.setMeta("last_sync", now.UTC().Format(time.RFC3339Nano))
	w.setMeta("leaves", strconv.Itoa(st.Leaves))
	w.setMeta("stat_gen", gen)
	if w.err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, w.err)
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	db.saveStatCache(gen, syncedAt, files, st, ex != nil, srcFiles, keptProblems)
	sortProblems(st.Skipped)
	st.Duration = time.Since(start)
	st.Gen = gen
	return st, nil
}

func sortProblems(p []Problem) {
	slices.SortFunc(p, func(a, b Problem) int {
		return cmp.Or(strings.Compare(a.Extractor, b.Extractor), strings.Compare(a.Path, b.Path), strings.Compare(a.Msg, b.Msg))
	})
}

func readStored(ctx context.Context, tx *sql.Tx) (map[string]storedRow, int64, error) {
	var syncedAt int64
	var s string
	switch err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'synced_at_ns'`).Scan(&s); {
	case errors.Is(err, sql.ErrNoRows):
	case err != nil:
		return nil, 0, err
	default:
		syncedAt, _ = strconv.ParseInt(s, 10, 64)
	}
	rows, err := tx.QueryContext(ctx, `SELECT rid, path, size, mtime FROM nodes WHERE origin = ''`)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	stored := map[string]storedRow{}
	for rows.Next() {
		var r storedRow
		var path string
		if err := rows.Scan(&r.rid, &path, &r.size, &r.mtime); err != nil {
			return nil, 0, err
		}
		stored[path] = r
	}
	return stored, syncedAt, rows.Err()
}

// scanLeaves lists the leaf files under nodesDir with their size and mtime,
// by the tree's one scanner (store.ScanDir), in path order. Entries that
// are not part of a readable tree are returned as problems, not errors: a
// symlink that is broken or leads out of the tree, and a *.md that is not
// a regular file (a FIFO would block the read; kk never opens one).
func scanLeaves(ctx context.Context, nodesDir string) ([]fileStat, []Problem, error) {
	l, err := store.ScanDir(ctx, nodesDir)
	if err != nil {
		return nil, nil, fmt.Errorf("reading %s: %w", nodesDir, err)
	}
	files := make([]fileStat, len(l.Files))
	for i, f := range l.Files {
		files[i] = fileStat{rel: f.Rel, abs: f.Abs, size: f.Size, mtime: f.ModTime()}
	}
	var problems []Problem
	for _, p := range l.Problems {
		if ne, ok := errors.AsType[*node.Error](p); ok {
			problems = append(problems, Problem{Path: ne.Path, Msg: ne.Msg})
		} else {
			problems = append(problems, Problem{Msg: p.Error()})
		}
	}
	for _, rel := range l.Irregular {
		problems = append(problems, Problem{Path: rel, Msg: "not a regular file; kk does not open it"})
	}
	slices.SortFunc(files, func(a, b fileStat) int { return strings.Compare(a.rel, b.rel) })
	slices.SortFunc(problems, func(a, b Problem) int { return strings.Compare(a.Path, b.Path) })
	return files, problems, nil
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

func (w *writer) delete(rid int64) {
	w.deleteNodes(`rid = ?`, rid)
}

// deleteNodes deletes the node rows matching where. Their search docs go
// with them (ON DELETE CASCADE; the connection enables foreign keys):
// w.delta forgets them first.
func (w *writer) deleteNodes(where string, args ...any) {
	w.forgetDocs(`SELECT rid FROM nodes WHERE `+where, args...)
	w.exec(`DELETE FROM nodes WHERE `+where, args...)
}

func (w *writer) touch(rid int64, f fileStat) {
	w.exec(`UPDATE nodes SET size = ?, mtime = ? WHERE rid = ?`, f.size, f.mtime, rid)
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
// or removed) since the index was last synced: it reads and writes only
// their rows instead of comparing every leaf's stat, which is what keeps a
// write's cost independent of the tree's size. It relies on the stat cache
// of the index's current generation, which records that the index matched
// every other file at its last sync; without one (the index was never
// synced, or a sync since left none), or when a changed leaf is not a
// regular file or does not parse, it is SyncWith. A file edited by hand
// in the meantime is not looked at here: its stat no longer matches the
// cache, so the next reader's sync takes the full path and reads it.
func (db *DB) SyncPaths(ctx context.Context, nodesDir string, ex *Extraction, rels []string) (Stats, error) {
	start := time.Now()
	cgen, err := db.Meta(ctx, "stat_gen")
	if err != nil {
		return db.SyncWith(ctx, nodesDir, ex)
	}
	kept := db.statCacheFor(cgen)
	if kept == nil || kept.extract != (ex != nil) {
		return db.SyncWith(ctx, nodesDir, ex)
	}
	// The kept cache is shared; this sync patches a copy.
	c := *kept
	c.leaves = maps.Clone(kept.leaves)
	c.order = slices.Clone(kept.order)
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
		src, err := os.ReadFile(abs)
		if err != nil {
			return db.SyncWith(ctx, nodesDir, ex)
		}
		sum := sha256.Sum256(src)
		d := &leafData{f: fileStat{rel: rel, abs: abs, size: fi.Size(), mtime: fi.ModTime().UnixNano()}, sha: hex.EncodeToString(sum[:])}
		if d.n, err = node.Parse(rel, src); err != nil {
			return db.SyncWith(ctx, nodesDir, ex)
		}
		d.doc = leafSearchDoc(d.n)
		work = append(work, d)
	}
	var st Stats
	gen := newGen()
	tx, err := db.w.BeginTx(ctx, nil)
	if err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	defer tx.Rollback()
	w := newWriter(ctx, tx)
	defer w.close()
	// The cache describes the database at cgen, read before the
	// transaction: a reader's sync in another process (which takes no
	// writer lock) may have committed since. This sync would then start
	// from a state the cache does not describe, and the patch it appends
	// to the cache file (from cgen to gen) would be wrong.
	if g := w.queryString(`SELECT value FROM meta WHERE key = 'stat_gen'`); g != cgen || w.err != nil {
		tx.Rollback()
		return db.SyncWith(ctx, nodesDir, ex)
	}
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
	var set, removed []string
	for _, d := range work {
		var s storedRow
		err := tx.QueryRowContext(ctx, `SELECT rid, size, mtime, sha256, version, file_version FROM nodes WHERE path = ? AND origin = ''`, d.f.rel).
			Scan(&s.rid, &s.size, &s.mtime, &s.sha, &s.version, &s.fileVersion)
		switch {
		case errors.Is(err, sql.ErrNoRows):
			d.version = effectiveVersion(fileVersion(d.n), nil)
			w.insert(d)
			st.Added++
		case err != nil:
			return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
		case s.sha == d.sha:
			w.touch(s.rid, d.f)
			st.Touched++
		default:
			d.version = effectiveVersion(fileVersion(d.n), &s)
			w.update(s.rid, d)
			st.Updated++
		}
		if _, had := c.leaves[d.f.rel]; !had {
			c.order = insertSorted(c.order, d.f.rel)
		}
		c.leaves[d.f.rel] = statEntry{size: d.f.size, mtime: d.f.mtime, sha: d.sha}
		set = append(set, d.f.rel)
	}
	for _, rel := range gone {
		var rid int64
		switch err := tx.QueryRowContext(ctx, `SELECT rid FROM nodes WHERE path = ? AND origin = ''`, rel).Scan(&rid); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
		default:
			w.delete(rid)
			st.Removed++
		}
		if _, had := c.leaves[rel]; had {
			c.order = removeSorted(c.order, rel)
			removed = append(removed, rel)
		}
		delete(c.leaves, rel)
	}
	var leaves int
	if v := w.queryString(`SELECT value FROM meta WHERE key = 'leaves'`); v != "" {
		leaves, _ = strconv.Atoi(v)
	}
	st.Leaves = leaves + st.Added - st.Removed
	var srcFiles []*sourceWork
	var keptProblems []Problem
	if ex != nil && w.err == nil {
		var srcProblems []Problem
		srcFiles, srcProblems = listSources(ex)
		if _, err := db.syncExtracted(w, ex, srcFiles, srcProblems, c.synced-int64(store.RacyWindow), st.Added+st.Updated+st.Removed > 0, &st, &keptProblems); err != nil {
			return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
		}
	}
	if st.Changed() {
		if s, ok := base.plus(w.delta); ok {
			w.setMeta("search_stats", s.String())
		} else {
			w.setSearchStats()
		}
	}
	w.setMeta("last_sync", time.Now().UTC().Format(time.RFC3339Nano))
	w.setMeta("leaves", strconv.Itoa(st.Leaves))
	w.setMeta("stat_gen", gen)
	if w.err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, w.err)
	}
	if err := tx.Commit(); err != nil {
		return st, fmt.Errorf("syncing index %s: %w", db.Path, err)
	}
	// The synced time stays the last full sync's: the other leaves were
	// compared then. The leaves written here carry their hash instead.
	db.saveStatCacheEntries(gen, kept, &c, set, removed, st.Extracted.Entities, st.Extracted.Edges, srcFiles, keptProblems)
	sortProblems(st.Skipped)
	st.Duration = time.Since(start)
	st.Gen = gen
	return st, nil
}
