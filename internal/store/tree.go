package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/progress"
	"github.com/kk-project/kk/internal/safetext"
	"github.com/kk-project/kk/internal/workpool"
)

// Reserved file names under nodes/ that are never leaves.
var reservedNames = map[string]bool{"index.md": true, "log.md": true}

// IsLeafName reports whether a file name under nodes/ names a leaf: a .md
// file other than index.md and log.md, not hidden.
func IsLeafName(name string) bool {
	return strings.HasSuffix(name, ".md") && !reservedNames[name] && !strings.HasPrefix(name, ".")
}

// Tree is every leaf of a knowledge base, read in one pass.
//
// A Tree is its caller's own: every read builds its leaves anew (a read
// through the branch index decodes them from its rows, a read of the
// files parses them), and no two trees, nor a tree and any cache, share
// a leaf. Put and Remove change the tree's lists and maps.
type Tree struct {
	// Leaves sorted by path (root collation, as kenkeep sorts them).
	Leaves []*node.Node
	// Dirs is every folder under nodes/, "" for nodes/ itself, sorted.
	Dirs []string
	// IndexDirs holds the folders that contain an index.md.
	IndexDirs map[string]bool

	Hashes map[string]string // leaf path -> LeafSum of its bytes (CRLF read as LF)
	// Leftovers are files a killed writer left under nodes/: temporary
	// files of an atomic write (.<name>.tmp-*), relative to nodes/. They
	// are never read as leaves; the next write removes them.
	Leftovers []string
	// Irregular are entries under nodes/ named like leaves that are not
	// regular files (FIFOs, sockets, devices), relative to nodes/. They
	// are never opened, so that a FIFO cannot hang a reader.
	Irregular []string
	// Problems are the leaves the read skipped, sorted by path: each a
	// *node.Error naming the file and every problem in it (front matter
	// that does not parse or lacks keys, an id two leaves share), or a
	// symlink that is broken or leads out of the tree. A leaf kk cannot
	// read never stops work on the others: readers and writers go on
	// with Leaves and say what they skipped; the checks (kk lint, kk
	// check, kk index rebuild --check) fail on Err.
	Problems []error

	byID    map[string]*node.Node // by IDKey
	skipped map[string]bool       // paths of the skipped leaves
	claimed map[string]string     // IDKey -> path of a skipped leaf naming that id
}

// ErrSharedID is the cause (errors.Is) of the problem of a leaf skipped
// because another leaf has its id: a valid leaf, which editing another
// field or adopting it does not mend.
var ErrSharedID = errors.New("another leaf has this id")

// ErrCopiedID is the cause of the problem of a leaf skipped because
// another leaf, whose file is named for the id (the original), has its id
// spelled alike: the skipped leaf is a copy, which kk node adopt gives an
// id of its own. errors.Is(ErrCopiedID, ErrSharedID) holds.
var ErrCopiedID = fmt.Errorf("%w: it is a copy of the leaf named for the id", ErrSharedID)

// AdoptCommand is the command that adopts the leaf files at rels
// (relative to nodes/), each quoted for a shell when it needs it, in
// backquotes: what a message about a file kk skips tells a person to run.
func AdoptCommand(rels ...string) string {
	var b strings.Builder
	b.WriteString("`kk node adopt")
	for _, rel := range rels {
		b.WriteString(" " + safetext.ShellQuote(path.Join(DirName, "nodes", rel)))
	}
	return b.String() + "`"
}

// Err returns a *TreeError listing the tree's problems, nil when it has
// none: for the faces that fail on a leaf kk cannot read.
func (t *Tree) Err() error {
	if len(t.Problems) == 0 {
		return nil
	}
	return &TreeError{Problems: t.Problems}
}

// Skipped reports whether the leaf file at rel (relative to nodes/) is one
// the read skipped: a writer must neither overwrite nor remove it.
func (t *Tree) Skipped(rel string) bool { return t.skipped[rel] }

