package graph

import (
	"context"
	"sync"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// A long-running process (kk mcp) answers many graph reads between two
// changes of the tree. The knowledge base value keeps, per index, the graph read from it at one
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

type templates struct {
	sync.Mutex
	byDB map[string]*template
}

type templatesKey struct{}

func templatesOf(k *store.KB) *templates {
	return store.Memo(k, templatesKey{}, func() *templates { return &templates{byDB: map[string]*template{}} })
}

// templateFor returns the graph of db at generation gen, reading it when
// the cached one is of another generation.
func templateFor(ctx context.Context, k *store.KB, db *index.DB, gen string) (*template, error) {
	c := templatesOf(k)
	c.Lock()
	t, ok := c.byDB[db.Path]
	c.Unlock()
	if ok && gen != "" && t.gen == gen {
		return t, nil
	}
	g, err := loadRows(ctx, k, db, false)
	if err != nil {
		return nil, err
	}
	t = &template{gen: gen, atoms: g.Atoms, molecules: g.Molecules, sorted: g.SortedAtoms()}
	if gen != "" {
		c.Lock()
		c.byDB[db.Path] = t
		c.Unlock()
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
func (t *template) graph(k *store.KB, db *index.DB) *Graph {
	g := &Graph{Atoms: make(map[string]*Atom, len(t.atoms)), Molecules: make(map[string]*Molecule, len(t.molecules)),
		Leaves: map[string]*node.Node{}, k: k, db: db, tmpl: t}
	for id, a := range t.atoms {
		cp := *a
		g.Atoms[store.IDKey(id)] = &cp
	}
	for id, m := range t.molecules {
		cp := *m
		g.Molecules[store.IDKey(id)] = &cp
	}
	g.sorted = make([]*Atom, len(t.sorted))
	for i, a := range t.sorted {
		g.sorted[i] = g.Atoms[store.IDKey(a.ID)]
	}
	return g
}
