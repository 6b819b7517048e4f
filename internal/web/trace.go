package web

import (
	"cmp"
	"context"
	"net/http"
	"slices"
	"strconv"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// traceTypes are the entity types of the traceability layer; the trace
// page draws them and whatever their edges reach.
var traceTypes = map[string]bool{graph.TypeReq: true, graph.TypeScenario: true, graph.TypeTest: true, graph.TypeADR: true,
	graph.TypeFlag: true, graph.TypeEvent: true, graph.TypeSymbol: true}

// Caps of the pictures: past them a picture is not readable anyway.
const (
	maxDrawn        = 300 // nodes on the trace page
	maxNeighbours   = 40  // nodes in a node page's picture
	maxFocusDepth   = 3
	defaultDepthArg = 2
)

// A drawing's nodes and edges, before layout.
type gnode struct {
	ID, Title, Type string
	Missing         bool // an edge names it, no entity has it
	Focus           bool
}

type gedge struct{ From, To, Type string }

type drawing struct {
	nodes []gnode
	edges []gedge
	keys  map[string]int // store.IDKey -> index in nodes
	seen  map[gedge]bool
}

func newDrawing() *drawing { return &drawing{keys: map[string]int{}, seen: map[gedge]bool{}} }

func (d *drawing) has(id string) bool { _, ok := d.keys[store.IDKey(id)]; return ok }

func (d *drawing) addEntity(e *trace.EntityView) {
	if i, ok := d.keys[store.IDKey(e.ID)]; ok {
		d.nodes[i] = gnode{ID: e.ID, Title: e.Title, Type: e.Type, Focus: d.nodes[i].Focus}
		return
	}
	d.keys[store.IDKey(e.ID)] = len(d.nodes)
	d.nodes = append(d.nodes, gnode{ID: e.ID, Title: e.Title, Type: e.Type})
}

func (d *drawing) addMissing(id string) {
	if !d.has(id) {
		d.keys[store.IDKey(id)] = len(d.nodes)
		d.nodes = append(d.nodes, gnode{ID: id, Missing: true})
	}
}

func (d *drawing) addEdge(e trace.EdgeView) {
	g := gedge{From: e.From, To: e.To, Type: e.Type}
	if !d.seen[g] {
		d.seen[g] = true
		d.edges = append(d.edges, g)
	}
}

// picture lays the drawing out (nodes sorted by id, edges by ends and type).
func (d *drawing) picture(prefix string) *svgGraph {
	slices.SortFunc(d.nodes, func(a, b gnode) int { return cmp.Compare(a.ID, b.ID) })
	slices.SortFunc(d.edges, func(a, b gedge) int {
		return cmp.Or(cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To), cmp.Compare(a.Type, b.Type))
	})
	for i, n := range d.nodes {
		d.keys[store.IDKey(n.ID)] = i
	}
	return layout(d.nodes, d.edges, prefix)
}

// allEntities pages through kb_query for every entity of the branch.
func allEntities(ctx context.Context, k *store.KB) ([]trace.EntityView, error) {
	var out []trace.EntityView
	limit, offset := graph.MaxLimit, 0
	for {
		res, err := trace.KBQuery(ctx, k, trace.KBQueryParams{Limit: &limit, Offset: &offset})
		if err != nil {
			return nil, err
		}
		out = append(out, res.Entities...)
		if offset += len(res.Entities); len(res.Entities) == 0 || offset >= res.Total {
			return out, nil
		}
	}
}

// whole draws the traceability entities (every entity with all) and
// the edges that touch them.
func whole(ents []trace.EntityView, all bool) *drawing {
	d := newDrawing()
	byKey := map[string]*trace.EntityView{}
	for i := range ents {
		byKey[store.IDKey(ents[i].ID)] = &ents[i]
		if all || traceTypes[ents[i].Type] {
			d.addEntity(&ents[i])
		}
	}
	in := func(id string) bool { e := byKey[store.IDKey(id)]; return all || e != nil && traceTypes[e.Type] }
	for _, e := range ents {
		for _, ed := range e.Edges {
			if !in(ed.From) && !in(ed.To) {
				continue
			}
			for _, end := range []string{ed.From, ed.To} {
				if other := byKey[store.IDKey(end)]; other != nil {
					d.addEntity(other)
				} else {
					d.addMissing(end)
				}
			}
			d.addEdge(ed)
		}
	}
	return d
}