// SkippedPaths lists the paths (relative to nodes/) of the leaves the
// read skipped, sorted.
func (t *Tree) SkippedPaths() []string {
	out := make([]string, 0, len(t.skipped))
	for p := range t.skipped {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// Claimed returns the path of a skipped leaf whose front matter names id,
// or, when its front matter names none, whose file is named <id>.md
// (compared without regard to case): a writer must not make another leaf
// with it.
func (t *Tree) Claimed(id string) (string, bool) {
	p, ok := t.claimed[IDKey(id)]
	return p, ok
}

// skip records a leaf the read could not take.
func (t *Tree) skip(rel, id string, problem error) {
	t.Problems = append(t.Problems, problem)
	if rel == "" {
		return
	}
	if t.skipped == nil {
		t.skipped, t.claimed = map[string]bool{}, map[string]string{}
	}
	t.skipped[rel] = true
	if id == "" {
		// Front matter that does not parse names no id; the file's name
		// does (a leaf is named <id>.md), and the leaf claims that one.
		if stem := strings.TrimSuffix(filepath.Base(rel), ".md"); node.CheckID(stem) == nil {
			id = stem
		}
	}
	if id != "" {
		if _, ok := t.claimed[IDKey(id)]; !ok {
			t.claimed[IDKey(id)] = rel
		}
	}
}

// IDKey is the key ids are compared by: an entity keeps exactly the id its
// writer gave, and every lookup, edge end and query matches it without
// regard to case.
func IDKey(id string) string { return strings.ToLower(id) }

// ByID returns the leaf with the given id (compared without regard to
// case).
func (t *Tree) ByID(id string) (*node.Node, bool) {
	n, ok := t.byID[IDKey(id)]
	return n, ok
}

// Resolve maps an id to its leaf's path; it is a node.Resolver.
func (t *Tree) Resolve(id string) (string, bool) {
	if n, ok := t.byID[IDKey(id)]; ok {
		return n.Path, true
	}
	return "", false
}

// Put records in memory that leaf n (whose file has the given hash) now
// exists, replacing old (nil when n is new). Writers use it so that they
// need not read the tree a second time to regenerate the index.
func (t *Tree) Put(old, n *node.Node, hash string) {
	if old != nil {
		t.Remove(old)
	}
	at, _ := slices.BinarySearchFunc(t.Leaves, n.Path, func(x *node.Node, p string) int { return LocaleCompare(x.Path, p) })
	t.Leaves = slices.Insert(t.Leaves, at, n)
	t.Hashes[n.Path] = hash
	t.byID[IDKey(n.ID)] = n
	if d := n.Dir(); !slices.Contains(t.Dirs, d) {
		for ; d != "" && !slices.Contains(t.Dirs, d); d = DirOf(d) {
			t.Dirs = append(t.Dirs, d)
		}
		SortLocale(t.Dirs)
	}
}

// Remove records in memory that leaf old no longer exists.
func (t *Tree) Remove(old *node.Node) {
	t.Leaves = slices.DeleteFunc(t.Leaves, func(x *node.Node) bool { return x == old })
	delete(t.Hashes, old.Path)
	if t.byID[IDKey(old.ID)] == old {
		delete(t.byID, IDKey(old.ID))
	}
}

// Clone returns a tree with t's leaves (shared, read-only as ever) in
// lists and maps of its own, for a caller that changes it with Put and
// Remove while t stays as it is.
func (t *Tree) Clone() *Tree {
	c := *t
	c.Leaves = slices.Clone(t.Leaves)
	c.Dirs = slices.Clone(t.Dirs)
	c.IndexDirs = maps.Clone(t.IndexDirs)
	c.Hashes = maps.Clone(t.Hashes)
	c.byID = maps.Clone(t.byID)
	c.Problems = slices.Clone(t.Problems)
	c.skipped = maps.Clone(t.skipped)
	c.claimed = maps.Clone(t.claimed)
	return &c
}

// LeafAt finds the leaf at p (relative to nodes/) among t's leaves.
func (t *Tree) LeafAt(p string) (*node.Node, bool) {
	i, ok := slices.BinarySearchFunc(t.Leaves, p, func(x *node.Node, p string) int { return LocaleCompare(x.Path, p) })
	if !ok {
		return nil, false
	}
	return t.Leaves[i], true
}

// Skip records that the leaf file at rel (relative to nodes/) cannot be
// read, with its problem: a writer that put such bytes back (kk serve's
// undo restoring a person's hand-written note) leaves it skipped, as a
// read would.
func (t *Tree) Skip(rel string, problem error) { t.skip(rel, "", problem) }

// Hash returns the sha256 (hex) of a leaf file's bytes.
func (t *Tree) Hash(path string) string { return t.Hashes[path] }

// TreeError lists every leaf that could not be read: Tree.Err for the
// faces that fail on one.
type TreeError struct {
	Problems []error
}

func (e *TreeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d problem(s) in the knowledge tree:", len(e.Problems))
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.Error())
	}
	return b.String()
}

