package picture

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// fills colours the nodes of the types kk knows; other types stay white.
var fills = map[string]string{
	"practice": "#f2f2f2",
	"map":      "#e3f2fd",
	"molecule": "#ede7f6",
	"req":      "#fff3cd",
	"scenario": "#e8f5e9",
	"test":     "#d1ecf1",
	"adr":      "#f8d7da",
	"flag":     "#fde2c8",
	"event":    "#e2e3f3",
	"symbol":   "#eeeeee",
}

// typeOrder lists the types of fills in a stable order, for classDef lines.
var typeOrder = []string{"practice", "map", "molecule", "req", "scenario", "test", "adr", "flag", "event", "symbol"}

// loose reports whether edges of type t are drawn dashed: the untyped
// relationships, as opposed to the edges of the traceability table.
func loose(t string) bool { return t == index.EdgeRelatesTo || t == index.EdgeRelated }

// groups returns, in the molecules view, each molecule's member atoms
// (by the molecule's store.IDKey) and the molecule of each atom.
func (p *Picture) groups() (members map[string][]Node, in map[string]string) {
	members, in = map[string][]Node{}, map[string]string{}
	if p.View != ViewMolecules {
		return members, in
	}
	byKey := map[string]Node{}
	for _, n := range p.Nodes {
		byKey[store.IDKey(n.ID)] = n
	}
	for _, e := range p.Edges { // sorted: members come in the atoms' id order
		if e.Type != EdgeMemberOf {
			continue
		}
		a, m := store.IDKey(e.From), store.IDKey(e.To)
		if _, ok := in[a]; ok {
			continue
		}
		in[a] = m
		members[m] = append(members[m], byKey[a])
	}
	return members, in
}

// mermaidIDs gives every node an identifier Mermaid accepts: "n_" and the
// id with each character other than an ASCII letter or digit replaced by
// "_" (the prefix keeps clear of Mermaid's keywords, such as end, and of
// ids starting with o or x, which Mermaid reads as edge heads). Two ids
// that come out alike are told apart by a suffix, _2, _3 …, in node order.
func mermaidIDs(nodes []Node) map[string]string {
	out := make(map[string]string, len(nodes))
	taken := map[string]bool{}
	for _, n := range nodes {
		var b strings.Builder
		b.WriteString("n_")
		for _, r := range n.ID {
			if r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		id := b.String()
		for i := 2; taken[id]; i++ {
			id = b.String() + "_" + strconv.Itoa(i)
		}
		taken[id] = true
		out[store.IDKey(n.ID)] = id
	}
	return out
}

// mermaidText escapes text for a double-quoted Mermaid string: characters
// Mermaid would read as markup become its entity codes, and line breaks
// become spaces.
var mermaidText = strings.NewReplacer(
	`"`, "#quot;", "#", "#35;", "&", "#amp;", "<", "#lt;", ">", "#gt;",
	"`", "#96;", "|", "#124;", "%", "#37;", `\`, "#92;",
	"\r\n", " ", "\n", " ", "\r", " ", "\t", " ",
)

// label is the text of a node: its id, and its title on a second line when
// it says more than the id.
func label(n Node, br string, esc func(string) string) string {
	title := strings.TrimSpace(n.Title)
	if title == "" || title == n.ID {
		return esc(n.ID)
	}
	return esc(n.ID) + br + esc(title)
}

// mermaid is the picture as a Mermaid flowchart.
func (p *Picture) mermaid() string {
	ids := mermaidIDs(p.Nodes)
	members, in := p.groups()
	var w strings.Builder
	w.WriteString("flowchart LR\n")
	used := map[string]bool{}
	node := func(indent string, n Node) {
		fmt.Fprintf(&w, "%s%s[\"%s\"]", indent, ids[store.IDKey(n.ID)], label(n, "<br/>", mermaidText.Replace))
		if _, ok := fills[n.Type]; ok {
			fmt.Fprintf(&w, ":::%s", n.Type)
			used[n.Type] = true
		}
		w.WriteString("\n")
	}
	for _, n := range p.Nodes {
		key := store.IDKey(n.ID)
		if _, member := in[key]; member {
			continue // drawn inside its molecule
		}
		atoms := members[key]
		if len(atoms) == 0 {
			node("  ", n)
			continue
		}
		fmt.Fprintf(&w, "  subgraph %s [\"%s\"]\n", ids[key], label(n, "<br/>", mermaidText.Replace))
		for _, a := range atoms {
			node("    ", a)
		}
		w.WriteString("  end\n")
		if _, ok := fills[n.Type]; ok {
			fmt.Fprintf(&w, "  class %s %s\n", ids[key], n.Type)
			used[n.Type] = true
		}
	}
	for _, e := range p.Edges {
		if e.Type == EdgeMemberOf && p.View == ViewMolecules {
			continue
		}
		arrow := "-->"
		if loose(e.Type) {
			arrow = "-.->"
		}
		fmt.Fprintf(&w, "  %s %s|\"%s\"| %s\n", ids[store.IDKey(e.From)], arrow, mermaidText.Replace(e.Type), ids[store.IDKey(e.To)])
	}
	for _, t := range typeOrder {
		if used[t] {
			fmt.Fprintf(&w, "  classDef %s fill:%s,stroke:#555,color:#000\n", t, fills[t])
		}
	}
	return w.String()
}

// dotText escapes text for a double-quoted Graphviz string: a backslash
// and a quote are escaped, line breaks become spaces.
var dotText = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\r\n", " ", "\n", " ", "\r", " ")

func dotQuote(s string) string { return `"` + dotText.Replace(s) + `"` }

// dot is the picture as a Graphviz digraph; a molecule and its atoms are a
// cluster.
func (p *Picture) dot() string {
	members, in := p.groups()
	var w strings.Builder
	w.WriteString("digraph kk {\n")
	w.WriteString("  rankdir=LR;\n")
	w.WriteString("  node [shape=box, style=\"rounded,filled\", fillcolor=\"#ffffff\", fontname=\"Helvetica\", fontsize=10];\n")
	w.WriteString("  edge [fontname=\"Helvetica\", fontsize=9];\n")
	node := func(indent string, n Node) {
		fmt.Fprintf(&w, "%s%s [label=\"%s\"", indent, dotQuote(n.ID), label(n, `\n`, dotText.Replace))
		if n.Type == "molecule" {
			w.WriteString(", shape=folder")
		}
		if fill, ok := fills[n.Type]; ok {
			fmt.Fprintf(&w, ", fillcolor=\"%s\"", fill)
		}
		w.WriteString("];\n")
	}
	for _, n := range p.Nodes {
		key := store.IDKey(n.ID)
		if _, member := in[key]; member {
			continue
		}
		atoms := members[key]
		if len(atoms) == 0 {
			node("  ", n)
			continue
		}
		fmt.Fprintf(&w, "  subgraph %s {\n", dotQuote("cluster_"+n.ID))
		w.WriteString("    style=\"rounded,dashed\";\n")
		node("    ", n)
		for _, a := range atoms {
			node("    ", a)
		}
		w.WriteString("  }\n")
	}
	for _, e := range p.Edges {
		if e.Type == EdgeMemberOf && p.View == ViewMolecules {
			continue
		}
		fmt.Fprintf(&w, "  %s -> %s [label=%s", dotQuote(e.From), dotQuote(e.To), dotQuote(e.Type))
		if loose(e.Type) {
			w.WriteString(", style=dashed")
		}
		w.WriteString("];\n")
	}
	w.WriteString("}\n")
	return w.String()
}