// neighbourhoodOf draws the entities within depth edges of focus (in
// either direction), at most max of them.
func (h *handler) neighbourhoodOf(ctx context.Context, focus string, depth, max int) (*drawing, error) {
	d := newDrawing()
	frontier := []string{focus}
	seen := map[string]bool{store.IDKey(focus): true}
	for level := 0; level <= depth && len(frontier) > 0; level++ {
		var next []string
		for _, id := range frontier {
			e, err := h.entity(ctx, id)
			if err != nil {
				return nil, err
			}
			if e == nil {
				d.addMissing(id)
				continue
			}
			d.addEntity(e)
			if level == depth {
				continue // the rim: drawn, not followed
			}
			for _, list := range [][]trace.EdgeView{e.Edges, e.Incoming} {
				for _, ed := range list {
					other := ed.To
					if store.IDKey(other) == store.IDKey(e.ID) {
						other = ed.From
					}
					if !seen[store.IDKey(other)] && len(seen) < max {
						seen[store.IDKey(other)] = true
						next = append(next, other)
					}
					if seen[store.IDKey(other)] {
						d.addEdge(ed)
					}
				}
			}
		}
		frontier = next
	}
	if i, ok := d.keys[store.IDKey(focus)]; ok {
		d.nodes[i].Focus = true
	}
	return d, nil
}

// neighbourhood is what a node page draws.
type neighbourhood struct {
	nodes   []gnode
	Picture *svgGraph
}

func (h *handler) neighbourhood(ctx context.Context, id string) (*neighbourhood, error) {
	d, err := h.neighbourhoodOf(ctx, id, 1, maxNeighbours)
	if err != nil {
		return nil, err
	}
	return &neighbourhood{nodes: d.nodes, Picture: d.picture(h.opts.Prefix)}, nil
}

type traceView struct {
	Focus    string
	Depth    int
	All      bool
	Picture  *svgGraph
	Nodes    int
	Edges    int
	TooMany  int // entities that would be drawn, when over maxDrawn
	Depths   []int
	AllURL   string
	TraceURL string
	Entities []leafItem // listed when there are too many to draw
	// FellBack: there is no traceability entity, so the page shows every
	// node instead.
	FellBack bool
}

func (h *handler) trace(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	v := traceView{Focus: q.Get("focus"), All: q.Get("all") == "1", Depth: defaultDepthArg, Depths: []int{1, 2, 3},
		AllURL: h.opts.Prefix + "/trace?all=1", TraceURL: h.opts.Prefix + "/trace"}
	if s := q.Get("depth"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > maxFocusDepth {
			h.fail(w, r, badRequest("depth must be 1, 2 or 3"))
			return
		}
		v.Depth = n
	}
	var d *drawing
	if v.Focus != "" {
		e, err := h.entity(ctx, v.Focus)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		if e == nil {
			h.notFound(w, r, "no entity with id %q", v.Focus)
			return
		}
		v.Focus = e.ID
		if d, err = h.neighbourhoodOf(ctx, e.ID, v.Depth, maxDrawn); err != nil {
			h.fail(w, r, err)
			return
		}
	} else {
		ents, err := allEntities(ctx, h.k)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		d = whole(ents, v.All)
		if len(d.nodes) == 0 && !v.All && len(ents) > 0 {
			// No traceability entity: the page would be an empty box, so
			// it shows every note and its links, and says why.
			d, v.All, v.FellBack = whole(ents, true), true, true
		}
	}
	v.Nodes, v.Edges = len(d.nodes), len(d.edges)
	if len(d.nodes) > maxDrawn {
		v.TooMany = len(d.nodes)
		slices.SortFunc(d.nodes, func(a, b gnode) int { return cmp.Compare(a.ID, b.ID) })
		for _, n := range d.nodes {
			if !n.Missing {
				v.Entities = append(v.Entities, leafItem{ID: n.ID, Title: n.Title, Type: n.Type, TypeClass: typeClass(n.Type), URL: traceURL(h.opts.Prefix, n.ID)})
			}
		}
	} else if len(d.nodes) > 0 {
		v.Picture = d.picture(h.opts.Prefix)
	}
	title := "Traceability"
	if v.Focus != "" {
		title += ": " + v.Focus
	}
	h.render(w, http.StatusOK, "trace", h.newPage(r, "trace", title, v))
}