func (e *TreeError) Unwrap() []error { return e.Problems }

// LoadOptions tune ReadTree.
type LoadOptions struct {
	// Bodies asks for leaf bodies.
	Bodies bool
	// Progress, when not nil, counts the leaves parsed.
	Progress *progress.Task

	// NoCache and NoSave have no effect (ReadTree keeps nothing between
	// reads); they stay until the callers outside this package (kk
	// serve's benchmarks) drop them.
	NoCache, NoSave bool
}

// LeafFile is one leaf file a listing found, with its size and mtime.
type LeafFile struct {
	Rel   string
	Abs   string
	Size  int64
	mtime int64
}

// ReadTree reads and parses every leaf under nodes/. A leaf it cannot
// read (its front matter does not parse or lacks keys, it shares its id
// with another, it is a broken symlink) is skipped and listed in the
// tree's Problems with every problem in it; the other leaves are read as
// ever. It returns an error only when nodes/ itself cannot be read. The
// problems are also noted on k (see NoteSkipped), for the face to warn
// about once. It keeps nothing between reads: a command reads the tree
// through the branch index (index.ReadTree), which parses only the leaves
// that changed since its last sync; ReadTree is the reference it is
// checked against, and the read of a copy no index belongs to.
func (k *KB) ReadTree(opts LoadOptions) (*Tree, error) {
	l, err := ScanDir(context.Background(), k.NodesDir())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", k.Rel(k.NodesDir()), err)
	}
	reads := make([]LeafRead, len(l.Files))
	opts.Progress.SetTotal(len(reads))
	Parallel(len(reads), func(i int) {
		defer opts.Progress.Add(1)
		r := &reads[i]
		r.File = l.Files[i]
		r.Leaf, r.Hash, r.Err = readLeaf(l.Files[i])
		if r.Leaf != nil {
			r.Leaf.Release(opts.Bodies)
		}
	})
	t := NewTree(l, reads)
	k.NoteSkipped(t.Problems)
	return t, nil
}

// LeafRead is what a tree read found of one leaf file: the leaf (nil
// when Err says why the file is not part of the tree) and the sha256
// (hex) of its bytes.
type LeafRead struct {
	File LeafFile
	Leaf *node.Node
	Hash string
	Err  error
}

// NamedFor reports whether the leaf file at rel (relative to nodes/) is
// named for id: <id>.md, as kk and kenkeep name every leaf they write.
func NamedFor(rel, id string) bool {
	return path.Base(rel) == id+".md"
}

// Holder returns which of the leaves at paths, which all have the id id,
// the id names: the only one, or else the only one whose file is named
// for it (a note copied in a file manager, "practice-x (copy).md", keeps
// the id of practice-x.md, which still holds it). ok is false when that
// cannot be told (two copies named for it in two folders, or none).
func Holder(id string, paths []string) (int, bool) {
	if len(paths) == 1 {
		return 0, true
	}
	at := -1
	for i, p := range paths {
		if NamedFor(p, id) {
			if at >= 0 {
				return -1, false
			}
			at = i
		}
	}
	return at, at >= 0
}

