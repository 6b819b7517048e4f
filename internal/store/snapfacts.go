package store

import (
	"maps"
	"slices"

	"github.com/kk-project/kk/internal/node"
)

// snapFacts are what a reader of a whole snapshot asks of every leaf at
// once, gathered once per snapshot and carried to the next by Patch (a
// copy of what the patch changes only): the relates_to links that lead
// to each id, the leaves directly in each folder, and the leaves
// carrying each tag (each list in the tree's order). A generation brought
// forward by a write reads them instead of going over every leaf
// (indexfiles.PlanChange). They are never changed once made.
type snapFacts struct {
	inDegree map[string]int
	byDir    map[string][]*node.Node
	byTag    map[string][]*node.Node
}

// gatherFacts is the facts of leaves (in the tree's order).
func gatherFacts(leaves []*node.Node) *snapFacts {
	f := &snapFacts{inDegree: make(map[string]int, len(leaves)), byDir: map[string][]*node.Node{}, byTag: map[string][]*node.Node{}}
	for _, n := range leaves {
		for _, id := range n.RelatesTo {
			f.inDegree[id]++
		}
		d := n.Dir()
		f.byDir[d] = append(f.byDir[d], n)
		for i, tag := range n.Tags {
			if !slices.Contains(n.Tags[:i], tag) {
				f.byTag[tag] = append(f.byTag[tag], n)
			}
		}
	}
	return f
}

// patched is f after the leaves gone are removed and those of put added:
// the in-degrees copied and changed, the lists of the folders and tags
// they touch made anew, every other list shared.
func (f *snapFacts) patched(gone, put []*node.Node) *snapFacts {
	p := &snapFacts{inDegree: maps.Clone(f.inDegree), byDir: maps.Clone(f.byDir), byTag: maps.Clone(f.byTag)}
	copied := map[string]bool{} // lists of p's own, by "d:"+folder or "t:"+tag
	edit := func(m map[string][]*node.Node, key, kind string) []*node.Node {
		l := m[key]
		if !copied[kind+key] {
			l = slices.Clone(l)
			copied[kind+key] = true
		}
		return l
	}
	for _, n := range gone {
		for _, id := range n.RelatesTo {
			if p.inDegree[id]--; p.inDegree[id] <= 0 {
				delete(p.inDegree, id)
			}
		}
		remove := func(m map[string][]*node.Node, key, kind string) {
			l := slices.DeleteFunc(edit(m, key, kind), func(x *node.Node) bool { return x == n })
			if len(l) == 0 {
				delete(m, key)
				return
			}
			m[key] = l
		}
		remove(p.byDir, n.Dir(), "d:")
		for i, tag := range n.Tags {
			if !slices.Contains(n.Tags[:i], tag) {
				remove(p.byTag, tag, "t:")
			}
		}
	}
	for _, n := range put {
		for _, id := range n.RelatesTo {
			p.inDegree[id]++
		}
		insert := func(m map[string][]*node.Node, key, kind string) {
			l := edit(m, key, kind)
			at, _ := slices.BinarySearchFunc(l, n.Path, func(x *node.Node, p string) int { return LocaleCompare(x.Path, p) })
			m[key] = slices.Insert(l, at, n)
		}
		insert(p.byDir, n.Dir(), "d:")
		for i, tag := range n.Tags {
			if !slices.Contains(n.Tags[:i], tag) {
				insert(p.byTag, tag, "t:")
			}
		}
	}
	return p
}

// facts returns the snapshot's facts, gathered on first need.
func (s *Snapshot) facts() *snapFacts {
	if f := s.f.Load(); f != nil {
		return f
	}
	f := gatherFacts(s.t.Leaves)
	if !s.f.CompareAndSwap(nil, f) {
		return s.f.Load()
	}
	return f
}

// InDegrees returns, for each id of ids, how many of the snapshot's
// leaves name it in relates_to (see TreeView.InDegrees).
func (s *Snapshot) InDegrees(ids map[string]bool) map[string]int {
	all := s.facts().inDegree
	out := make(map[string]int, len(ids))
	for id := range ids {
		if n, ok := all[id]; ok {
			out[id] = n
		}
	}
	return out
}

// Folders lists the folders directly holding at least one leaf, in no
// order.
func (s *Snapshot) Folders() []string { return slices.Collect(maps.Keys(s.facts().byDir)) }

// FolderLeaves lists the leaves directly in folder dir, in the tree's
// order.
func (s *Snapshot) FolderLeaves(dir string) []LeafView { return views(s.facts().byDir[dir]) }

// TagLeaves lists the leaves carrying tag, in the tree's order.
func (s *Snapshot) TagLeaves(tag string) []LeafView { return views(s.facts().byTag[tag]) }

func views(l []*node.Node) []LeafView {
	out := make([]LeafView, len(l))
	for i, n := range l {
		out[i] = LeafView{n}
	}
	return out
}
