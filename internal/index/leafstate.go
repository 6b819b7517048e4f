package index

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// The leaf state is what the last sync found under nodes/: one row of the
// folders table per folder, holding every leaf file directly in it (its
// size, mtime and the sha256 of the bytes read, and either the leaf's
// facts, the front matter fields a tree read hands out, or why the file is
// not part of the tree) and what else the folder holds that a tree read
// reports (an index.md, leftovers of interrupted writes, irregular files,
// broken symlinks). A sync compares a walk of nodes/ with it by
// store.Unchanged and reads only what that rule does not trust; a tree
// read (ReadTree) decodes it instead of parsing every leaf. It is written
// in the transaction that writes the leaves' rows, so it always describes
// them. A folder is one row, not each leaf, because SQLite's cost is per
// row: a command reading the state of 10,000 leaves reads 400 rows.

// stateVersion is the first byte of a folder's stat blob; a row of
// another version (or a damaged one) is read as unknown, and the sync
// reads the folder's files again.
const stateVersion = 2

// leafEntry is one leaf file of a folder as the last sync found it.
type leafEntry struct {
	name        string // in its folder
	size, mtime int64
	sha         string // sha256 (hex) of the bytes read
	// id is the leaf's id; for a file that is not part of the tree, the
	// id its front matter names, if any (a skipped leaf still claims it).
	id string
	// problems say why the file is not part of the tree (none when it
	// is), oldLayout that it is a kenkeep v1 leaf (node.ErrOldLayout).
	problems  []node.Problem
	oldLayout bool
	facts     string // an indexed leaf's facts (see appendFacts)
}

func (e *leafEntry) indexed() bool { return len(e.problems) == 0 }

func (e *leafEntry) equal(o *leafEntry) bool {
	return e.name == o.name && e.size == o.size && e.mtime == o.mtime && e.sha == o.sha && e.id == o.id &&
		slices.Equal(e.problems, o.problems) && e.oldLayout == o.oldLayout && e.facts == o.facts
}

// setErr records the parse error of a file that is not part of the tree.
func (e *leafEntry) setErr(ne *node.Error) {
	e.id, e.problems, e.oldLayout = ne.ID, ne.Problems(), errors.Is(ne, node.ErrOldLayout)
}

// err is the parse error of a file that is not part of the tree (rel:
// its path relative to nodes/).
func (e *leafEntry) err(rel string) *node.Error {
	ne := &node.Error{Path: rel, Field: e.problems[0].Field, Msg: e.problems[0].Msg, More: e.problems[1:], ID: e.id}
	if len(ne.More) == 0 {
		ne.More = nil
	}
	if e.oldLayout {
		ne.Err = node.ErrOldLayout
	}
	return ne
}

// folderState is one folder as the last sync found it. It is never
// changed once made: a sync that changes a folder makes a new one.
type folderState struct {
	index     bool        // holds an index.md
	leftovers []string    // temporary files of interrupted writes (relative to nodes/)
	irregular []string    // *.md entries that are not regular files
	problems  []Problem   // symlinks that are broken or lead out of the tree
	leaves    []leafEntry // by name
	hasFacts  bool        // the leaves' facts were read (see DB.state)
}

// same reports whether f and g record the same entries (their leaves'
// facts aside, which are read or not).
func (f *folderState) same(g *folderState) bool {
	return f.sameShape(g) && slices.EqualFunc(f.leaves, g.leaves, func(a, b leafEntry) bool {
		a.facts, b.facts = "", ""
		return a.equal(&b)
	})
}

// entry returns the leaf named name, nil when there is none.
func (f *folderState) entry(name string) *leafEntry {
	if f == nil {
		return nil
	}
	i, ok := slices.BinarySearchFunc(f.leaves, name, func(e leafEntry, n string) int { return strings.Compare(e.name, n) })
	if !ok {
		return nil
	}
	return &f.leaves[i]
}

// sameShape reports whether f and g hold the same things besides their
// leaves.
func (f *folderState) sameShape(g *folderState) bool {
	return f.index == g.index && slices.Equal(f.leftovers, g.leftovers) && slices.Equal(f.irregular, g.irregular) && slices.Equal(f.problems, g.problems)
}

// treeState is the leaf state of the whole tree at one generation of the
// database (meta stat_gen), as of the sync that looked at every file last
// (synced, Unix nanoseconds: meta synced_at_ns).
type treeState struct {
	gen     string
	synced  int64
	folders map[string]*folderState // by folder relative to nodes/, "" for nodes/
	// hash and invalid are the summary (see summary) as recorded with
	// the state (meta tree_hash, tree_invalid).
	hash    string
	invalid int
	// lines are the leaf lines the hash was made of ("<path>\t<sha256>"
	// of each leaf, sorted: store.HashLeafLines), kept when the tree has
	// no problem and no path that sorts otherwise than by its bytes, so
	// that a write's sync hashes the lines of the leaves it changed
	// into them instead of listing every leaf again (summaryAfter); nil
	// when not known.
	lines []string
}