// HolderOf is Holder for leaves whose ids are one id compared without
// regard to case (ids[i] the id of the leaf at paths[i], types[i] its
// type). Spelled alike, the id is held as Holder says. Spelled
// differently (practice-base-one beside practice-Base-One), they are two
// notes' ids, not a copy's: a leaf of a type whose ids kk derives
// (node.DerivedTypes) spelling its id with an upper-case letter, an id no
// writer gives and lint rejects, holds nothing (CaseLoser), and the one
// other leaf named for its id holds it; ok is false when that is not
// exactly one (REQ-1 beside req-1: neither).
func HolderOf(ids, types, paths []string) (int, bool) {
	if !slices.ContainsFunc(ids, func(id string) bool { return id != ids[0] }) {
		return Holder(ids[0], paths)
	}
	at := -1
	for i := range ids {
		if CaseLoser(types[i], ids[i]) || !NamedFor(paths[i], ids[i]) {
			continue
		}
		if at >= 0 {
			return -1, false
		}
		at = i
	}
	return at, at >= 0
}

// CaseLoser reports whether a leaf of type typ with the id id yields its
// id to a leaf whose id differs from it only in case (see HolderOf): an
// id of a derived type with an upper-case (ASCII) letter.
func CaseLoser(typ, id string) bool {
	return slices.Contains(node.DerivedTypes, typ) && strings.ContainsFunc(id, func(r rune) bool { return 'A' <= r && r <= 'Z' })
}

// NewTree assembles the tree of a listing from its leaf files as read
// (in any order), by ReadTree's rules: the listing's problems and the
// leaves that could not be read are skipped, and so are the leaves that
// share an id, but the one the id names (see Holder), which is read,
// linked and written as the only leaf of its id.
func NewTree(l *Listing, reads []LeafRead) *Tree {
	rels := make([]string, len(reads))
	for i := range reads {
		rels[i] = reads[i].File.Rel
	}
	dirs := slices.Clone(l.Dirs)
	SortLocale(dirs)
	t := &Tree{Dirs: dirs, IndexDirs: l.IndexDirs, Leftovers: l.Leftovers, Irregular: l.Irregular,
		Leaves: make([]*node.Node, 0, len(reads)), Hashes: make(map[string]string, len(reads)), byID: make(map[string]*node.Node, len(reads))}
	for _, p := range l.Problems {
		rel := ""
		if ne, ok := errors.AsType[*node.Error](p); ok {
			rel = ne.Path
		}
		t.skip(rel, "", p)
	}
	// The leaves that parse, in path order, with their id keys; byID
	// holds the first leaf of each id, sharing the leaves of the ids
	// that more than one leaf has (few or none: not a map of every id).
	read := make([]*LeafRead, 0, len(reads))
	keys := make([]string, 0, len(reads))
	var sharing map[string][]*node.Node
	for _, i := range SortedOrder(rels) {
		r := &reads[i]
		if r.Err != nil {
			id := ""
			if ne, ok := errors.AsType[*node.Error](r.Err); ok {
				id = ne.ID
			}
			if p := MergeToolTemporary(r.File.Rel, id); p != nil {
				// git mergetool's temporary, empty or cut short: said
				// to be one, not judged as a note.
				t.skip(r.File.Rel, id, p)
				continue
			}
			t.skip(r.File.Rel, id, r.Err)
			continue
		}
		key := IDKey(r.Leaf.ID)
		read, keys = append(read, r), append(keys, key)
		first, shared := t.byID[key]
		if !shared {
			t.byID[key] = r.Leaf
			continue
		}
		if sharing == nil {
			sharing = map[string][]*node.Node{}
		}
		if sharing[key] == nil {
			sharing[key] = []*node.Node{first}
		}
		sharing[key] = append(sharing[key], r.Leaf)
	}
	holders := map[string]*node.Node{} // the leaf each shared id names, when one does
	for key, group := range sharing {
		delete(t.byID, key)
		ids, types, paths := make([]string, len(group)), make([]string, len(group)), make([]string, len(group))
		for i, n := range group {
			ids[i], types[i], paths[i] = n.ID, n.Type, n.Path
		}
		if i, ok := HolderOf(ids, types, paths); ok {
			holders[key] = group[i]
			t.byID[key] = group[i]
		}
	}
	for i, r := range read {
		n := r.Leaf
		group := sharing[keys[i]]
		if group == nil || holders[keys[i]] == n {
			t.Hashes[n.Path] = r.Hash
			t.Leaves = append(t.Leaves, n)
			continue
		}
		var others []string
		for _, o := range group {
			if o != n {
				others = append(others, o.Path)
			}
		}
		if p := MergeToolTemporary(n.Path, n.ID); p != nil {
			// git mergetool's temporary, a copy of the note it was left
			// beside: no copy to adopt, but a file to remove.
			p.ID = n.ID
			t.skip(n.Path, n.ID, p)
			continue
		}
		adopt := AdoptCommand(n.Path)
		msg := fmt.Sprintf("duplicate id %s (also used by %s); ids must be unique: if this file is a copy, give it an id of its own with %s (kk_id and file name), or delete it", n.ID, strings.Join(others, ", "), adopt)
		cause := ErrSharedID
		switch h := holders[keys[i]]; {
		case h != nil && h.ID == n.ID:
			msg = fmt.Sprintf("duplicate id %s: %s, named for it, holds it; this file is a copy: give it an id of its own with %s (kk_id and file name), or delete it", n.ID, h.Path, adopt)
			cause = ErrCopiedID
		case h != nil:
			msg = fmt.Sprintf("id %s differs only in case from %s, which %s holds (ids are compared without regard to case); give this note an id of its own, in lower case (kk_id and file name; %s gives it one), or delete it", n.ID, h.ID, h.Path, adopt)
		case slices.ContainsFunc(group, func(o *node.Node) bool { return o.ID != n.ID }):
			msg = fmt.Sprintf("id %s is also used by %s (ids are compared without regard to case); ids must be unique: if this file is a copy, give it an id of its own with %s (kk_id and file name), or delete it", n.ID, strings.Join(others, ", "), adopt)
		}
		t.skip(n.Path, n.ID, &node.Error{Path: n.Path, Field: idKey(n), Msg: msg, ID: n.ID, Err: cause})
	}
	slices.SortStableFunc(t.Problems, func(a, b error) int { return strings.Compare(problemPath(a), problemPath(b)) })
	return t
}

