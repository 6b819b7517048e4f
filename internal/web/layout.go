package web

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/store"
)

// The pictures are layered drawings laid out here and written as inline
// SVG by the templates: edges point left to right where they can (cycles
// are broken by turning a depth-first search's back edges round), each
// node sits one layer right of its furthest predecessor, sources are
// pulled right next to their nearest successor, and the order inside a
// layer is improved by a few barycenter sweeps. Everything is ordered by
// id first, so the same graph gives the same picture.

// Sizes of a picture, in pixels.
const (
	nodeW   = 196
	nodeH   = 40
	gapX    = 76
	gapY    = 14
	dummyH  = 4 // the slot of an edge passing through a layer
	margin  = 12
	labelID = 28 // runes of the id shown
	labelT  = 30 // runes of the title shown
	sweeps  = 4
)

// svgGraph is a laid-out picture.
type svgGraph struct {
	Width, Height int
	Nodes         []svgNode
	Edges         []svgEdge
	Legend        []legendItem
}

type svgNode struct {
	X, Y, W, H int
	TextX      int
	ID, Title  string // the labels, cut to fit
	Tip        string // the whole id, type and title
	Class      string
	URL        string // "" for a missing entity
}

type svgEdge struct {
	D     string // the path
	Class string
	Tip   string
	Rev   bool // the arrow is at the path's start
}

type legendItem struct{ Name, Class string }

