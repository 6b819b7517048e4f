package graph

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/kk-project/kk/internal/workpool"
)

// Graph is every atom and molecule of a tree, read with their kk_ keys.
type Graph struct {
	Atoms     map[string]*Atom
	Molecules map[string]*Molecule
	// Leaves are the writable leaves the atoms and molecules were read from,
	// by id: all of them after Load, those read so far (see leaf) after
	// LoadIndexed.
	Leaves map[string]*node.Node
	// Tree is the tree the graph was read from (leaves without bodies); nil
	// after LoadIndexed unless the caller sets it.
	Tree *store.Tree

	k      *store.KB
	tx     *txn.Tx   // the transaction of a write; leaves are read through it
	db     *index.DB // LoadIndexed: the index, for bodies read on demand
	full   bool      // LoadIndexed with bodies: every Knowledge is filled
	tmpl   *template // the cached graph this one copies (nil: read directly)
	sorted []*Atom   // SortedAtoms, while no atom was added
}

// LoadIndexed reads the graph from the current branch's index, synced
// first, without parsing a leaf. With bodies, every entity's knowledge is
// read too; otherwise call Knowledge before building views. Close releases
// the index.
func LoadIndexed(ctx context.Context, k *store.KB, bodies bool) (*Graph, error) {
	db, err := BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	st, err := SyncForRead(ctx, k, db)
	if err != nil {
		return nil, err
	}
	if bodies {
		return loadRows(ctx, k, db, true)
	}
	t, err := templateFor(ctx, k, db, st.Gen)
	if err != nil {
		return nil, err
	}
	return t.graph(k, db), nil
}

// recheckWithin is how long a long-running process (kk mcp) trusts its
// last look at the tree's files before a read stats them again; changes
// made through kk are seen at once whatever it is (see
// index.DB.SyncRecent). A command-line run always looks.
const recheckWithin = time.Second

// SyncForRead brings the index up to date for a read.
func SyncForRead(ctx context.Context, k *store.KB, db *index.DB) (index.Stats, error) {
	return syncWithin(ctx, k, db, recheckWithin)
}

// syncWithin is SyncForRead trusting the last look at the files for
// within (0: always look).
func syncWithin(ctx context.Context, k *store.KB, db *index.DB, within time.Duration) (index.Stats, error) {
	// A changeset a killed writer left half-applied is rolled back first,
	// so that no read sees it.
	if _, err := txn.Recover(k); err != nil {
		return index.Stats{}, err
	}
	ex, err := index.ExtractionFor(k)
	if err != nil {
		return index.Stats{}, err
	}
	st, err := db.SyncRecent(ctx, k.NodesDir(), ex, within)
	if err == nil {
		// The leaves the index leaves out are the face's to warn about.
		var skipped []error
		for _, p := range st.Skipped {
			if p.Extractor == "" {
				skipped = append(skipped, fmt.Errorf("%s/nodes/%s: %s", store.DirName, p.Path, p.Msg))
			}
		}
		k.NoteSkipped(skipped)
	}
	return st, err
}

// branchIndex is this process's handle to the current branch's index.
func BranchIndex(ctx context.Context, k *store.KB) (*index.DB, error) {
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		return nil, err
	}
	return index.OpenShared(ctx, k, branch)
}

func loadRows(ctx context.Context, k *store.KB, db *index.DB, bodies bool) (*Graph, error) {
	rows, err := db.GraphRows(ctx, bodies)
	if err != nil {
		return nil, err
	}
	g := &Graph{Atoms: map[string]*Atom{}, Molecules: map[string]*Molecule{}, Leaves: map[string]*node.Node{}, k: k, db: db, full: bodies}
	for _, row := range rows {
		r := &reader{path: row.Path, src: row}
		switch {
		case row.Type == TypeMolecule:
			m, err := r.molecule(row.ID, row.Type, row.Title, []byte(row.Body))
			if err != nil {
				return nil, err
			}
			g.Molecules[store.IDKey(m.ID)] = m
		default:
			if _, isAtom := row.Extra(KeyPaths); !isAtom {
				continue
			}
			a, err := r.atom(row.ID, row.Type, row.Title, []byte(row.Body))
			if err != nil {
				return nil, err
			}
			g.Atoms[store.IDKey(a.ID)] = a
		}
	}
	return g, nil
}