// problemPath is the file a tree problem is about.
func problemPath(err error) string {
	if ne, ok := errors.AsType[*node.Error](err); ok {
		return ne.Path
	}
	return err.Error()
}

func idKey(n *node.Node) string {
	if n.Format == 2 {
		return "id"
	}
	return node.KeyID
}

func readLeaf(f LeafFile) (*node.Node, string, error) {
	if f.Size > node.MaxSize {
		return nil, "", &node.Error{Path: f.Rel, Msg: fmt.Sprintf("leaf is %d bytes; the limit is %d", f.Size, node.MaxSize)}
	}
	src, err := os.ReadFile(f.Abs)
	if err != nil {
		return nil, "", &node.Error{Path: f.Rel, Msg: err.Error()}
	}
	n, err := node.Parse(f.Rel, src)
	if err != nil {
		return nil, "", err
	}
	return n, LeafSum(src), nil
}

// ReadLeaf reads one leaf by its path relative to nodes/, with its body and
// everything needed to write it back.
func (k *KB) ReadLeaf(rel string) (*node.Node, error) {
	src, err := os.ReadFile(k.NodePath(rel))
	if err != nil {
		return nil, err
	}
	return node.Parse(rel, src)
}

// LeadsOutOfTree reports whether the leaf path rel (relative to nodes/)
// reaches a file outside the knowledge tree through a symlink: the link
// itself, or a folder on its way. The tree's readers skip such a leaf
// (classify), so a read by path refuses it too. A path that does not
// resolve is not reported (its read says it is missing).
func (k *KB) LeadsOutOfTree(rel string) bool {
	target, err := filepath.EvalSymlinks(k.NodePath(rel))
	if err != nil {
		return false
	}
	root, err := filepath.EvalSymlinks(k.NodesDir())
	if err != nil {
		return false
	}
	return !within(root, target)
}