// layout places nodes (sorted by id) and edges (between ids of nodes).
func layout(nodes []gnode, edges []gedge, prefix string) *svgGraph {
	n := len(nodes)
	at := make(map[string]int, n)
	for i, nd := range nodes {
		at[store.IDKey(nd.ID)] = i
	}
	out := make([][]int, n)
	for _, e := range edges {
		u, ok1 := at[store.IDKey(e.From)]
		v, ok2 := at[store.IDKey(e.To)]
		if ok1 && ok2 && u != v && !slices.Contains(out[u], v) {
			out[u] = append(out[u], v)
		}
	}
	for i := range out {
		slices.Sort(out[i])
	}
	// Break cycles: a depth-first search's back edges are turned round.
	dag := make([][]int, n)
	addDag := func(u, v int) {
		if !slices.Contains(dag[u], v) {
			dag[u] = append(dag[u], v)
		}
	}
	state := make([]uint8, n) // 0 unseen, 1 on the path, 2 done
	var visit func(u int)
	visit = func(u int) {
		state[u] = 1
		for _, v := range out[u] {
			switch state[v] {
			case 0:
				addDag(u, v)
				visit(v)
			case 1:
				addDag(v, u)
			default:
				addDag(u, v)
			}
		}
		state[u] = 2
	}
	for i := range n {
		if state[i] == 0 {
			visit(i)
		}
	}
	preds := make([][]int, n)
	for u, vs := range dag {
		for _, v := range vs {
			preds[v] = append(preds[v], u)
		}
	}
	// Longest-path layers, in topological order.
	layer := make([]int, n)
	indeg := make([]int, n)
	for v := range n {
		indeg[v] = len(preds[v])
	}
	var order []int
	for v := range n {
		if indeg[v] == 0 {
			order = append(order, v)
		}
	}
	for i := 0; i < len(order); i++ {
		u := order[i]
		for _, v := range dag[u] {
			layer[v] = max(layer[v], layer[u]+1)
			if indeg[v]--; indeg[v] == 0 {
				order = append(order, v)
			}
		}
	}
	// Pull each source right, next to its nearest successor.
	for i := len(order) - 1; i >= 0; i-- {
		u := order[i]
		if len(preds[u]) > 0 || len(dag[u]) == 0 {
			continue
		}
		nearest := -1
		for _, v := range dag[u] {
			if nearest < 0 || layer[v] < nearest {
				nearest = layer[v]
			}
		}
		layer[u] = max(layer[u], nearest-1)
	}
	// Nodes with no edge at all are set apart, in rows under the drawing.
	var apart []int
	depth := 0
	for v := range n {
		if len(dag[v]) == 0 && len(preds[v]) == 0 {
			apart = append(apart, v)
			continue
		}
		depth = max(depth, layer[v]+1)
	}
	slices.SortStableFunc(apart, func(a, b int) int { return cmp.Compare(typeRank(nodes[a].Type), typeRank(nodes[b].Type)) })
	// A proper layered graph: an edge spanning several layers passes
	// through a dummy vertex in each layer between, which takes part in
	// the ordering, so that long edges run between nodes, not under them.
	// Vertices 0..n-1 are the nodes; dummies follow.
	vlayer := slices.Clone(layer)
	var up, down [][]int
	up, down = make([][]int, n), make([][]int, n)
	link := func(a, b int) {
		if !slices.Contains(down[a], b) {
			down[a] = append(down[a], b)
			up[b] = append(up[b], a)
		}
	}
	routes := map[[2]int][]int{} // (left node, right node) -> vertices from left to right
	route := func(a, b int) []int {
		k := [2]int{a, b}
		if r, ok := routes[k]; ok {
			return r
		}
		r := []int{a}
		for l := layer[a] + 1; l < layer[b]; l++ {
			vlayer = append(vlayer, l)
			up, down = append(up, nil), append(down, nil)
			r = append(r, len(vlayer)-1)
		}
		r = append(r, b)
		for i := 1; i < len(r); i++ {
			link(r[i-1], r[i])
		}
		routes[k] = r
		return r
	}
	type drawn struct {
		e    gedge
		path []int
		rev  bool // the edge points right to left: its arrow is at the path's start
	}
	var toDraw []drawn
	for _, e := range edges {
		u, ok1 := at[store.IDKey(e.From)]
		v, ok2 := at[store.IDKey(e.To)]
		if !ok1 || !ok2 || u == v {
			continue
		}
		if layer[u] < layer[v] {
			toDraw = append(toDraw, drawn{e: e, path: route(u, v)})
		} else {
			toDraw = append(toDraw, drawn{e: e, path: route(v, u), rev: true})
		}
	}
	nv := len(vlayer)
	layers := make([][]int, depth)
	for v := range nv {
		if v < n && len(dag[v]) == 0 && len(preds[v]) == 0 {
			continue
		}
		layers[vlayer[v]] = append(layers[vlayer[v]], v)
	}
	rank := func(v int) int {
		if v >= n {
			return 1000 // dummies last until the sweeps place them
		}
		return typeRank(nodes[v].Type)
	}
	for _, l := range layers {
		slices.SortStableFunc(l, func(a, b int) int {
			return cmp.Or(cmp.Compare(rank(a), rank(b)), cmp.Compare(a, b))
		})
	}
	// Order inside layers: barycenter sweeps, down then up.
	pos := make([]float64, nv)
	setPos := func() {
		for _, l := range layers {
			for i, v := range l {
				pos[v] = float64(i) - float64(len(l)-1)/2
			}
		}
	}
	setPos()
	sweep := func(l []int, nbrs [][]int) {
		bc := make(map[int]float64, len(l))
		for _, v := range l {
			if len(nbrs[v]) == 0 {
				bc[v] = pos[v]
				continue
			}
			sum := 0.0
			for _, u := range nbrs[v] {
				sum += pos[u]
			}
			bc[v] = sum / float64(len(nbrs[v]))
		}
		slices.SortStableFunc(l, func(a, b int) int { return cmp.Compare(bc[a], bc[b]) })
	}
	for range sweeps {
		for i := 1; i < depth; i++ {
			sweep(layers[i], up)
			setPos()
		}
		for i := depth - 2; i >= 0; i-- {
			sweep(layers[i], down)
			setPos()
		}
	}
	// Coordinates: each layer a column, centred vertically; a dummy takes
	// a thin slot.
	height := func(v int) int {
		if v >= n {
			return dummyH
		}
		return nodeH
	}
	colH := func(l []int) int {
		h := 0
		for i, v := range l {
			if i > 0 {
				h += gapY
			}
			h += height(v)
		}
		return h
	}
	tallest := 0
	for _, l := range layers {
		tallest = max(tallest, colH(l))
	}
	x, cy := make([]int, nv), make([]int, nv) // left side, vertical centre
	top := make([]int, nv)
	for li, l := range layers {
		y := margin + (tallest-colH(l))/2
		for _, v := range l {
			x[v], top[v], cy[v] = margin+li*(nodeW+gapX), y, y+height(v)/2
			y += height(v) + gapY
		}
	}
	cols, bottom := max(depth, 4), margin+tallest
	if len(apart) > 0 {
		cols = min(cols, len(apart))
		if tallest > 0 {
			bottom += 2 * gapY
		}
		for i, v := range apart {
			x[v], top[v] = margin+(i%cols)*(nodeW+gapX), bottom+(i/cols)*(nodeH+gapY)
			cy[v] = top[v] + nodeH/2
		}
		bottom += ((len(apart)+cols-1)/cols)*(nodeH+gapY) - gapY
	}
	width := max(depth, min(cols, len(apart)))
	g := &svgGraph{Width: 2*margin + width*nodeW + max(width-1, 0)*gapX, Height: bottom + margin}
	types := map[string]bool{}
	for v, nd := range nodes {
		sn := svgNode{X: x[v], Y: top[v], W: nodeW, H: nodeH, TextX: x[v] + 8,
			ID: truncate(nd.ID, labelID), Title: truncate(nd.Title, labelT), Class: "n t-" + typeClass(nd.Type)}
		switch {
		case nd.Missing:
			sn.Class = "n missing"
			sn.Title = "(no such entity)"
			sn.Tip = nd.ID + ": no entity has this id"
		default:
			sn.URL = nodeURL(prefix, nd.ID)
			sn.Tip = fmt.Sprintf("%s (%s): %s", nd.ID, nd.Type, nd.Title)
			types[nd.Type] = true
		}
		if nd.Focus {
			sn.Class += " focus"
		}
		g.Nodes = append(g.Nodes, sn)
	}
	// Edges, with parallel edges between one pair spread apart.
	pair := map[[2]int]int{}
	edgeTypes := map[string]bool{}
	for _, d := range toDraw {
		k := [2]int{d.path[0], d.path[len(d.path)-1]}
		off := pair[k] * 5
		pair[k]++
		var b strings.Builder
		px, py := x[d.path[0]]+nodeW, cy[d.path[0]]+off
		fmt.Fprintf(&b, "M%d %d", px, py)
		for _, v := range d.path[1:] {
			ex, ey := x[v], cy[v]+off
			c := (ex - px) / 2
			fmt.Fprintf(&b, " C%d %d %d %d %d %d", px+c, py, ex-c, ey, ex, ey)
			px, py = ex, ey
			if v >= n { // through a dummy: straight across its column
				px += nodeW
				fmt.Fprintf(&b, " L%d %d", px, py)
			}
		}
		g.Edges = append(g.Edges, svgEdge{D: b.String(), Class: "e e-" + typeClass(d.e.Type), Rev: d.rev,
			Tip: d.e.From + " " + d.e.Type + " " + d.e.To})
		edgeTypes[d.e.Type] = true
	}
	for _, t := range sortedKeys(types) {
		g.Legend = append(g.Legend, legendItem{Name: t, Class: "t-" + typeClass(t)})
	}
	for _, t := range sortedKeys(edgeTypes) {
		g.Legend = append(g.Legend, legendItem{Name: t, Class: "e-" + typeClass(t)})
	}
	return g
}

// typeRank orders the types inside a layer: the traceability chain first,
// then the graph's, then anything else.
func typeRank(t string) int {
	for i, k := range []string{"flag", "symbol", "adr", "req", "scenario", "test", "event", "molecule", "map", "practice"} {
		if strings.EqualFold(t, k) {
			return i
		}
	}
	return 100
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