// Close releases the index of a graph read by LoadIndexed.
func (g *Graph) Close() error {
	if g.db == nil {
		return nil
	}
	return g.db.Close()
}

// Knowledge fills the knowledge of the given entities from the index (a
// graph read by Load, or with bodies, has it already).
func (g *Graph) Knowledge(ctx context.Context, ents ...*Entity) error {
	if g.db == nil || g.full {
		return nil
	}
	var paths []string
	for _, e := range ents {
		if e != nil && e.Knowledge == "" {
			paths = append(paths, e.Path)
		}
	}
	if len(paths) == 0 {
		return nil
	}
	bodies, err := g.db.Bodies(ctx, paths)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if b, ok := bodies[e.Path]; ok && e.Knowledge == "" {
			e.Knowledge = KnowledgeOf([]byte(b))
		}
	}
	return nil
}

// leaf returns the writable leaf of atom or molecule id, reading it on
// first use.
func (g *Graph) leaf(id string) (*node.Node, error) {
	if n, ok := g.Leaves[store.IDKey(id)]; ok {
		return n, nil
	}
	var rel string
	if a, ok := g.Atoms[store.IDKey(id)]; ok {
		rel = a.Path
	} else if m, ok := g.Molecules[store.IDKey(id)]; ok {
		rel = m.Path
	} else {
		return nil, fmt.Errorf("graph: no leaf for %s", id)
	}
	var n *node.Node
	var err error
	if g.tx != nil {
		n, err = g.tx.LeafAt(rel)
		if err == nil && n == nil {
			err = fmt.Errorf("%s: no such leaf; run kk sync and retry", rel)
		}
	} else {
		n, err = g.k.ReadLeaf(rel)
	}
	if err != nil {
		return nil, err
	}
	if store.IDKey(n.ID) != store.IDKey(id) {
		return nil, fmt.Errorf("%s: holds %s, not %s; run kk sync and retry", rel, n.ID, id)
	}
	g.Leaves[store.IDKey(id)] = n
	return n, nil
}

// Load reads the graph of k by parsing every leaf with its front matter,
// without the index. The operations read the graph from the index
// (LoadIndexed, and the partial reads of subgraph.go); Load is the
// reference they are checked against, and what a tool without an index
// can use.
func Load(k *store.KB) (*Graph, error) {
	t, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		return nil, err
	}
	g := &Graph{Atoms: map[string]*Atom{}, Molecules: map[string]*Molecule{}, Leaves: map[string]*node.Node{}, Tree: t, k: k, full: true}
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
		g.Leaves[store.IDKey(n.ID)] = n
		if a != nil {
			g.Atoms[store.IDKey(a.ID)] = a
		} else {
			g.Molecules[store.IDKey(m.ID)] = m
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
	if c := store.LocaleCompare(a.Name, b.Name); c != 0 {
		return c
	}
	return cmp.Compare(a.ID, b.ID)
}

// SortedAtoms returns the atoms ordered by name, then id.
func (g *Graph) SortedAtoms() []*Atom {
	if g.sorted != nil && len(g.sorted) == len(g.Atoms) {
		return g.sorted
	}
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
	if g.tx != nil {
		_, ok := g.tx.Resolve(id)
		return ok
	}
	_, ok := g.Tree.ByID(id)
	return ok
}

// repoPath is a leaf's path relative to the repository root.
func RepoPath(rel string) string { return path.Join(store.DirName, "nodes", rel) }

// fresh re-reads atom or molecule id from its leaf, replacing what the
// index said (so a write starts from the bytes on disk), and returns the
// writable leaf.
func (g *Graph) fresh(id string) (*node.Node, error) {
	n, err := g.leaf(id)
	if err != nil {
		return nil, err
	}
	if a, ok := g.Atoms[store.IDKey(id)]; ok {
		na, err := AtomFromLeaf(n)
		if err != nil {
			return nil, err
		}
		*a = *na
	} else if m, ok := g.Molecules[store.IDKey(id)]; ok {
		nm, err := MoleculeFromLeaf(n)
		if err != nil {
			return nil, err
		}
		*m = *nm
	}
	return n, nil
}
