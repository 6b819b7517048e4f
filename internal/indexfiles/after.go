package indexfiles

import (
	"iter"
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// after is the tree as a change leaves it, as bringing a generation
// forward reads it: either a tree the caller assembled and changed (t),
// or a store.Snapshot the change was made on (snap: the branch index's
// kept tree, read through its views, never changed or copied whole) with
// the leaves the change removed (gone) and wrote (put, the writer's own
// nodes). Only the leaves rendered (the folders a change reaches, the
// rankings they show) are copied out of the snapshot, once each.
type after struct {
	t *store.Tree

	snap   *store.Snapshot
	gone   map[string]bool       // paths of the snapshot's leaves removed
	put    []*node.Node          // in the tree's order
	hashes map[string]string     // of put, by path
	copies map[string]*node.Node // the snapshot's leaves copied out, by path
}

// leafRef is one leaf of an after: a node (the tree's, or a leaf the
// change wrote) or a view of a snapshot's leaf.
type leafRef struct {
	n *node.Node
	v store.LeafView
}

func (r leafRef) path() string {
	if r.n != nil {
		return r.n.Path
	}
	return r.v.Path()
}

func (r leafRef) dir() string {
	if r.n != nil {
		return r.n.Dir()
	}
	return r.v.Dir()
}

func (r leafRef) tags() iter.Seq[string] {
	if r.n != nil {
		return slices.Values(r.n.Tags)
	}
	return r.v.Tags()
}

func (r leafRef) relatesTo() iter.Seq[string] {
	if r.n != nil {
		return slices.Values(r.n.RelatesTo)
	}
	return r.v.RelatesTo()
}

// treeAfter reads tree t.
func treeAfter(t *store.Tree) *after { return &after{t: t} }

// snapshotAfter reads snap changed by d (each change's New hashed in
// hashes, by path); ok is false when d is not a change of snap's leaves
// a reader can follow (a removed leaf snap does not hold, a new leaf at
// a path a leaf keeps).
func snapshotAfter(snap *store.Snapshot, d *Delta, hashes map[string]string) (*after, bool) {
	a := &after{snap: snap, gone: map[string]bool{}, hashes: hashes, copies: map[string]*node.Node{}}
	for _, c := range d.Changes {
		if c.Old != nil {
			if _, ok := snap.LeafAt(c.Old.Path); !ok {
				return nil, false
			}
			a.gone[c.Old.Path] = true
		}
	}
	for _, c := range d.Changes {
		if c.New == nil {
			continue
		}
		if _, ok := snap.LeafAt(c.New.Path); ok && !a.gone[c.New.Path] {
			return nil, false
		}
		if _, ok := hashes[c.New.Path]; !ok {
			return nil, false
		}
		a.put = append(a.put, c.New)
	}
	slices.SortFunc(a.put, func(x, y *node.Node) int { return store.LocaleCompare(x.Path, y.Path) })
	for i := 1; i < len(a.put); i++ {
		if a.put[i].Path == a.put[i-1].Path {
			return nil, false
		}
	}
	return a, true
}

// count is the number of leaves.
func (a *after) count() int {
	if a.t != nil {
		return len(a.t.Leaves)
	}
	return a.snap.Leaves() - len(a.gone) + len(a.put)
}

// leaves lists the leaves in the tree's order (by path).
func (a *after) leaves() iter.Seq[leafRef] {
	return func(yield func(leafRef) bool) {
		if a.t != nil {
			for _, n := range a.t.Leaves {
				if !yield(leafRef{n: n}) {
					return
				}
			}
			return
		}
		put := a.put
		for v := range a.snap.All() {
			for len(put) > 0 && store.LocaleCompare(put[0].Path, v.Path()) < 0 {
				if !yield(leafRef{n: put[0]}) {
					return
				}
				put = put[1:]
			}
			if a.gone[v.Path()] {
				continue
			}
			if !yield(leafRef{v: v}) {
				return
			}
		}
		for _, n := range put {
			if !yield(leafRef{n: n}) {
				return
			}
		}
	}
}

// node is the leaf r as a node to render: the tree's or the change's
// own, or a copy of the snapshot's (one per leaf).
func (a *after) node(r leafRef) *node.Node {
	if r.n != nil {
		return r.n
	}
	p := r.v.Path()
	if n, ok := a.copies[p]; ok {
		return n
	}
	n := r.v.Node()
	a.copies[p] = n
	return n
}

// byID returns the leaf with the given id (compared without regard to
// case) as a node to render.
func (a *after) byID(id string) (*node.Node, bool) {
	if a.t != nil {
		return a.t.ByID(id)
	}
	for _, n := range a.put {
		if store.IDKey(n.ID) == store.IDKey(id) {
			return n, true
		}
	}
	v, ok := a.snap.ByID(id)
	if !ok || a.gone[v.Path()] {
		return nil, false
	}
	return a.node(leafRef{v: v}), true
}

// hash is the sha256 (hex) of the bytes of the leaf at path.
func (a *after) hash(path string) string {
	if a.t != nil {
		return a.t.Hashes[path]
	}
	if h, ok := a.hashes[path]; ok {
		return h
	}
	h, _ := a.snap.Hash(path)
	return h
}

// indexDirs are the folders holding an index.md (a change of leaves does
// not change them).
func (a *after) indexDirs() map[string]bool {
	if a.t != nil {
		return a.t.IndexDirs
	}
	return a.snap.IndexDirs()
}

// dirs lists the folder of every leaf, in the tree's order.
func (a *after) dirs() iter.Seq[string] {
	return func(yield func(string) bool) {
		for r := range a.leaves() {
			if !yield(r.dir()) {
				return
			}
		}
	}
}

// linksTo counts the relates_to links that lead to each id.
func (a *after) linksTo() map[string]int {
	if a.t != nil {
		return linksTo(a.t.Leaves)
	}
	inDegree := make(map[string]int, a.count())
	for r := range a.leaves() {
		for id := range r.relatesTo() {
			inDegree[id]++
		}
	}
	return inDegree
}
