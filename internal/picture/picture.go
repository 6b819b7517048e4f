// Package picture draws the knowledge graph: the typed traceability edges
// between entities, the atoms under their molecules, or the leaves and
// their relates_to and depends_on edges, as a Mermaid flowchart (for a
// README), a Graphviz dot graph (for `dot -Tsvg`), or a JSON list of nodes
// and edges. It only reads, through the per-branch index (trace.ReadAll,
// graph.LoadIndexed), and its output is a pure function of what it read:
// nodes and edges are sorted, and node identifiers are derived from ids.
package picture

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// Formats of a picture.
const (
	FormatMermaid = "mermaid"
	FormatDot     = "dot"
	FormatJSON    = "json"
)

// Views: what a picture shows.
const (
	// ViewEdges is the traceability entities (req, scenario, test, adr,
	// flag, event, symbol) and the typed edges of the edge table that
	// touch one of them, with the entities at their other ends.
	ViewEdges = "edges"
	// ViewMolecules is the atoms grouped under their molecules, with the
	// kk_related relationships between atoms and molecules.
	ViewMolecules = "molecules"
	// ViewLeaves is the leaves of the tree with their relates_to and
	// depends_on edges (kk_relates_to, kk_depends_on and kk_edges of
	// those types), with the entities those edges point at.
	ViewLeaves = "leaves"
)

// Formats and Views list the accepted values, default first.
var (
	Formats = []string{FormatMermaid, FormatDot, FormatJSON}
	Views   = []string{ViewEdges, ViewMolecules, ViewLeaves}
)

// Edge types a picture adds to the index's.
const (
	// EdgeMemberOf joins an atom to its molecule in the molecules view.
	// Mermaid and dot draw it by nesting the atom in its molecule's box.
	EdgeMemberOf = "member_of"
)

// Options say what to draw and how.
type Options struct {
	Format string // FormatMermaid (default), FormatDot or FormatJSON
	View   string // ViewEdges (default), ViewMolecules or ViewLeaves
	// Types keeps the nodes of these entity types (all when empty). The
	// filter applies before Around.
	Types []string
	// Around keeps the nodes within Depth edges of this id, following
	// edges in either direction ("" keeps every node). Ids are compared
	// without regard to case.
	Around string
	Depth  int
	// Fallback draws the leaves view instead of the edges view when the
	// knowledge base holds no traceability entity, which would leave the
	// edges view empty (a tree of practice and map notes only); the
	// Picture's View says which view was drawn.
	Fallback bool
}

// Node is one entity of a picture.
type Node struct {
	ID    string `json:"id"`
	Type  string `json:"type"`
	Title string `json:"title"`
}

// Edge is one edge of a picture.
type Edge struct {
	Type string `json:"type"`
	From string `json:"from"`
	To   string `json:"to"`
}

// Picture is what Export drew: its nodes ordered by id, its edges ordered
// by source, type and target, and, for Mermaid and dot, the text.
type Picture struct {
	View  string `json:"-"` // the view drawn
	Nodes []Node `json:"nodes"`
	Edges []Edge `json:"edges"`
	// Text is the Mermaid or dot source, ending in a newline; "" for JSON.
	Text string `json:"-"`
}

// FlagError is a mistake in the options themselves (a format, view or
// depth that cannot be), whatever the knowledge base holds; Flag names the
// command-line flag.
type FlagError struct{ Flag, Msg string }

func (e *FlagError) Error() string { return "--" + e.Flag + ": " + e.Msg }

// check reports the first option that cannot be, as a *FlagError. It fills
// in the default format and view.
func (o *Options) check() error {
	if o.Format == "" {
		o.Format = FormatMermaid
	}
	if o.View == "" {
		o.View = ViewEdges
	}
	if !slices.Contains(Formats, o.Format) {
		return &FlagError{"format", fmt.Sprintf("%q is not a format; use %s", o.Format, strings.Join(Formats, ", "))}
	}
	if !slices.Contains(Views, o.View) {
		return &FlagError{"view", fmt.Sprintf("%q is not a view; use %s", o.View, strings.Join(Views, ", "))}
	}
	if o.Depth < 0 {
		return &FlagError{"depth", fmt.Sprintf("%d is negative; give the number of edges to follow from --around (0 keeps it alone)", o.Depth)}
	}
	for i, t := range o.Types {
		t = strings.ToLower(strings.TrimSpace(t))
		if t == "" {
			return &FlagError{"type", "an empty type in the list; give types separated by commas, like req,test"}
		}
		o.Types[i] = t
	}
	return nil
}