// Scan lists the leaf files and folders under nodes/ in a stable order. A
// symlink that is broken or leads out of the tree is a *TreeError.
func (k *KB) Scan() (*Listing, error) {
	l, err := ScanDir(context.Background(), k.NodesDir())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", k.Rel(k.NodesDir()), err)
	}
	return k.scanned(l)
}

// scanned puts a listing in ScanDir's order into the tree's.
func (k *KB) scanned(l *Listing) (*Listing, error) {
	if len(l.Problems) > 0 {
		return nil, &TreeError{Problems: l.Problems}
	}
	rels := make([]string, len(l.Files))
	for i, f := range l.Files {
		rels[i] = f.Rel
	}
	sorted := make([]LeafFile, len(l.Files))
	for i, j := range SortedOrder(rels) {
		sorted[i] = l.Files[j]
	}
	l.Files = sorted
	SortLocale(l.Dirs)
	return l, nil
}

// ScanDir is the one tree scanner: every reader of nodes/ (the tree, the
// per-branch index, lint) lists it by the same rules (classify, which the
// folder reads of the hooks share). Files and folders come in byte order
// (Scan puts them in the tree's collation order); problems (symlinks that
// are broken or lead out of the tree) are listed, not returned as an
// error.
func ScanDir(ctx context.Context, root string) (*Listing, error) {
	l := &Listing{IndexDirs: map[string]bool{}}
	if _, err := os.Stat(root); errors.Is(err, fs.ErrNotExist) {
		l.Dirs = []string{""}
		return l, nil
	}
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	if err := walk(ctx, root, realRoot, l); err != nil {
		return nil, err
	}
	l.sortBytes()
	return l, nil
}

// sortBytes puts a listing in ScanDir's order.
func (l *Listing) sortBytes() {
	slices.SortFunc(l.Files, func(a, b LeafFile) int { return strings.Compare(a.Rel, b.Rel) })
	slices.Sort(l.Dirs)
	slices.Sort(l.Leftovers)
	slices.Sort(l.Irregular)
	slices.Sort(l.Linked)
	slices.SortFunc(l.Problems, func(a, b error) int { return strings.Compare(a.Error(), b.Error()) })
}

// add records one classified entry.
func (l *Listing) add(kind entryKind, rel string, f LeafFile, problem error) {
	switch kind {
	case entryProblem:
		l.Problems = append(l.Problems, problem)
	case entryDir:
		l.Dirs = append(l.Dirs, rel)
	case entryIndex:
		l.IndexDirs[DirOf(rel)] = true
	case entryLeaf:
		l.Files = append(l.Files, f)
	case entryLeftover:
		l.Leftovers = append(l.Leftovers, rel)
	case entryIrregular:
		l.Irregular = append(l.Irregular, rel)
	}
}

// mergeAll adds what the parts list.
func (l *Listing) mergeAll(parts []*Listing) {
	files := len(l.Files)
	for _, p := range parts {
		files += len(p.Files)
	}
	l.Files = slices.Grow(l.Files, files-len(l.Files))
	for _, p := range parts {
		l.merge(p)
	}
}

// merge adds what part lists.
func (l *Listing) merge(part *Listing) {
	l.Files = append(l.Files, part.Files...)
	l.Dirs = append(l.Dirs, part.Dirs...)
	for d := range part.IndexDirs {
		l.IndexDirs[d] = true
	}
	l.Leftovers = append(l.Leftovers, part.Leftovers...)
	l.Irregular = append(l.Irregular, part.Irregular...)
	l.Problems = append(l.Problems, part.Problems...)
	l.Linked = append(l.Linked, part.Linked...)
}

