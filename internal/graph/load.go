package graph

import (
	"cmp"
	"path"
	"slices"
	"sync"

	"github.com/kk-project/kk/internal/kb"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/workpool"
)

// Graph is every atom and molecule of a tree, read with their kk_ keys.
type Graph struct {
	Atoms     map[string]*Atom
	Molecules map[string]*Molecule
	// Leaves are the writable leaves the atoms and molecules were read from,
	// by id.
	Leaves map[string]*node.Node
	// Tree is the tree the graph was read from (leaves without bodies).
	Tree *kb.Tree
}

// Load reads the graph of k. Every leaf is parsed with its front matter, so
// the result can also be written back.
func Load(k *kb.KB) (*Graph, error) {
	t, err := k.ReadTree(kb.LoadOptions{})
	if err != nil {
		return nil, err
	}
	g := &Graph{Atoms: map[string]*Atom{}, Molecules: map[string]*Molecule{}, Leaves: map[string]*node.Node{}, Tree: t}
	var mu sync.Mutex
	errs := make([]error, len(t.Leaves))
	workpool.Run(0, len(t.Leaves), func(i int) {
		n, err := k.ReadLeaf(t.Leaves[i].Path)
		if err != nil {
			errs[i] = err
			return
		}
		var a *Atom
		var m *Molecule
		switch {
		case IsMolecule(n):
			m, err = MoleculeFromLeaf(n)
		case IsAtom(n):
			a, err = AtomFromLeaf(n)
		default:
			return
		}
		if err != nil {
			errs[i] = err
			return
		}
		mu.Lock()
		defer mu.Unlock()
		g.Leaves[n.ID] = n
		if a != nil {
			g.Atoms[a.ID] = a
		} else {
			g.Molecules[m.ID] = m
		}
	})
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return g, nil
}

// byName orders entities by name (as kenkeep sorts text), then id.
func byName(a, b *Entity) int {
	if c := kb.LocaleCompare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// SortedAtoms returns the atoms ordered by name, then id.
func (g *Graph) SortedAtoms() []*Atom {
	out := make([]*Atom, 0, len(g.Atoms))
	for _, a := range g.Atoms {
		out = append(out, a)
	}
	slices.SortFunc(out, func(a, b *Atom) int { return byName(&a.Entity, &b.Entity) })
	return out
}

// SortedMolecules returns the molecules ordered by name, then id.
func (g *Graph) SortedMolecules() []*Molecule {
	out := make([]*Molecule, 0, len(g.Molecules))
	for _, m := range g.Molecules {
		out = append(out, m)
	}
	slices.SortFunc(out, func(a, b *Molecule) int { return byName(&a.Entity, &b.Entity) })
	return out
}

// MemberAtoms returns the atoms of molecule id, ordered by name.
func (g *Graph) MemberAtoms(id string) []*Atom {
	var out []*Atom
	for _, a := range g.SortedAtoms() {
		if a.Molecule == id {
			out = append(out, a)
		}
	}
	return out
}

// taken reports whether an id is used by any leaf of the tree.
func (g *Graph) taken(id string) bool {
	_, ok := g.Tree.ByID(id)
	return ok
}

// repoPath is a leaf's path relative to the repository root.
func repoPath(rel string) string { return path.Join(kb.DirName, "nodes", rel) }