// Export draws the current branch's knowledge graph as o says. A mistake
// in the options is a *FlagError; a type the knowledge base does not know
// or an Around id it does not hold is an error naming the flag too.
func Export(ctx context.Context, k *store.KB, o Options) (*Picture, error) {
	if err := o.check(); err != nil {
		return nil, err
	}
	var p *Picture
	var err error
	switch o.View {
	case ViewEdges:
		p, err = edgesView(ctx, k)
		if err == nil && len(p.Nodes) == 0 && o.Fallback {
			p, err = leavesView(ctx, k)
		}
	case ViewMolecules:
		p, err = moleculesView(ctx, k)
	case ViewLeaves:
		p, err = leavesView(ctx, k)
	}
	if err != nil {
		return nil, err
	}
	if err := p.filter(o); err != nil {
		return nil, err
	}
	switch o.Format {
	case FormatMermaid:
		p.Text = p.mermaid()
	case FormatDot:
		p.Text = p.dot()
	}
	return p, nil
}

// traceTypes are the entity types of the traceability layer.
var traceTypes = []string{graph.TypeReq, graph.TypeScenario, graph.TypeTest, graph.TypeADR, graph.TypeFlag, graph.TypeEvent, graph.TypeSymbol}

// builder collects the nodes and edges of a view, each once.
type builder struct {
	view  string
	nodes map[string]Node // by store.IDKey
	edges map[Edge]bool
}

func newBuilder(view string) *builder {
	return &builder{view: view, nodes: map[string]Node{}, edges: map[Edge]bool{}}
}

func (b *builder) node(id, typ, title string) {
	if _, ok := b.nodes[store.IDKey(id)]; !ok {
		b.nodes[store.IDKey(id)] = Node{ID: id, Type: typ, Title: title}
	}
}

func (b *builder) picture() *Picture {
	p := &Picture{View: b.view, Nodes: make([]Node, 0, len(b.nodes)), Edges: make([]Edge, 0, len(b.edges))}
	for _, n := range b.nodes {
		p.Nodes = append(p.Nodes, n)
	}
	for e := range b.edges {
		p.Edges = append(p.Edges, e)
	}
	p.sort()
	return p
}

