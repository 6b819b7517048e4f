package web

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func nodesOf(ids ...string) []gnode {
	out := make([]gnode, len(ids))
	for i, id := range ids {
		out[i] = gnode{ID: id, Title: "title of " + id, Type: "req"}
	}
	return out
}

// column returns the layer (column index) each node was put in.
func columns(g *svgGraph) map[string]int {
	out := map[string]int{}
	for _, n := range g.Nodes {
		out[n.ID] = (n.X - margin) / (nodeW + gapX)
	}
	return out
}

func TestLayoutLayers(t *testing.T) {
	g := layout(nodesOf("a", "b", "c", "d"), []gedge{{"a", "b", "x"}, {"b", "c", "x"}, {"a", "c", "y"}, {"d", "c", "z"}}, "")
	cols := columns(g)
	// a -> b -> c; a -> c passes b's layer; d, a source, sits next to c.
	if want := map[string]int{"a": 0, "b": 1, "c": 2, "d": 1}; !reflect.DeepEqual(cols, want) {
		t.Fatalf("columns %v, want %v", cols, want)
	}
	if len(g.Edges) != 4 {
		t.Fatalf("%d edges", len(g.Edges))
	}
	long := 0
	for _, e := range g.Edges {
		if strings.Contains(e.D, " L") {
			long++ // through a dummy vertex
		}
	}
	if long != 1 {
		t.Errorf("%d edges pass through a layer, want 1 (a -> c)", long)
	}
	if g.Width != 2*margin+3*nodeW+2*gapX {
		t.Errorf("width %d", g.Width)
	}
}

func TestLayoutCycles(t *testing.T) {
	g := layout(nodesOf("a", "b", "c"), []gedge{{"a", "b", "x"}, {"b", "c", "x"}, {"c", "a", "x"}, {"b", "a", "y"}, {"a", "a", "self"}}, "")
	cols := columns(g)
	if cols["a"] == cols["b"] || cols["b"] == cols["c"] {
		t.Fatalf("a cycle put neighbours in one layer: %v", cols)
	}
	rev := 0
	for _, e := range g.Edges {
		if e.Rev {
			rev++
		}
	}
	if len(g.Edges) != 4 || rev != 2 {
		t.Errorf("%d edges (the self loop is left out), %d drawn right to left, want 4 and 2: %+v", len(g.Edges), rev, g.Edges)
	}
}

func TestLayoutApart(t *testing.T) {
	g := layout(nodesOf("a", "b", "lone1", "lone2"), []gedge{{"a", "b", "x"}}, "/p")
	for _, n := range g.Nodes {
		if strings.HasPrefix(n.ID, "lone") && n.Y < margin+nodeH+2*gapY {
			t.Errorf("%s at y %d, want under the drawing", n.ID, n.Y)
		}
		if n.URL != "/p/node/"+n.ID {
			t.Errorf("%s links to %q", n.ID, n.URL)
		}
	}
	if empty := layout(nil, nil, ""); empty.Width != 2*margin || len(empty.Nodes) != 0 {
		t.Errorf("empty: %+v", empty)
	}
}

func TestLayoutMissingAndLabels(t *testing.T) {
	nodes := []gnode{{ID: "a", Title: strings.Repeat("long title ", 10), Type: "weird type!"}, {ID: "gone", Missing: true}}
	g := layout(nodes, []gedge{{"a", "GONE", "relates_to"}}, "")
	if len(g.Edges) != 1 {
		t.Fatalf("edge ends are matched without regard to case: %+v", g.Edges)
	}
	if g.Nodes[0].Class != "n t-other" || len([]rune(g.Nodes[0].Title)) != labelT || !strings.HasSuffix(g.Nodes[0].Title, "…") {
		t.Errorf("node %+v", g.Nodes[0])
	}
	if g.Nodes[1].Class != "n missing" || g.Nodes[1].URL != "" {
		t.Errorf("missing node %+v", g.Nodes[1])
	}
}

// TestLayoutDeterministic lays the same graph out twice, with its edges
// given in another order the second time.
func TestLayoutDeterministic(t *testing.T) {
	var ids []string
	var edges []gedge
	for i := range 60 {
		ids = append(ids, fmt.Sprintf("n%02d", i))
		edges = append(edges, gedge{fmt.Sprintf("n%02d", i), fmt.Sprintf("n%02d", (i*7+3)%60), "x"})
	}
	a := layout(nodesOf(ids...), edges, "")
	rev := make([]gedge, len(edges))
	for i, e := range edges {
		rev[len(edges)-1-i] = e
	}
	d := newDrawing()
	d.nodes = append(d.nodes, nodesOf(ids...)...)
	d.edges = rev
	b := d.picture("")
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same graph gave two pictures")
	}
	if a.Width > 2*margin+61*(nodeW+gapX) || a.Height > 60*(nodeH+gapY)+1000 {
		t.Errorf("picture %dx%d", a.Width, a.Height)
	}
}
