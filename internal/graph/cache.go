package graph

import (
	"context"
	"sync"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/kb"
	"github.com/kk-project/kk/internal/node"
)

// A long-running process (kk mcp) answers many graph reads between two
// changes of the tree. It keeps, per index, the graph read from it at one
// generation of the index (index.Stats.Gen), sorted, with its pattern set
// built on first use, and hands every request a copy; a sync that changes
// the index changes the generation, and the next request reads the graph
// again. Entities of the template are never changed: a request works on
// copies of the structs, and a write re-reads its targets from their
// leaves (fresh) before changing them.
type template struct {
	gen       string
	atoms     map[string]*Atom
	molecules map[string]*Molecule
	sorted    []*Atom

	once     sync.Once
	patterns *PatternSet
}

var templates struct {
	sync.Mutex
	byDB map[string]*template
}

// templateFor returns the graph of db at generation gen, reading it when
// the cached one is of another generation.
func templateFor(ctx context.Context, k *kb.KB, db *index.DB, gen string) (*template, error) {
	templates.Lock()
	t, ok := templates.byDB[db.Path]
	templates.Unlock()
	if ok && gen != "" && t.gen == gen {
		return t, nil
	}
	g, err := loadRows(ctx, k, db, false)
	if err != nil {
		return nil, err
	}
	t = &template{gen: gen, atoms: g.Atoms, molecules: g.Molecules, sorted: g.SortedAtoms()}
	if gen != "" {
		templates.Lock()
		if templates.byDB == nil {
			templates.byDB = map[string]*template{}
		}
		templates.byDB[db.Path] = t
		templates.Unlock()
	}
	return t, nil
}

// patternSet returns the template's pattern set, whose owners are indexes
// into sorted.
func (t *template) patternSet() *PatternSet {
	t.once.Do(func() { t.patterns = buildPatterns(t.sorted) })
	return t.patterns
}

func buildPatterns(atoms []*Atom) *PatternSet {
	set := NewPatternSet()
	for i, a := range atoms {
		for _, pat := range a.Paths {
			set.Add(i, pat)
		}
	}
	return set
}

// graph returns a copy of the template a request may change.
func (t *template) graph(k *kb.KB, db *index.DB) *Graph {
	g := &Graph{Atoms: make(map[string]*Atom, len(t.atoms)), Molecules: make(map[string]*Molecule, len(t.molecules)),
		Leaves: map[string]*node.Node{}, k: k, db: db, tmpl: t}
	for id, a := range t.atoms {
		cp := *a
		g.Atoms[id] = &cp
	}
	for id, m := range t.molecules {
		cp := *m
		g.Molecules[id] = &cp
	}
	g.sorted = make([]*Atom, len(t.sorted))
	for i, a := range t.sorted {
		g.sorted[i] = g.Atoms[a.ID]
	}
	return g
}

// subgraph returns a copy of the part of the template a get of id needs:
// the entity, the atoms of a molecule, and the entities their related
// lists name (for the names in the views).
func (t *template) subgraph(k *kb.KB, db *index.DB, kind, id string) *Graph {
	g := &Graph{Atoms: map[string]*Atom{}, Molecules: map[string]*Molecule{}, Leaves: map[string]*node.Node{}, k: k, db: db}
	addAtom := func(id string) {
		if a, ok := t.atoms[id]; ok {
			cp := *a
			g.Atoms[id] = &cp
		}
	}
	addMolecule := func(id string) {
		if m, ok := t.molecules[id]; ok {
			cp := *m
			g.Molecules[id] = &cp
		}
	}
	withRelated := func(a *Atom) {
		for _, r := range a.Related {
			if _, have := g.Atoms[r.ID]; !have {
				addAtom(r.ID)
			}
		}
	}
	if kind == KindAtom {
		addAtom(id)
		if a, ok := t.atoms[id]; ok {
			withRelated(a)
			addAtom(id) // the entity itself wins over a related copy
		}
		return g
	}
	addMolecule(id)
	m, ok := t.molecules[id]
	if !ok {
		return g
	}
	for _, r := range m.Related {
		addMolecule(r.ID)
	}
	addMolecule(id)
	for _, a := range t.sorted {
		if a.Molecule == id {
			addAtom(a.ID)
			withRelated(a)
		}
	}
	return g
}