func (p *Picture) sort() {
	slices.SortFunc(p.Nodes, func(a, b Node) int {
		return cmp.Or(cmp.Compare(store.IDKey(a.ID), store.IDKey(b.ID)), cmp.Compare(a.ID, b.ID))
	})
	slices.SortFunc(p.Edges, func(a, b Edge) int {
		return cmp.Or(cmp.Compare(store.IDKey(a.From), store.IDKey(b.From)), cmp.Compare(a.Type, b.Type),
			cmp.Compare(store.IDKey(a.To), store.IDKey(b.To)), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
}

// edgesView is the traceability entities and the typed edges touching one.
// An edge to an entity that does not exist is left out (kk check reports
// it).
func edgesView(ctx context.Context, k *store.KB) (*Picture, error) {
	all, err := trace.ReadAll(ctx, k)
	if err != nil {
		return nil, err
	}
	byKey := entitiesByKey(all.Entities)
	b := newBuilder(ViewEdges)
	for _, e := range all.Entities {
		if slices.Contains(traceTypes, e.Type) {
			b.node(e.ID, e.Type, e.Title)
		}
	}
	for _, e := range all.Edges {
		from, okF := byKey[store.IDKey(e.From)]
		to, okT := byKey[store.IDKey(e.To)]
		if _, typed := graph.EdgeTable[e.Type]; !typed || !okF || !okT {
			continue
		}
		if !slices.Contains(traceTypes, from.Type) && !slices.Contains(traceTypes, to.Type) {
			continue // kenkeep's relationships between leaves: the leaves view
		}
		b.node(from.ID, from.Type, from.Title)
		b.node(to.ID, to.Type, to.Title)
		b.edges[Edge{Type: e.Type, From: from.ID, To: to.ID}] = true
	}
	return b.picture(), nil
}

// leavesView is every leaf and its relates_to and depends_on edges.
func leavesView(ctx context.Context, k *store.KB) (*Picture, error) {
	all, err := trace.ReadAll(ctx, k)
	if err != nil {
		return nil, err
	}
	byKey := entitiesByKey(all.Entities)
	b := newBuilder(ViewLeaves)
	for _, e := range all.Entities {
		if e.Origin == "" {
			b.node(e.ID, e.Type, e.Title)
		}
	}
	for _, e := range all.Edges {
		if e.Type != index.EdgeRelatesTo && e.Type != index.EdgeDependsOn {
			continue
		}
		from, okF := byKey[store.IDKey(e.From)]
		to, okT := byKey[store.IDKey(e.To)]
		if !okF || !okT || from.Origin != "" {
			continue
		}
		b.node(to.ID, to.Type, to.Title)
		b.edges[Edge{Type: e.Type, From: from.ID, To: to.ID}] = true
	}
	return b.picture(), nil
}

func entitiesByKey(ents []index.Entity) map[string]*index.Entity {
	out := make(map[string]*index.Entity, len(ents))
	for i := range ents {
		out[store.IDKey(ents[i].ID)] = &ents[i]
	}
	return out
}

// moleculesView is every atom and molecule: member_of joins an atom to its
// molecule, related edges come from kk_related.
func moleculesView(ctx context.Context, k *store.KB) (*Picture, error) {
	g, err := graph.LoadIndexed(ctx, k, false)
	if err != nil {
		return nil, err
	}
	defer func() { _ = g.Close() }()
	b := newBuilder(ViewMolecules)
	ents := map[string]*graph.Entity{}
	for _, m := range g.SortedMolecules() {
		b.node(m.ID, m.Type, m.Name)
		ents[store.IDKey(m.ID)] = &m.Entity
	}
	for _, a := range g.SortedAtoms() {
		b.node(a.ID, a.Type, a.Name)
		ents[store.IDKey(a.ID)] = &a.Entity
		if m := g.MoleculeOf(a); m != nil {
			b.edges[Edge{Type: EdgeMemberOf, From: a.ID, To: m.ID}] = true
		}
	}
	for _, from := range ents {
		for _, r := range from.Related {
			if to, ok := ents[store.IDKey(r.ID)]; ok {
				b.edges[Edge{Type: index.EdgeRelated, From: from.ID, To: to.ID}] = true
			}
		}
	}
	return b.picture(), nil
}

// filter keeps the nodes of o.Types, then those within o.Depth edges of
// o.Around, and the edges between the nodes kept.
func (p *Picture) filter(o Options) error {
	if len(o.Types) > 0 {
		known := map[string]bool{}
		for _, t := range graph.EntityTypes {
			known[t] = true
		}
		for _, n := range p.Nodes {
			known[n.Type] = true
		}
		for _, t := range o.Types {
			if !known[t] {
				names := make([]string, 0, len(known))
				for t := range known {
					names = append(names, t)
				}
				slices.Sort(names)
				return fmt.Errorf("--type: %q is not an entity type; use %s", t, strings.Join(names, ", "))
			}
		}
		p.keep(func(n Node) bool { return slices.Contains(o.Types, n.Type) })
	}
	if o.Around == "" {
		return nil
	}
	return p.around(o.Around, o.Depth, o.Types)
}

// keep keeps the nodes for which ok holds and the edges between them.
func (p *Picture) keep(ok func(Node) bool) {
	kept := map[string]bool{}
	nodes := p.Nodes[:0]
	for _, n := range p.Nodes {
		if ok(n) {
			nodes = append(nodes, n)
			kept[store.IDKey(n.ID)] = true
		}
	}
	p.Nodes = nodes
	edges := p.Edges[:0]
	for _, e := range p.Edges {
		if kept[store.IDKey(e.From)] && kept[store.IDKey(e.To)] {
			edges = append(edges, e)
		}
	}
	p.Edges = edges
}

// around keeps the nodes at most depth edges away from id, in either
// direction, and the edges between them. types is the --type filter
// already applied, for the error when it left id out.
func (p *Picture) around(id string, depth int, types []string) error {
	start := store.IDKey(strings.TrimSpace(id))
	if !slices.ContainsFunc(p.Nodes, func(n Node) bool { return store.IDKey(n.ID) == start }) {
		if len(types) > 0 {
			return fmt.Errorf("--around: no entity %q of the types %s in the %s view; check the id with `kk query --id %s`", id, strings.Join(types, ","), p.View, id)
		}
		return fmt.Errorf("--around: no entity %q in the %s view; `kk query` and `kk search <words>` find ids", id, p.View)
	}
	adj := map[string][]string{}
	for _, e := range p.Edges {
		f, t := store.IDKey(e.From), store.IDKey(e.To)
		adj[f] = append(adj[f], t)
		adj[t] = append(adj[t], f)
	}
	dist := map[string]int{start: 0}
	queue := []string{start}
	for len(queue) > 0 {
		v := queue[0]
		queue = queue[1:]
		if dist[v] == depth {
			continue
		}
		for _, w := range adj[v] {
			if _, seen := dist[w]; !seen {
				dist[w] = dist[v] + 1
				queue = append(queue, w)
			}
		}
	}
	p.keep(func(n Node) bool { _, ok := dist[store.IDKey(n.ID)]; return ok })
	return nil
}