// Listing is what Scan found under nodes/.
type Listing struct {
	Files     []LeafFile      // leaf files, in root collation order
	Dirs      []string        // every folder, "" for nodes/ itself, sorted
	IndexDirs map[string]bool // folders holding an index.md
	Leftovers []string        // temporary files of interrupted atomic writes
	Irregular []string        // *.md entries that are not regular files
	Problems  []error         // symlinks that are broken or lead out of the tree
	// Linked are the folders holding a symlink or a leaf with more than
	// one link, whose content may change without anything changing in
	// the folder (on Unix; see ScanPart).
	Linked []string
}

// ModTime is the leaf file's modification time, in Unix nanoseconds.
func (f LeafFile) ModTime() int64 { return f.mtime }

// NewLeafFile describes a leaf file whose size and mtime (Unix
// nanoseconds) are known.
func NewLeafFile(rel, abs string, size, mtime int64) LeafFile {
	return LeafFile{Rel: rel, Abs: abs, Size: size, mtime: mtime}
}

// IsTempName reports whether a file name is that of an atomic write's
// temporary file (atomicfile writes .<name>.tmp-<random> beside the target).
func IsTempName(name string) bool {
	return strings.HasPrefix(name, ".") && strings.Contains(name, ".tmp-")
}

// IndexFolderMsg is the problem of a folder named index.md under nodes/.
const IndexFolderMsg = "is a folder, named as the index file kk generates for the folder holding it: rename it (git mv), then run `kk index rebuild`; until then kk leaves out the notes in it"

// entryKind is what an entry under nodes/ is to the tree readers.
type entryKind int

const (
	entryNone      entryKind = iota // not part of the tree (other files, dot files, links to folders)
	entrySkipDir                    // a dot folder: not part of the tree, nor anything in it
	entryDir                        // a folder of the tree
	entryIndex                      // a folder's index.md
	entryLeaf                       // a leaf
	entryProblem                    // a symlink that is broken or leads out of the tree
	entryLeftover                   // the temporary file of an interrupted atomic write
	entryIrregular                  // a *.md that is not a regular file (a FIFO, a device): never opened
)

// classify says what the entry d at path p (rel, relative to nodes/) is,
// by the one rule both tree readers (Scan, ReadFolder) follow. realRoot is
// nodes/ with its symlinks resolved. A leaf reached through a symlink
// comes with its size and mtime; a regular one with size -1 (not stated
// yet).
func classify(realRoot, p, rel string, d fs.DirEntry) (entryKind, LeafFile, error) {
	name := d.Name()
	if rel != "" && strings.HasPrefix(name, ".") {
		switch {
		case d.IsDir():
			return entrySkipDir, LeafFile{}, nil
		case IsTempName(name):
			return entryLeftover, LeafFile{}, nil
		}
		return entryNone, LeafFile{}, nil
	}
	if d.Type()&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(p)
		if err != nil {
			return entryProblem, LeafFile{}, &node.Error{Path: rel, Msg: fmt.Sprintf("%s: %v", BrokenSymlinkMsg, err)}
		}
		if !within(realRoot, target) {
			return entryProblem, LeafFile{}, &node.Error{Path: rel, Msg: fmt.Sprintf("%s (to %s); replace it with a real file", OutsideSymlinkMsg, target)}
		}
		fi, err := os.Stat(target)
		if err != nil || fi.IsDir() {
			return entryNone, LeafFile{}, nil // links to folders inside the tree are not followed
		}
		if e := caseOfMD(name, rel, fi.Mode()); e != nil {
			return entryProblem, LeafFile{}, e
		}
		if strings.HasSuffix(name, ".md") && !reservedNames[name] {
			if !fi.Mode().IsRegular() {
				return entryIrregular, LeafFile{}, nil
			}
			return entryLeaf, LeafFile{Rel: rel, Abs: p, Size: fi.Size(), mtime: fi.ModTime().UnixNano()}, nil
		}
		return entryNone, LeafFile{}, nil
	}
	switch {
	case d.IsDir() && name == "index.md":
		// kk writes the folder's generated index there: a folder in its
		// place (made by hand) would fail every write and every rebuild.
		return entryProblem, LeafFile{}, &node.Error{Path: rel, Msg: IndexFolderMsg}
	case d.IsDir():
		return entryDir, LeafFile{}, nil
	case !strings.HasSuffix(name, ".md"):
		if e := caseOfMD(name, rel, d.Type()); e != nil {
			return entryProblem, LeafFile{}, e
		}
		return entryNone, LeafFile{}, nil
	case !d.Type().IsRegular():
		return entryIrregular, LeafFile{}, nil
	case name == "index.md":
		return entryIndex, LeafFile{}, nil
	case reservedNames[name]:
		return entryNone, LeafFile{}, nil
	}
	return entryLeaf, LeafFile{Rel: rel, Abs: p, Size: -1}, nil
}