// queryer is a database or a transaction.
type queryer interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// state returns the leaf state as q sees it, with the leaves' facts when
// facts is set (a sync compares stats only; a tree read decodes facts).
// The handle keeps the last state it read or wrote; the generation tells
// when another handle (or process) has synced since.
func (db *DB) state(ctx context.Context, q queryer, facts bool) (*treeState, error) {
	var gen, synced, hash, invalid sql.NullString
	err := q.QueryRowContext(ctx, `SELECT (SELECT value FROM meta WHERE key = 'stat_gen'), (SELECT value FROM meta WHERE key = 'synced_at_ns'),
		(SELECT value FROM meta WHERE key = 'tree_hash'), (SELECT value FROM meta WHERE key = 'tree_invalid')`).Scan(&gen, &synced, &hash, &invalid)
	if err != nil {
		return nil, err
	}
	db.kept.Lock()
	s := db.kept.s
	db.kept.Unlock()
	if s != nil && gen.Valid && s.gen == gen.String {
		if !facts || s.facts() {
			return s, nil
		}
		// The state is current but read without the leaves' facts:
		// only the facts are read now.
		if s, err = s.withFacts(ctx, q); err == nil {
			db.keep(s)
			return s, nil
		}
	}
	s = &treeState{gen: gen.String, folders: map[string]*folderState{}, hash: hash.String}
	s.synced, _ = strconv.ParseInt(synced.String, 10, 64)
	s.invalid, _ = strconv.Atoi(invalid.String)
	query := `SELECT dir, stat, '' FROM folders`
	if facts {
		query = `SELECT dir, stat, facts FROM folders`
	}
	rows, err := q.QueryContext(ctx, query)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var dir, stat, fb string
		if err := rows.Scan(&dir, &stat, &fb); err != nil {
			return nil, err
		}
		if f, ok := decodeFolder(stat, fb, facts); ok {
			s.folders[dir] = f
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	db.keep(s)
	return s, nil
}

// withFacts returns s with the facts of every folder read without them,
// read through q (of the same generation).
func (s *treeState) withFacts(ctx context.Context, q queryer) (*treeState, error) {
	rows, err := q.QueryContext(ctx, `SELECT dir, facts FROM folders`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	n := &treeState{gen: s.gen, synced: s.synced, hash: s.hash, invalid: s.invalid, folders: maps.Clone(s.folders)}
	for rows.Next() {
		var dir, fb string
		if err := rows.Scan(&dir, &fb); err != nil {
			return nil, err
		}
		f := n.folders[dir]
		if f == nil || f.hasFacts {
			continue
		}
		g := *f
		g.leaves, g.hasFacts = slices.Clone(f.leaves), true
		r := &reader{s: fb}
		for i := range g.leaves {
			g.leaves[i].facts = r.str()
		}
		if r.err || len(r.s) > 0 {
			return nil, errors.New("index: a folder's facts do not match its leaf state")
		}
		n.folders[dir] = &g
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if !n.facts() {
		return nil, errors.New("index: a folder of the leaf state has no row")
	}
	return n, nil
}

// facts reports whether every folder of s holds its leaves' facts.
func (s *treeState) facts() bool {
	for _, f := range s.folders {
		if !f.hasFacts {
			return false
		}
	}
	return true
}

// withFacts returns f with its leaves' facts, read through q when f was
// read without them.
func withFacts(ctx context.Context, q queryer, dir string, f *folderState) (*folderState, error) {
	if f == nil || f.hasFacts {
		return f, nil
	}
	var stat, fb string
	if err := q.QueryRowContext(ctx, `SELECT stat, facts FROM folders WHERE dir = ?`, dir).Scan(&stat, &fb); err != nil {
		return nil, err
	}
	g, ok := decodeFolder(stat, fb, true)
	if !ok {
		return nil, errors.New("index: a folder's leaf state changed under a write transaction")
	}
	return g, nil
}

// newGen names a new generation of the database.
func newGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// keep records s as the state the handle last read or wrote.
func (db *DB) keep(s *treeState) {
	db.kept.Lock()
	db.kept.s = s
	db.kept.Unlock()
}

// writeFolder stores (or, when f is nil, removes) a folder's row.
func (w *writer) writeFolder(dir string, f *folderState) {
	if f == nil {
		w.exec(`DELETE FROM folders WHERE dir = ?`, dir)
		return
	}
	stat, facts := encodeFolder(f)
	w.exec(`INSERT INTO folders(dir, stat, facts) VALUES (?, ?, ?) ON CONFLICT(dir) DO UPDATE SET stat = excluded.stat, facts = excluded.facts`, dir, stat, facts)
}

// reads lists the tree the state describes as a listing and its leaf
// files as read (see store.NewTree).
func (s *treeState) reads(nodesDir string) (*store.Listing, []store.LeafRead) {
	l := &store.Listing{IndexDirs: map[string]bool{}}
	n := 0
	for _, f := range s.folders {
		n += len(f.leaves)
	}
	reads := make([]store.LeafRead, 0, n)
	// The folders in the tree's order and each one's leaves by name: the
	// leaves come nearly in the tree's order, which its sort then only
	// has to finish.
	dirs := slices.Collect(maps.Keys(s.folders))
	store.SortLocale(dirs)
	slab := &strSlab{}
	for _, dir := range dirs {
		f := s.folders[dir]
		nodes := make([]node.Node, len(f.leaves)) // one allocation a folder
		l.Dirs = append(l.Dirs, dir)
		if f.index {
			l.IndexDirs[dir] = true
		}
		l.Leftovers = append(l.Leftovers, f.leftovers...)
		l.Irregular = append(l.Irregular, f.irregular...)
		for _, p := range f.problems {
			l.Problems = append(l.Problems, &node.Error{Path: p.Path, Msg: p.Msg})
		}
		for i := range f.leaves {
			reads = append(reads, f.leaves[i].read(nodesDir, dir, &nodes[i], slab))
		}
	}
	slices.Sort(l.Leftovers)
	slices.Sort(l.Irregular)
	slices.SortFunc(l.Problems, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
	return l, reads
}

// read is the leaf file of entry e in folder dir as a tree read takes
// it: its leaf is decoded into n, its lists into slab.
func (e *leafEntry) read(nodesDir, dir string, n *node.Node, slab *strSlab) store.LeafRead {
	rel := store.JoinRel(dir, e.name)
	r := store.LeafRead{File: store.NewLeafFile(rel, nodesDir+"/"+rel, e.size, e.mtime), Hash: e.sha}
	if e.indexed() {
		r.Leaf = n
		decodeFactsInto(r.Leaf, slab, rel, e.id, e.facts)
	} else {
		r.Err = e.err(rel)
	}
	return r
}

// tree assembles the tree the state describes (see store.NewTree).
func (s *treeState) tree(nodesDir string) *store.Tree {
	return store.NewTree(s.reads(nodesDir))
}

// snapshot assembles the tree the state describes as a snapshot.
func (s *treeState) snapshot(nodesDir string) *store.Snapshot {
	return store.NewSnapshot(s.reads(nodesDir))
}

// maxPatch is the most leaves a patch of a kept tree changes; a change
// of more assembles the tree anew.
const maxPatch = 64

// patch returns the snapshot of the tree s describes made from snap, the
// tree of state old, by the folders whose state differs; ok is false
// when the difference is not one a patch makes (see store.Snapshot.Patch:
// a leaf that is skipped before or after, a folder whose other contents
// change, too many changes), and the caller assembles the tree anew.
func (s *treeState) patch(nodesDir string, old *treeState, snap *store.Snapshot) (*store.Snapshot, bool) {
	var gone []string
	var put []store.LeafRead
	slab := &strSlab{}
	for dir, o := range old.folders {
		if s.folders[dir] == nil && (len(o.leaves) > 0 || !o.sameShape(&folderState{index: o.index})) {
			return nil, false // a folder that went with leaves or leftovers in it
		}
	}
	for dir, f := range s.folders {
		o := old.folders[dir]
		if o == f {
			continue
		}
		if o == nil {
			o = &folderState{}
		}
		if !slices.Equal(o.leftovers, f.leftovers) || !slices.Equal(o.irregular, f.irregular) || !slices.Equal(o.problems, f.problems) {
			return nil, false
		}
		i, j := 0, 0
		for i < len(o.leaves) || j < len(f.leaves) {
			var a, b *leafEntry
			switch {
			case j == len(f.leaves) || i < len(o.leaves) && o.leaves[i].name < f.leaves[j].name:
				a, i = &o.leaves[i], i+1
			case i == len(o.leaves) || f.leaves[j].name < o.leaves[i].name:
				b, j = &f.leaves[j], j+1
			default:
				a, b, i, j = &o.leaves[i], &f.leaves[j], i+1, j+1
				if a.sha == b.sha && a.id == b.id && a.facts == b.facts && a.oldLayout == b.oldLayout && slices.Equal(a.problems, b.problems) {
					continue // the same leaf (its stat aside)
				}
			}
			if a != nil && !a.indexed() || b != nil && !b.indexed() || len(gone)+len(put) >= maxPatch {
				return nil, false
			}
			if a != nil {
				gone = append(gone, store.JoinRel(dir, a.name))
			}
			if b != nil {
				put = append(put, b.read(nodesDir, dir, &node.Node{}, slab))
			}
		}
	}
	dirs := make([]string, 0, len(s.folders))
	indexDirs := map[string]bool{}
	for dir, f := range s.folders {
		dirs = append(dirs, dir)
		if f.index {
			indexDirs[dir] = true
		}
	}
	return snap.Patch(gone, put, dirs, indexDirs)
}

// summary is what the state says of the tree as a whole: the nodes hash
// of its leaves (store.HashLeaves; "" when some leaf is not part of it)
// and how many leaves a tree read would report as problems (unreadable,
// broken symlinks, ids used twice).
func (s *treeState) summary() (hash string, invalid int) {
	hash, invalid, _ = s.summaryLines()
	return hash, invalid
}

// summaryLines is summary, with the sorted leaf lines hashed when they
// can be kept (see treeState.lines).
func (s *treeState) summaryLines() (hash string, invalid int, kept []string) {
	n := 0
	for _, f := range s.folders {
		n += len(f.leaves)
	}
	lines := make([]string, 0, n)
	ids := make(map[string]int, n) // leaves per IDKey
	for dir, f := range s.folders {
		invalid += len(f.problems)
		for i := range f.leaves {
			e := &f.leaves[i]
			if !e.indexed() {
				invalid++
				continue
			}
			ids[store.IDKey(e.id)]++
			lines = append(lines, store.JoinRel(dir, e.name)+"\t"+e.sha)
		}
	}
	for _, n := range ids {
		if n > 1 { // every leaf sharing an id is skipped
			invalid += n
		}
	}
	if invalid > 0 {
		return "", invalid, nil
	}
	if !byteOrdered(lines...) {
		return store.HashLeafLines(lines), 0, nil
	}
	slices.Sort(lines)
	return store.HashLines(lines), 0, lines
}

// byteOrdered reports whether store.SortLeafLines sorts lines by their
// bytes (no path holds a character it orders otherwise).
func byteOrdered(lines ...string) bool {
	for _, l := range lines {
		for i := 0; i < len(l); i++ {
			if l[i] >= 0xEE {
				return false
			}
		}
	}
	return true
}

// summaryAfter is the summary of state next, which differs from prev,
// whose leaf lines are known, by the leaves at the paths changed alone
// (each now as next records it, or gone): prev's lines with those
// leaves' lines taken out and put in. ok is false when it cannot be told
// that way (prev has problems, or a changed leaf is not part of the tree
// now, or takes an id another leaf may have: idTaken says whether more
// than one leaf has it), and the caller summarizes next whole.
func summaryAfter(prev, next *treeState, changed []string, idTaken func(id string) bool) (hash string, lines []string, ok bool) {
	if prev.lines == nil || prev.invalid > 0 || len(changed) > maxPatch {
		return "", nil, false
	}
	for dir, f := range next.folders {
		if o := prev.folders[dir]; o != f && (o == nil || !f.sameShape(o)) && (len(f.problems) > 0 || len(f.irregular) > 0) {
			return "", nil, false
		}
	}
	put := map[string]string{}
	for _, rel := range changed {
		e := next.folders[store.DirOf(rel)].entry(path.Base(rel))
		if e == nil {
			continue
		}
		if !e.indexed() || idTaken(e.id) {
			return "", nil, false
		}
		put[rel] = e.sha
	}
	if lines, ok = patchLines(prev.lines, changed, put); !ok {
		return "", nil, false
	}
	return store.HashLines(lines), lines, true
}

// patchLines returns sorted leaf lines (see treeState.lines) with the
// lines of the paths gone taken out and those of put (path -> sha256)
// put in; ok is false when a line of put would not sort by its bytes.
func patchLines(lines, gone []string, put map[string]string) ([]string, bool) {
	lines = slices.Clone(lines)
	find := func(rel string) (int, bool) {
		return slices.BinarySearchFunc(lines, rel, func(l, rel string) int {
			p, _, _ := strings.Cut(l, "\t")
			return strings.Compare(p, rel)
		})
	}
	for _, rel := range gone {
		if i, found := find(rel); found {
			lines = slices.Delete(lines, i, i+1)
		}
	}
	for _, rel := range slices.Sorted(maps.Keys(put)) {
		l := rel + "\t" + put[rel]
		if !byteOrdered(l) {
			return nil, false
		}
		i, found := find(rel)
		if found {
			lines[i] = l
		} else {
			lines = slices.Insert(lines, i, l)
		}
	}
	return lines, true
}

// HashAfter returns the nodes hash (store.HashLeaves) of the tree whose
// nodes hash is before, as this handle last read or recorded its leaf
// state, after the leaves at the paths gone (relative to nodes/) are
// removed and the leaves of put (path -> sha256 of the bytes) written:
// what a writer that read that tree and changes those leaves would
// compute over every leaf. ok is false when the handle does not hold
// that tree's leaf lines, and the caller hashes the tree itself.
func (db *DB) HashAfter(before string, gone []string, put map[string]string) (string, bool) {
	db.kept.Lock()
	s := db.kept.s
	db.kept.Unlock()
	if s == nil || before == "" || s.hash != before || s.invalid > 0 || len(gone)+len(put) > maxPatch {
		return "", false
	}
	lines := s.lines
	if lines == nil {
		lines = db.leafLines(s)
	}
	if lines == nil {
		return "", false
	}
	lines, ok := patchLines(lines, gone, put)
	if !ok {
		return "", false
	}
	return store.HashLines(lines), true
}

// leafLines returns the sorted leaf lines of state s (see
// treeState.lines), which s was read without: made once per nodes hash
// and kept by the handle beside the state (states are never changed once
// made), so that a write's plan and its sync (SyncPaths) hash the lines
// of the leaves they change into them instead of listing every leaf
// twice. nil when s has problems or a path that does not sort by its
// bytes.
func (db *DB) leafLines(s *treeState) []string {
	if s.lines != nil {
		return s.lines
	}
	db.kept.Lock()
	kl := db.kept.lines
	db.kept.Unlock()
	if kl.hash != "" && kl.hash == s.hash {
		return kl.l
	}
	if s.invalid > 0 || s.hash == "" {
		return nil
	}
	// The state's summary is recorded with it, in the same transaction
	// (setSummary): no two leaves share an id, and the lines are those
	// its hash was made of; neither is counted or hashed again.
	n := 0
	for _, f := range s.folders {
		n += len(f.leaves)
	}
	lines := make([]string, 0, n)
	for dir, f := range s.folders {
		if len(f.problems) > 0 {
			return nil
		}
		for i := range f.leaves {
			e := &f.leaves[i]
			if !e.indexed() {
				return nil
			}
			if dir == "" {
				lines = append(lines, e.name+"\t"+e.sha)
			} else {
				lines = append(lines, dir+"/"+e.name+"\t"+e.sha) // one allocation
			}
		}
	}
	if !byteOrdered(lines...) {
		return nil
	}
	slices.Sort(lines)
	db.kept.Lock()
	db.kept.lines.hash, db.kept.lines.l = s.hash, lines
	db.kept.Unlock()
	return lines
}

// Facts are the fields of a leaf a tree read hands out (no body):
// format, type, title, description, tags, derived_from, relates_to,
// depends_on, confidence, status, stale_after, the body's size, the
// graph links and the phrasings, in a compact binary form.

func appendFacts(b []byte, n *node.Node) []byte {
	b = binary.AppendUvarint(b, uint64(n.Format))
	for _, s := range []string{n.Type, n.Title, n.Description} {
		b = appendString(b, s)
	}
	for _, l := range [][]string{n.Tags, n.DerivedFrom, n.RelatesTo, n.DependsOn} {
		b = appendList(b, l)
	}
	for _, s := range []string{n.Confidence, n.Status, n.StaleAfter} {
		b = appendString(b, s)
	}
	b = binary.AppendUvarint(b, uint64(n.BodySize))
	return appendList(appendList(b, n.GraphLinks), n.Phrasings)
}

// decodeFactsInto decodes a leaf's facts into n, its lists into slab.
func decodeFactsInto(n *node.Node, slab *strSlab, rel, id, facts string) {
	r := &reader{s: facts}
	*n = node.Node{Path: rel, ID: id, Format: int(r.uint())}
	n.Type, n.Title, n.Description = r.str(), r.str(), r.str()
	n.Tags, n.DerivedFrom, n.RelatesTo, n.DependsOn = slab.list(r), slab.list(r), slab.list(r), slab.list(r)
	n.Confidence, n.Status, n.StaleAfter = r.str(), r.str(), r.str()
	n.BodySize = int(r.uint())
	n.GraphLinks, n.Phrasings = slab.list(r), slab.list(r)
	if len(n.GraphLinks) == 0 {
		n.GraphLinks = nil // as Parse gives a leaf without graph links
	}
	if len(n.Phrasings) == 0 {
		n.Phrasings = nil // as Parse gives a leaf without phrasings
	}
	n.Release(false)
}

// strSlab hands out the lists of many leaves from few allocations; each
// list is capped at its length, so appending to one never writes over
// the next.
type strSlab struct{ s []string }

func (sl *strSlab) list(r *reader) []string {
	n := r.count()
	if n == 0 {
		return []string{}
	}
	if cap(sl.s)-len(sl.s) < n {
		sl.s = make([]string, 0, max(n, 512))
	}
	start := len(sl.s)
	for range n {
		sl.s = append(sl.s, r.str())
	}
	return sl.s[start:len(sl.s):len(sl.s)]
}

// encodeFolder encodes a folder's stat blob (what a sync compares) and
// facts blob (what a tree read decodes).
func encodeFolder(f *folderState) (stat, facts []byte) {
	stat, facts = []byte{stateVersion}, []byte{}
	flags := uint64(0)
	if f.index {
		flags = 1
	}
	stat = binary.AppendUvarint(stat, flags)
	stat = appendList(stat, f.leftovers)
	stat = appendList(stat, f.irregular)
	stat = binary.AppendUvarint(stat, uint64(len(f.problems)))
	for _, p := range f.problems {
		stat = appendString(appendString(stat, p.Path), p.Msg)
	}
	stat = binary.AppendUvarint(stat, uint64(len(f.leaves)))
	for i := range f.leaves {
		e := &f.leaves[i]
		stat = appendString(stat, e.name)
		stat = binary.AppendVarint(binary.AppendVarint(stat, e.size), e.mtime)
		stat = appendString(appendString(stat, e.sha), e.id)
		flags := uint64(0)
		if e.oldLayout {
			flags = 1
		}
		stat = binary.AppendUvarint(stat, flags)
		stat = binary.AppendUvarint(stat, uint64(len(e.problems)))
		for _, p := range e.problems {
			stat = appendString(appendString(stat, p.Field), p.Msg)
		}
		facts = appendString(facts, e.facts)
	}
	return stat, facts
}

// decodeFolder decodes a folder's row; ok is false when it is damaged or
// of another version.
func decodeFolder(stat, facts string, withFacts bool) (*folderState, bool) {
	if len(stat) == 0 || stat[0] != stateVersion {
		return nil, false
	}
	r := &reader{s: stat[1:]}
	f := &folderState{index: r.uint() == 1, leftovers: r.list(), irregular: r.list(), hasFacts: withFacts}
	for range r.count() {
		f.problems = append(f.problems, Problem{Path: r.str(), Msg: r.str()})
	}
	fr := &reader{s: facts}
	f.leaves = make([]leafEntry, r.count())
	for i := range f.leaves {
		e := &f.leaves[i]
		e.name, e.size, e.mtime = r.str(), r.int(), r.int()
		e.sha, e.id = r.str(), r.str()
		e.oldLayout = r.uint() == 1
		if n := r.count(); n > 0 {
			e.problems = make([]node.Problem, n)
			for j := range e.problems {
				e.problems[j] = node.Problem{Field: r.str(), Msg: r.str()}
			}
		}
		if withFacts {
			e.facts = fr.str()
		}
	}
	if r.err || fr.err || len(r.s) > 0 || len(fr.s) > 0 || !slices.IsSortedFunc(f.leaves, func(a, b leafEntry) int { return strings.Compare(a.name, b.name) }) {
		return nil, false
	}
	return f, true
}

func appendString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendList(b []byte, l []string) []byte {
	b = binary.AppendUvarint(b, uint64(len(l)))
	for _, s := range l {
		b = appendString(b, s)
	}
	return b
}

// reader decodes from one string, so that the strings it returns share
// its memory; a malformed input sets err and returns zero values.
type reader struct {
	s   string
	err bool
}

func (r *reader) uint() uint64 {
	var x uint64
	for i := 0; i < len(r.s) && i < binary.MaxVarintLen64; i++ {
		b := r.s[i]
		x |= uint64(b&0x7f) << (7 * i)
		if b < 0x80 {
			r.s = r.s[i+1:]
			return x
		}
	}
	r.err, r.s = true, ""
	return 0
}

func (r *reader) int() int64 {
	u := r.uint()
	v := int64(u >> 1)
	if u&1 != 0 {
		v = ^v
	}
	return v
}

// count reads a length no larger than what is left to read.
func (r *reader) count() int {
	n := r.uint()
	if n > uint64(len(r.s)) {
		r.err, r.s = true, ""
		return 0
	}
	return int(n)
}

func (r *reader) str() string {
	n := r.count()
	if n > len(r.s) {
		r.err, r.s = true, ""
		return ""
	}
	s := r.s[:n]
	r.s = r.s[n:]
	return s
}

func (r *reader) list() []string {
	n := r.count()
	out := make([]string, n)
	for i := range out {
		out[i] = r.str()
	}
	return out
}

// ReadTree reads the tree of k through the current branch's index: the
// index is synced first (a stat per leaf; only the leaves that changed
// are read and parsed), then the tree is assembled from its leaf state.
// The result is what k.ReadTree (which parses every leaf) gives: the
// same leaves without bodies, hashes and problems. When
// the index cannot be opened or synced (a read-only copy, say), the tree
// is read from the files.
func ReadTree(ctx context.Context, k *store.KB) (*store.Tree, error) {
	t, _, err := ReadTreeDB(ctx, k)
	return t, err
}

// ReadTreeDB is ReadTree that also returns the index the tree was read
// from, synced, for a reader that asks it more (the bodies of the leaves,
// say); nil when the tree was read from the files.
func ReadTreeDB(ctx context.Context, k *store.KB) (*store.Tree, *DB, error) {
	branch, err := CurrentBranch(ctx, k)
	if err != nil {
		t, err := k.ReadTree(store.LoadOptions{})
		return t, nil, err
	}
	db, err := OpenShared(ctx, k, branch)
	if err != nil {
		t, err := k.ReadTree(store.LoadOptions{})
		return t, nil, err
	}
	t, _, err := db.Tree(ctx, k.NodesDir(), nil)
	if err != nil {
		t, err := k.ReadTree(store.LoadOptions{})
		return t, nil, err
	}
	k.NoteSkipped(t.Problems)
	return t, db, nil
}

// Tree syncs the index (SyncWith) and returns the tree its leaf state
// describes (see ReadTree).
func (db *DB) Tree(ctx context.Context, nodesDir string, ex *Extraction) (*store.Tree, Stats, error) {
	t, view, st, err := db.TreeOrSnapshot(ctx, nodesDir, ex)
	if view != nil {
		t = view.Tree()
	}
	return t, st, err
}

// TreeOrSnapshot is Tree for a reader that can read a store.TreeView: a
// handle that keeps the tree (see DB.tree) returns it as the snapshot it
// keeps, read-only and shared, instead of a copy; a handle asked for the
// first time returns a view of the leaf state that decodes only the
// leaves it is asked for (see stateView), or, when the tree has a leaf
// kk cannot read, the tree it assembled. Exactly one of the two is set
// when err is nil.
func (db *DB) TreeOrSnapshot(ctx context.Context, nodesDir string, ex *Extraction) (*store.Tree, store.TreeView, Stats, error) {
	st, s, err := db.sync(ctx, nodesDir, ex, true)
	if err != nil {
		return nil, nil, st, err
	}
	if !s.facts() {
		// Read in one snapshot, of the generation the sync left (or a
		// later one, whose state is as good).
		rtx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
		if err != nil {
			return nil, nil, st, err
		}
		defer rtx.Rollback()
		if s, err = db.state(ctx, rtx, true); err != nil {
			return nil, nil, st, err
		}
	}
	t, snap := db.tree(nodesDir, s)
	if snap == nil {
		return t, nil, st, nil
	}
	return nil, snap, st, nil
}

// tree returns the tree state s describes. A handle asked for a tree
// more than once (a long-running process's) keeps the tree of the last
// state it assembled one for as a snapshot, and returns it; for a later
// state it patches the snapshot by the folders that changed (see
// treeState.patch) instead of assembling every leaf again. The snapshot
// goes with the state it describes: what invalidates it is the leaf
// state's own rule. The first time, it returns a view of s read on demand
// (see stateView), or the tree assembled when s has problems.
func (db *DB) tree(nodesDir string, s *treeState) (*store.Tree, store.TreeView) {
	db.kept.Lock()
	k := db.kept.tree
	first := !db.kept.asked
	db.kept.asked = true
	db.kept.Unlock()
	if first {
		if v, ok := newStateView(nodesDir, s); ok {
			return nil, v
		}
		return s.tree(nodesDir), nil
	}
	var snap *store.Snapshot
	switch {
	case k.s == s:
		snap = k.snap
	case k.s != nil:
		var ok bool
		if snap, ok = s.patch(nodesDir, k.s, k.snap); ok {
			db.kept.Lock()
			db.kept.patches++
			db.kept.Unlock()
		}
	}
	if snap == nil {
		snap = s.snapshot(nodesDir)
	}
	if k.s != s {
		db.kept.Lock()
		db.kept.tree.s, db.kept.tree.snap = s, snap
		db.kept.Unlock()
	}
	return nil, snap
}

// Problems returns the problems a tree read gives (store.Tree.Problems:
// the leaves it skips, each with every problem in it) as the index last
// committed the leaf state, without syncing: none, without assembling
// the tree, when the state's summary counts none.
func (db *DB) Problems(ctx context.Context, nodesDir string) ([]error, error) {
	rtx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rtx.Rollback()
	s, err := db.state(ctx, rtx, false)
	if err != nil || s.invalid == 0 {
		return nil, err
	}
	if s, err = db.state(ctx, rtx, true); err != nil {
		return nil, err
	}
	return s.tree(nodesDir).Problems, nil
}

// Shape is what a sync found of the tree as a whole, read from the leaf
// state without the leaves' facts.
type Shape struct {
	Hash    string // the nodes hash of the leaves (store.HashLeaves); "" when Invalid > 0
	Invalid int    // leaves a tree read reports as problems
	Leaves  int    // leaves in the tree (when Invalid is 0)
	// IndexDirs holds the folders that contain an index.md; Leftovers
	// are the temporary files of interrupted writes (relative to
	// nodes/), as in store.Tree.
	IndexDirs map[string]bool
	Leftovers []string
}

// SyncShape syncs the index (SyncWith) and returns the shape of the tree
// it found, without assembling the tree: what a caller needs to tell
// whether anything derived from the whole tree must be made again.
func (db *DB) SyncShape(ctx context.Context, nodesDir string, ex *Extraction) (Stats, Shape, error) {
	st, s, err := db.sync(ctx, nodesDir, ex, false)
	if err != nil {
		return st, Shape{}, err
	}
	sh := Shape{Hash: s.hash, Invalid: s.invalid, IndexDirs: map[string]bool{}}
	for dir, f := range s.folders {
		if f.index {
			sh.IndexDirs[dir] = true
		}
		sh.Leftovers = append(sh.Leftovers, f.leftovers...)
		for i := range f.leaves {
			if f.leaves[i].indexed() {
				sh.Leaves++
			}
		}
	}
	slices.Sort(sh.Leftovers)
	return st, sh, nil
}

// Summary is what the branch index recorded of the whole tree at its last
// sync that changed anything (a sync that finds nothing changed writes
// nothing, so the summary stands for it too).
type Summary struct {
	Known   bool      // the index exists and holds a summary
	Hash    string    // the nodes hash of the leaves; "" when Invalid > 0
	Invalid int       // leaves a tree read reports as problems
	Synced  time.Time // when that sync ended
}

// ReadSummary reads the current branch's summary in one query of the
// database, without opening it for writing or syncing it: what
// session-start reads instead of the tree. Known is false when the
// branch has no index yet, or one of another schema, or cannot be told
// (outside git, with a config.yaml that does not load).
func ReadSummary(ctx context.Context, k *store.KB) (Summary, error) {
	branch, err := CurrentBranch(ctx, k)
	if err != nil {
		return Summary{}, nil
	}
	path := Path(k, branch)
	if _, err := os.Stat(path); err != nil {
		return Summary{}, nil
	}
	sum, err := readSummary(ctx, path)
	if err != nil {
		return Summary{}, fmt.Errorf("reading the index %s: %w", path, err)
	}
	return sum, nil
}

// readSummary is ReadSummary's query of the index file, opened
// read-only. SQLite cannot open a database in write-ahead-log mode whose
// folder it may not write and beside which no shared-memory file was left
// (the last process closed it cleanly): a read-only checkout, a CI cache
// restored without write access. It then reads the file as immutable,
// that is as it is on disk: nobody can write it there either, and the
// summary only decides a note for the user.
func readSummary(ctx context.Context, file string) (Summary, error) {
	sum, err := readSummaryIn(ctx, file, false)
	if ReadOnlyDBErr(err) {
		return readSummaryIn(ctx, file, true)
	}
	return sum, err
}

func readSummaryIn(ctx context.Context, file string, immutable bool) (Summary, error) {
	// Not dsn's pragmas: setting the journal mode is a write.
	q := "?mode=ro&_pragma=" + url.QueryEscape("busy_timeout("+strconv.Itoa(busyTimeoutMS)+")")
	if immutable {
		q += "&immutable=1"
	}
	db, err := sql.Open("sqlite", "file:"+uriPath(file)+q)
	if err != nil {
		return Summary{}, err
	}
	defer func() { _ = db.Close() }()
	// One read transaction: the schema checked is the one read. A file
	// without the meta table is an index another process is creating
	// (its schema is committed at once), read as one not synced yet.
	tx, err := db.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return Summary{}, err
	}
	defer func() { _ = tx.Rollback() }()
	var tables int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'`).Scan(&tables); err != nil {
		return Summary{}, err
	}
	if tables == 0 {
		return Summary{}, nil
	}
	rows, err := tx.QueryContext(ctx, `SELECT key, value FROM meta WHERE key IN ('schema_version', 'tree_hash', 'tree_invalid', 'last_sync')`)
	if err != nil {
		return Summary{}, err
	}
	defer rows.Close()
	m := map[string]string{}
	for rows.Next() {
		var key, value string
		if err := rows.Scan(&key, &value); err != nil {
			return Summary{}, err
		}
		m[key] = value
	}
	if err := rows.Err(); err != nil {
		return Summary{}, err
	}
	invalid, err1 := strconv.Atoi(m["tree_invalid"])
	synced, err2 := time.Parse(time.RFC3339Nano, m["last_sync"])
	if m["schema_version"] != strconv.Itoa(SchemaVersion) || err1 != nil || err2 != nil {
		return Summary{}, nil
	}
	return Summary{Known: true, Hash: m["tree_hash"], Invalid: invalid, Synced: synced}, nil
}
