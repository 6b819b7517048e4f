package index

import (
	"fmt"
	"path"
	"path/filepath"
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// stateView is the tree a leaf state describes, read on demand
// (store.TreeView): a leaf is decoded from its folder's facts when it is
// looked up, listed in a folder or a tag's cohort asked for, and the
// questions about every leaf (the in-degrees, the leaves naming an id)
// are answered by going over the facts without decoding the leaves. It
// is made only of a state with no problem (no leaf skipped, no id shared,
// no broken symlink: summary's invalid is 0), whose every leaf file is a
// leaf of the tree; a transaction's own, not safe for concurrent use.
type stateView struct {
	s        *treeState // with the leaves' facts
	nodesDir string

	count int
	ids   map[string]leafAt     // by IDKey, made on first need
	nodes map[string]*node.Node // the leaves decoded, by path
	slab  strSlab
	v3    *error // RequireV3's answer, once asked
}

// leafAt is where a leaf entry is: its folder and its place in it.
type leafAt struct {
	dir string
	i   int
}

// newStateView returns the view of s (read with its facts); ok is false
// when s has problems, and the caller assembles the tree.
func newStateView(nodesDir string, s *treeState) (*stateView, bool) {
	if s.invalid != 0 || s.hash == "" || !s.facts() {
		return nil, false
	}
	v := &stateView{s: s, nodesDir: nodesDir, nodes: map[string]*node.Node{}}
	for _, f := range s.folders {
		if len(f.problems) > 0 {
			return nil, false
		}
		for i := range f.leaves {
			if !f.leaves[i].indexed() {
				return nil, false
			}
		}
		v.count += len(f.leaves)
	}
	return v, true
}

var _ store.TreeView = (*stateView)(nil)

func (v *stateView) Leaves() int { return v.count }

func (v *stateView) Tree() *store.Tree { return v.s.tree(v.nodesDir) }

func (v *stateView) Problems() []error { return nil }

func (v *stateView) Skipped(string) bool { return false }

func (v *stateView) Claimed(string) (string, bool) { return "", false }

// leaf is the leaf of entry e in folder dir, decoded once.
func (v *stateView) leaf(dir string, e *leafEntry) *node.Node {
	rel := store.JoinRel(dir, e.name)
	if n, ok := v.nodes[rel]; ok {
		return n
	}
	n := &node.Node{}
	decodeFactsInto(n, &v.slab, rel, e.id, e.facts)
	v.nodes[rel] = n
	return n
}

func (v *stateView) entry(rel string) (*leafEntry, bool) {
	e := v.s.folders[store.DirOf(rel)].entry(path.Base(rel))
	return e, e != nil && store.JoinRel(store.DirOf(rel), e.name) == rel
}

func (v *stateView) LeafAt(rel string) (store.LeafView, bool) {
	e, ok := v.entry(rel)
	if !ok {
		return store.LeafView{}, false
	}
	return store.ViewOf(v.leaf(store.DirOf(rel), e)), true
}

func (v *stateView) ByID(id string) (store.LeafView, bool) {
	if v.ids == nil {
		v.ids = make(map[string]leafAt, v.count)
		for dir, f := range v.s.folders {
			for i := range f.leaves {
				v.ids[store.IDKey(f.leaves[i].id)] = leafAt{dir, i}
			}
		}
	}
	at, ok := v.ids[store.IDKey(id)]
	if !ok {
		return store.LeafView{}, false
	}
	return store.ViewOf(v.leaf(at.dir, &v.s.folders[at.dir].leaves[at.i])), true
}

func (v *stateView) Hash(rel string) (string, bool) {
	e, ok := v.entry(rel)
	if !ok {
		return "", false
	}
	return e.sha, true
}

func (v *stateView) IndexDirs() map[string]bool {
	out := map[string]bool{}
	for dir, f := range v.s.folders {
		if f.index {
			out[dir] = true
		}
	}
	return out
}

func (v *stateView) Leftovers() []string {
	var out []string
	for _, f := range v.s.folders {
		out = append(out, f.leftovers...)
	}
	slices.Sort(out)
	return out
}

// each calls fn with every leaf entry, its folder and the reader of its
// facts after the format (see appendFacts), in no order.
func (v *stateView) each(fn func(dir string, e *leafEntry, format uint64, r *reader)) {
	for dir, f := range v.s.folders {
		for i := range f.leaves {
			e := &f.leaves[i]
			r := &reader{s: e.facts}
			fn(dir, e, r.uint(), r)
		}
	}
}

// lists reads, from a facts reader after the format, the strings of the
// lists tags (0), derived_from (1), relates_to (2) and depends_on (3) up
// to list last, calling fn with each.
func lists(r *reader, last int, fn func(list int, s string)) {
	r.str()
	r.str()
	r.str()
	for l := 0; l <= last; l++ {
		for range r.count() {
			fn(l, r.str())
		}
	}
}

func (v *stateView) RequireV3() error {
	if v.v3 == nil {
		err := v.requireV3()
		v.v3 = &err
	}
	return *v.v3
}

func (v *stateView) requireV3() error {
	var first string
	v.each(func(dir string, e *leafEntry, format uint64, _ *reader) {
		if format != node.SchemaVersion {
			if rel := store.JoinRel(dir, e.name); first == "" || store.LocaleCompare(rel, first) < 0 {
				first = rel
			}
		}
	})
	if first != "" {
		return fmt.Errorf("%w (first one: %s)", store.ErrNeedsMigration, filepath.ToSlash(filepath.Join(store.DirName, "nodes", first)))
	}
	return nil
}

func (v *stateView) Naming(keys map[string]bool) []string {
	var out []string
	v.each(func(dir string, e *leafEntry, _ uint64, r *reader) {
		names := false
		lists(r, 3, func(l int, s string) { names = names || l >= 2 && keys[store.IDKey(s)] })
		if names {
			out = append(out, store.JoinRel(dir, e.name))
		}
	})
	store.SortLocale(out)
	return out
}

func (v *stateView) InDegrees(ids map[string]bool) map[string]int {
	out := make(map[string]int, len(ids))
	v.each(func(_ string, _ *leafEntry, _ uint64, r *reader) {
		lists(r, 2, func(l int, s string) {
			if l == 2 && ids[s] {
				out[s]++
			}
		})
	})
	return out
}

func (v *stateView) Folders() []string {
	out := make([]string, 0, len(v.s.folders))
	for dir, f := range v.s.folders {
		if len(f.leaves) > 0 {
			out = append(out, dir)
		}
	}
	return out
}

// views decodes the leaves of entries (each with its folder) as views in
// the tree's order.
func (v *stateView) views(dirs []string, entries []*leafEntry) []store.LeafView {
	out := make([]store.LeafView, len(entries))
	ns := make([]*node.Node, len(entries))
	for i, e := range entries {
		ns[i] = v.leaf(dirs[i], e)
	}
	slices.SortFunc(ns, func(a, b *node.Node) int { return store.LocaleCompare(a.Path, b.Path) })
	for i, n := range ns {
		out[i] = store.ViewOf(n)
	}
	return out
}

func (v *stateView) FolderLeaves(dir string) []store.LeafView {
	f := v.s.folders[dir]
	if f == nil {
		return nil
	}
	dirs := make([]string, len(f.leaves))
	entries := make([]*leafEntry, len(f.leaves))
	for i := range f.leaves {
		dirs[i], entries[i] = dir, &f.leaves[i]
	}
	return v.views(dirs, entries)
}

func (v *stateView) TagLeaves(tag string) []store.LeafView {
	var dirs []string
	var entries []*leafEntry
	v.each(func(dir string, e *leafEntry, _ uint64, r *reader) {
		has := false
		lists(r, 0, func(_ int, s string) { has = has || s == tag })
		if has {
			dirs, entries = append(dirs, dir), append(entries, e)
		}
	})
	return v.views(dirs, entries)
}