// caseOfMD is the problem of a regular file whose name is a note's but
// for its end: .md in another case (.MD, .Md, .mD), .markdown, or .md
// followed by spaces or dots (a name typed with a space after it). kk,
// reading only names ending in .md, would otherwise leave out without a
// word the note a person saved so. Hidden files (an editor's swap file)
// are never asked about.
func caseOfMD(name, rel string, mode fs.FileMode) error {
	want, ok := MisnamedMD(name)
	if !mode.IsRegular() || !ok {
		return nil
	}
	if trimmed := strings.TrimRight(name, " ."); trimmed != name {
		return &node.Error{Path: rel, Msg: fmt.Sprintf("the name %q has spaces or dots after its extension, which Windows drops, so a Windows clone could not check it out; kk reads only files named *.md: rename it to %s", name, want)}
	}
	ext := filepath.Ext(name)
	return &node.Error{Path: rel, Msg: fmt.Sprintf("the name ends in %s; kk reads only files named *.md: rename it to %s", ext, want)}
}

// MisnamedMD reports whether a file name is a markdown note's that kk
// does not read for its end (.MD, .Md or .mD, .markdown in any case, .md
// followed by spaces or dots), and the name ending in .md it needs: a
// file whose problem renaming it, not editing it, mends.
func MisnamedMD(name string) (string, bool) {
	trimmed := strings.TrimRight(name, " .")
	ext := filepath.Ext(trimmed)
	base := strings.TrimSuffix(trimmed, ext)
	if base == "" || !strings.EqualFold(ext, ".md") && !strings.EqualFold(ext, ".markdown") {
		return "", false
	}
	want := base + ".md"
	return want, want != name
}

func DirOf(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return ""
}

func within(root, target string) bool {
	r, err := filepath.Rel(root, target)
	return err == nil && r != ".." && !strings.HasPrefix(r, ".."+string(filepath.Separator)) && !filepath.IsAbs(r)
}

// parallel runs fn(0..n-1) on all cores.
func Parallel(n int, fn func(i int)) { workpool.Run(0, n, fn) }

// parallelN runs fn(0..n-1) on up to workers goroutines.
func ParallelN(workers, n int, fn func(i int)) { workpool.Run(workers, n, fn) }

// SkippedLeaf is a leaf file a read skipped, as the --json outputs list
// it: its path relative to the repository root and every problem in it.
type SkippedLeaf struct {
	Path     string         `json:"path"`
	Problems []node.Problem `json:"problems"`
}

// SkippedLeaves lists the problems of a tree (Tree.Problems) for output.
func SkippedLeaves(problems []error) []SkippedLeaf {
	out := make([]SkippedLeaf, 0, len(problems))
	for _, p := range problems {
		if ne, ok := errors.AsType[*node.Error](p); ok {
			out = append(out, SkippedLeaf{Path: DirName + "/nodes/" + ne.Path, Problems: ne.Problems()})
			continue
		}
		out = append(out, SkippedLeaf{Path: DirName + "/nodes", Problems: []node.Problem{{Msg: p.Error()}}})
	}
	return out
}

// The problems of a leaf that is a symbolic link kk does not follow: to
// nothing, or out of the knowledge tree.
const (
	BrokenSymlinkMsg  = "broken symlink"
	OutsideSymlinkMsg = "symlink points outside the knowledge tree"
)
