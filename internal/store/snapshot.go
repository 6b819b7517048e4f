package store

import (
	"iter"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/kk-project/kk/internal/node"
)

// A Snapshot is a tree that no one can change, for a long-running
// process to keep between reads (the branch index keeps the tree of the
// leaf state it last recorded, see index.DB.Tree): its leaves are never
// handed out. Tree gives each caller a copy of its own (new leaves, new
// lists and maps), which the caller may change as any tree read; Patch
// makes the snapshot of a changed tree, sharing the leaves that did not
// change (no one holds them, so no one changes them).
type Snapshot struct {
	t *Tree
	f atomic.Pointer[snapFacts] // gathered on first need (facts), carried by Patch
}

// NewSnapshot assembles the tree of a listing from its leaf files as
// read, as NewTree does, and keeps it as a snapshot: the leaves of reads
// become the snapshot's and must not be used by the caller afterwards.
func NewSnapshot(l *Listing, reads []LeafRead) *Snapshot {
	return &Snapshot{t: NewTree(l, reads)}
}

// Leaves is the number of leaves of the snapshot's tree.
func (s *Snapshot) Leaves() int { return len(s.t.Leaves) }

// Tree returns the snapshot's tree as a tree of the caller's own.
func (s *Snapshot) Tree() *Tree {
	t := s.t
	c := &Tree{
		Dirs: slices.Clone(t.Dirs), IndexDirs: maps.Clone(t.IndexDirs), Hashes: maps.Clone(t.Hashes),
		Leftovers: slices.Clone(t.Leftovers), Irregular: slices.Clone(t.Irregular),
		skipped: maps.Clone(t.skipped), claimed: maps.Clone(t.claimed),
	}
	c.Problems = copyProblems(t.Problems)
	// The leaves in one allocation and their lists in another, as a read
	// through the index decodes them.
	nodes := make([]node.Node, len(t.Leaves))
	c.Leaves = make([]*node.Node, len(t.Leaves))
	c.byID = make(map[string]*node.Node, len(t.byID))
	words := 0
	for _, n := range t.Leaves {
		words += len(n.Tags) + len(n.DerivedFrom) + len(n.RelatesTo) + len(n.DependsOn) + len(n.Phrasings) + len(n.GraphLinks)
	}
	slab := make([]string, 0, words)
	list := func(l []string) []string {
		if l == nil {
			return nil
		}
		start := len(slab)
		slab = append(slab, l...)
		return slab[start:len(slab):len(slab)]
	}
	for i, n := range t.Leaves {
		m := &nodes[i]
		*m = *n
		m.Tags, m.DerivedFrom, m.RelatesTo, m.DependsOn = list(n.Tags), list(n.DerivedFrom), list(n.RelatesTo), list(n.DependsOn)
		m.Phrasings, m.GraphLinks = list(n.Phrasings), list(n.GraphLinks)
		m.Generated, m.Verified, m.Sources = copyValue(n.Generated), copyValue(n.Verified), copyValue(n.Sources)
		m.Body = slices.Clone(n.Body)
		c.Leaves[i] = m
		c.byID[IDKey(m.ID)] = m
	}
	return c
}

// Problems returns the snapshot's Problems (see Tree.Problems), a list of
// the caller's own.
func (s *Snapshot) Problems() []error { return copyProblems(s.t.Problems) }

func copyProblems(problems []error) []error {
	var out []error
	for _, p := range problems {
		if ne, ok := p.(*node.Error); ok {
			e := *ne
			e.More = slices.Clone(ne.More)
			p = &e
		}
		out = append(out, p)
	}
	return out
}

// copyValue copies a decoded YAML value: its maps and lists are new.
func copyValue(v any) any {
	switch x := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(x))
		for k, e := range x {
			m[k] = copyValue(e)
		}
		return m
	case []any:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = copyValue(e)
		}
		return l
	default:
		return v
	}
}

