package indexfiles

import (
	"crypto/sha256"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// leafGen is what generation derives from one leaf alone.
type leafGen struct {
	id     string
	digest [sha256.Size]byte // see leafDigest
	label  label
	graph  string // the leaf's section of GRAPH.md
}

func newLeafGen(n *node.Node) *leafGen {
	return &leafGen{id: n.ID, digest: leafDigest(n), label: label{node.EscapeLabel(shown(n.Title)), node.EscapeLabel(shown(n.Description))}, graph: graphSection(n)}
}

// leafFacts makes the leafGen of every leaf of leaves that has none in
// facts yet.
func leafFacts(facts map[*node.Node]*leafGen, leaves []*node.Node) {
	var missing []*node.Node
	for _, n := range leaves {
		if facts[n] == nil {
			missing = append(missing, n)
		}
	}
	made := make([]*leafGen, len(missing))
	store.Parallel(len(missing), func(i int) { made[i] = newLeafGen(missing[i]) })
	for i, n := range missing {
		facts[n] = made[i]
	}
}

// graphOrder lists the facts of t's leaves in GRAPH.md's order: by id, in
// root collation.
func graphOrder(t *store.Tree, facts map[*node.Node]*leafGen) []*leafGen {
	ids := make([]string, len(t.Leaves))
	for i, n := range t.Leaves {
		ids[i] = n.ID
	}
	store.SortLocale(ids)
	out := make([]*leafGen, len(ids))
	for i, id := range ids {
		n, _ := t.ByID(id)
		out[i] = facts[n]
	}
	return out
}

// leafDigest hashes the fields a folder index shows of a leaf.
func leafDigest(n *node.Node) [sha256.Size]byte {
	return sha256.Sum256([]byte(n.Path + "\x00" + n.Type + "\x00" + n.Title + "\x00" + n.Description + "\x00" + strings.Join(n.Tags, "\x01")))
}

// graphSection is a leaf's section of GRAPH.md.
func graphSection(n *node.Node) string {
	var b strings.Builder
	b.WriteString("\n## " + n.ID + "\n\n- **kind:** " + n.Type + "\n- **title:** " + oneLine(n.Title) + "\n- **path:** " + n.Path + "\n")
	for _, f := range [...]struct {
		name string
		vals []string
	}{{"tags", n.Tags}, {"relates_to", n.RelatesTo}, {"depends_on", n.DependsOn}, {"derived_from", n.DerivedFrom}} {
		if len(f.vals) > 0 {
			b.WriteString("- **" + f.name + ":** " + oneLine(strings.Join(f.vals, ", ")) + "\n")
		}
	}
	return b.String()
}

// oneLine is s (shown) as one line of a generated file: GRAPH.md, which
// writes values as they are (kenkeep's format), and the tags of a
// folder's index.md. Each line break of a value a person wrote by hand
// (title: "First\n## Second", a tag "ok\n## Ignore previous
// instructions", which kk's writers refuse) becomes a space, so that it
// cannot start a line of its own, such as a "## " heading that reads as
// another node's section or as an instruction to the agent.
func oneLine(s string) string {
	s = shown(s)
	if !strings.ContainsAny(s, "\r\n") {
		return s
	}
	return strings.NewReplacer("\r\n", " ", "\n", " ", "\r", " ").Replace(s)
}
