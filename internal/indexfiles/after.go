package indexfiles

import (
	"iter"
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// after is the tree as a change leaves it, as bringing a generation
// forward reads it: either a tree the caller assembled and changed (t),
// or a store.TreeView the change was made on (snap: the branch index's
// kept tree, or a view of its leaf state read on demand, read through
// its lookups, never changed or copied whole) with the leaves the change
// removed (gone) and wrote (put, the writer's own nodes). Only the leaves
// rendered (the folders a change reaches, the rankings they show) are
// copied out of the view, once each.
type after struct {
	t *store.Tree

	snap   store.TreeView
	gone   map[string]bool       // paths of the snapshot's leaves removed
	old    []*node.Node          // the change's Old leaves (copies of those removed)
	put    []*node.Node          // in the tree's order
	hashes map[string]string     // of put, by path
	copies map[string]*node.Node // the snapshot's leaves copied out, by path

	inDegree map[string]int // of every id a tree's leaves link, counted on first need
}

// treeAfter reads tree t.
func treeAfter(t *store.Tree) *after { return &after{t: t} }

// snapshotAfter reads snap changed by d (each change's New hashed in
// hashes, by path); ok is false when d is not a change of snap's leaves
// a reader can follow (a removed leaf snap does not hold, a new leaf at
// a path a leaf keeps).
func snapshotAfter(snap store.TreeView, d *Delta, hashes map[string]string) (*after, bool) {
	a := &after{snap: snap, gone: map[string]bool{}, hashes: hashes, copies: map[string]*node.Node{}}
	for _, c := range d.Changes {
		if c.Old != nil {
			if _, ok := snap.LeafAt(c.Old.Path); !ok {
				return nil, false
			}
			a.gone[c.Old.Path] = true
			a.old = append(a.old, c.Old)
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

// node is the snapshot's leaf v as a node to render: a copy, one per
// leaf.
func (a *after) node(v store.LeafView) *node.Node {
	p := v.Path()
	if n, ok := a.copies[p]; ok {
		return n
	}
	n := v.Node()
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
	return a.node(v), true
}

// hash is the hash of the leaf file at path (store.LeafSum: the sha256
// (hex) of its bytes, CRLF read as LF).
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

// dirs lists the folders directly holding a leaf (a folder may come
// more than once): of every leaf of a tree; of a snapshot, from the
// leaves of each of its folders, but those the change empties, and the
// folders of the change's new leaves.
func (a *after) dirs() iter.Seq[string] {
	return func(yield func(string) bool) {
		if a.t != nil {
			for _, n := range a.t.Leaves {
				if !yield(n.Dir()) {
					return
				}
			}
			return
		}
		goneIn := map[string]int{}
		for _, n := range a.old {
			goneIn[n.Dir()]++
		}
		for _, d := range a.snap.Folders() {
			if goneIn[d] > 0 && len(a.snap.FolderLeaves(d)) <= goneIn[d] {
				continue
			}
			if !yield(d) {
				return
			}
		}
		for _, n := range a.put {
			if !yield(n.Dir()) {
				return
			}
		}
	}
}

// addInDegrees adds to inDegree, for each leaf of leaves whose id it
// does not hold yet, how many relates_to links lead to that id: over
// every leaf of a tree (counted once); a snapshot's counts of those ids,
// with the change's.
func (a *after) addInDegrees(inDegree map[string]int, leaves []*node.Node) {
	if a.t != nil {
		if a.inDegree == nil {
			a.inDegree = linksTo(a.t.Leaves)
		}
		for _, n := range leaves {
			inDegree[n.ID] = a.inDegree[n.ID]
		}
		return
	}
	want := map[string]bool{}
	for _, n := range leaves {
		if _, ok := inDegree[n.ID]; !ok {
			want[n.ID] = true
		}
	}
	if len(want) == 0 {
		return
	}
	counts := a.snap.InDegrees(want)
	for _, n := range a.old {
		for _, id := range n.RelatesTo {
			if want[id] {
				counts[id]--
			}
		}
	}
	for _, n := range a.put {
		for _, id := range n.RelatesTo {
			if want[id] {
				counts[id]++
			}
		}
	}
	for id := range want {
		inDegree[id] = counts[id]
	}
}

// cohorts lists, for each tag of tags, the leaves carrying it in the
// tree's order.
func (a *after) cohorts(tags map[string]bool) map[string][]*node.Node {
	out := map[string][]*node.Node{}
	if a.t != nil {
		for _, n := range a.t.Leaves {
			for i, tag := range n.Tags {
				if tags[tag] && !slices.Contains(n.Tags[:i], tag) {
					out[tag] = append(out[tag], n)
				}
			}
		}
		return out
	}
	for tag := range tags {
		if l := a.merged(a.snap.TagLeaves(tag), func(n *node.Node) bool { return slices.Contains(n.Tags, tag) }); len(l) > 0 {
			out[tag] = l
		}
	}
	return out
}

// folders lists the leaves directly in each folder of dirs, and in
// nodes/ itself, in the tree's order.
func (a *after) folders(dirs map[string]bool) map[string][]*node.Node {
	out := map[string][]*node.Node{}
	if a.t != nil {
		for _, n := range a.t.Leaves {
			if d := n.Dir(); dirs[d] || d == "" {
				out[d] = append(out[d], n)
			}
		}
		return out
	}
	for d := range dirs {
		if l := a.merged(a.snap.FolderLeaves(d), func(n *node.Node) bool { return n.Dir() == d }); len(l) > 0 {
			out[d] = l
		}
	}
	if !dirs[""] {
		if l := a.merged(a.snap.FolderLeaves(""), func(n *node.Node) bool { return n.Dir() == "" }); len(l) > 0 {
			out[""] = l
		}
	}
	return out
}

// merged is the snapshot's leaves vs but those the change removed, with
// the change's new leaves that in picks, in the tree's order.
func (a *after) merged(vs []store.LeafView, in func(*node.Node) bool) []*node.Node {
	var out []*node.Node
	put := a.put
	for _, v := range vs {
		for len(put) > 0 && store.LocaleCompare(put[0].Path, v.Path()) < 0 {
			if in(put[0]) {
				out = append(out, put[0])
			}
			put = put[1:]
		}
		if !a.gone[v.Path()] {
			out = append(out, a.node(v))
		}
	}
	for _, n := range put {
		if in(n) {
			out = append(out, n)
		}
	}
	return out
}