// Patch returns the snapshot of the tree after the leaves at the paths
// gone (relative to nodes/) are removed and the leaves put are put (each
// read whole, Err nil, at a path gone names or none holds), with the
// folders dirs and those of indexDirs holding an index.md (both as a
// listing gives them). ok is false when the result would not be what
// NewTree gives for the new files, by its rules: a leaf gone that was
// not one of the tree's (a skipped one), or a leaf put whose id another
// leaf has or a skipped leaf claims (every leaf sharing an id is
// skipped); the caller then assembles the tree anew. The leaves of put
// become the snapshot's.
func (s *Snapshot) Patch(gone []string, put []LeafRead, dirs []string, indexDirs map[string]bool) (*Snapshot, bool) {
	t := s.t.Clone() // the leaves are shared: no one changes them
	var goneLeaves, putLeaves []*node.Node
	for _, rel := range gone {
		n, ok := t.LeafAt(rel)
		if !ok || t.skipped[rel] {
			return nil, false
		}
		t.Remove(n)
		goneLeaves = append(goneLeaves, n)
	}
	for _, r := range put {
		if r.Err != nil || r.Leaf == nil || r.Leaf.Path != r.File.Rel || t.skipped[r.File.Rel] {
			return nil, false
		}
		key := IDKey(r.Leaf.ID)
		if _, taken := t.byID[key]; taken {
			return nil, false
		}
		if _, claimed := t.claimed[key]; claimed {
			return nil, false
		}
		if _, there := t.LeafAt(r.File.Rel); there {
			return nil, false
		}
		t.Put(nil, r.Leaf, r.Hash)
		putLeaves = append(putLeaves, r.Leaf)
	}
	t.Dirs = slices.Clone(dirs)
	SortLocale(t.Dirs)
	t.IndexDirs = maps.Clone(indexDirs)
	next := &Snapshot{t: t}
	if f := s.f.Load(); f != nil {
		next.f.Store(f.patched(goneLeaves, putLeaves))
	}
	return next, true
}

// LeafView is a leaf of a Snapshot as readers see it: its fields through
// accessors that return values, never the snapshot's leaf itself, so that nothing a reader does
// changes what the next reader sees. Node gives a copy of the reader's
// own, to change or to keep.
type LeafView struct{ n *node.Node }

// Path is the leaf's path relative to nodes/.
func (l LeafView) Path() string { return l.n.Path }

// ID is the leaf's id as its front matter spells it.
func (l LeafView) ID() string { return l.n.ID }

// Names reports whether the leaf's relates_to or depends_on names an id
// keys holds (by IDKey).
func (l LeafView) Names(keys map[string]bool) bool { return Names(l.n, keys) }

// Names reports whether n's relates_to or depends_on names an id keys
// holds (by IDKey).
func Names(n *node.Node, keys map[string]bool) bool {
	for _, ids := range [][]string{n.RelatesTo, n.DependsOn} {
		for _, id := range ids {
			if keys[IDKey(id)] {
				return true
			}
		}
	}
	return false
}

// Dir is the folder of the leaf relative to nodes/ ("" for nodes/).
func (l LeafView) Dir() string { return l.n.Dir() }

// Node returns a copy of the leaf of the caller's own (its lists and
// values are new).
func (l LeafView) Node() *node.Node {
	m := *l.n
	m.Tags, m.DerivedFrom, m.RelatesTo, m.DependsOn = slices.Clone(l.n.Tags), slices.Clone(l.n.DerivedFrom), slices.Clone(l.n.RelatesTo), slices.Clone(l.n.DependsOn)
	m.Phrasings, m.GraphLinks = slices.Clone(l.n.Phrasings), slices.Clone(l.n.GraphLinks)
	m.Generated, m.Verified, m.Sources = copyValue(l.n.Generated), copyValue(l.n.Verified), copyValue(l.n.Sources)
	m.Body = slices.Clone(l.n.Body)
	return &m
}

// All lists the snapshot's leaves in the tree's order (by path).
func (s *Snapshot) All() iter.Seq[LeafView] {
	return func(yield func(LeafView) bool) {
		for _, n := range s.t.Leaves {
			if !yield(LeafView{n}) {
				return
			}
		}
	}
}

// ByID returns the leaf with the given id (compared without regard to
// case).
func (s *Snapshot) ByID(id string) (LeafView, bool) {
	n, ok := s.t.ByID(id)
	return LeafView{n}, ok
}

// LeafAt returns the leaf at rel (relative to nodes/).
func (s *Snapshot) LeafAt(rel string) (LeafView, bool) {
	n, ok := s.t.LeafAt(rel)
	return LeafView{n}, ok
}

// Hash returns the hash of the leaf file at rel (LeafSum: the sha256
// (hex) of its bytes, CRLF read as LF).
func (s *Snapshot) Hash(rel string) (string, bool) {
	h, ok := s.t.Hashes[rel]
	return h, ok
}

// IndexDirs returns the folders holding an index.md, a set of the
// caller's own.
func (s *Snapshot) IndexDirs() map[string]bool { return maps.Clone(s.t.IndexDirs) }

// Leftovers lists the temporary files of interrupted writes (see
// Tree.Leftovers), a list of the caller's own.
func (s *Snapshot) Leftovers() []string { return slices.Clone(s.t.Leftovers) }

// Skipped reports whether the leaf file at rel is one the read skipped
// (see Tree.Skipped).
func (s *Snapshot) Skipped(rel string) bool { return s.t.Skipped(rel) }

// Claimed returns the path of a skipped leaf naming id (see
// Tree.Claimed).
func (s *Snapshot) Claimed(id string) (string, bool) { return s.t.Claimed(id) }

// RequireV3 is store.RequireV3 of the snapshot's tree.
func (s *Snapshot) RequireV3() error { return RequireV3(s.t) }
