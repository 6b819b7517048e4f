package indexfiles

import (
	"crypto/sha256"
	"slices"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// genMemo is what generation keeps in memory between two runs over one
// knowledge base (store.Memo): in a long-running process (kk serve, kk
// mcp) every transaction regenerates the index files, and most of what a
// leaf contributes to them is the same as last time. It is a pure cache:
// everything in it is a function of a leaf's path and the hash of its
// bytes (which determine every field generation reads), or of the set of
// leaves of the last run, so it never has to be invalidated, only
// replaced by the next run's. Nothing in it depends on what is on disk,
// so a transaction that fails after generating leaves it correct.
type genMemo struct {
	mu sync.Mutex // held for a whole nodes_hash or generation

	// The leaves of the last run, by path (each entry is one version: its
	// hash is in it), and what the run derived from the set of them:
	// GRAPH.md's order (ids in root collation), the nodes_hash lines
	// ("<path>\t<hash>") in their order (see store.HashLeaves).
	leaves    map[string]*leafGen
	graph     []*leafGen
	hashLines []string
	// degrees is the in-degree of every id the kept leaves link to
	// (linksTo of them), edited with them; nil when not known.
	degrees map[string]int

	// The tree the last nodes_hash advanced to, and its leaves' facts:
	// generation on that tree right after (PlanFor) uses them once.
	tree  *store.Tree
	facts map[*node.Node]*leafGen

	// The "By topic" ranking (rankmemo.go); ranked once the first
	// generation ranked without keeping it.
	ranks  *rankState
	ranked bool

	// warm is set by the first generation. Until then nothing is kept: a
	// command-line run generates once, and keeping would only cost it.
	warm bool

	// The inputs and key of every folder's index.md at the last run
	// (folderGen): a folder whose inputs are the same objects again has
	// the same key, which is then not hashed again.
	folders map[string]*folderGen
}

// folderGen is what a folder's index.md was generated from, as the kept
// objects they are, and the key and metrics they gave: its direct leaves
// (their facts, in the tree's order) with their in-degrees, its
// subfolders with their summaries, and the ranked leaves of each tag of
// its leaves. Facts are kept per leaf version, so the same fact means
// the same fields; everything else folderKey reads is derived from these.
type folderGen struct {
	nodes   []*node.Node // the leaves themselves: the same node is the same fact (a Tree's leaves do not change)
	leaves  []*leafGen
	degrees []int
	subs    []string
	sums    []string
	ranked  [][]*leafGen // by tag, in the order of tags
	tags    []string
	key     string
	metrics FolderMetrics
}

func newFolderGen(leaves []*node.Node, subs []string, summaries store.Summaries, facts map[*node.Node]*leafGen, inDegree map[string]int, ranked map[string][]*node.Node) *folderGen {
	f := &folderGen{nodes: leaves, leaves: make([]*leafGen, len(leaves)), degrees: make([]int, len(leaves)), subs: subs, sums: make([]string, len(subs))}
	for i, n := range leaves {
		f.leaves[i], f.degrees[i] = facts[n], inDegree[n.ID]
		for j, t := range n.Tags {
			if !slices.Contains(n.Tags[:j], t) && !slices.Contains(f.tags, t) {
				f.tags = append(f.tags, t)
			}
		}
	}
	for i, s := range subs {
		f.sums[i] = summaries[s]
	}
	slices.Sort(f.tags)
	f.ranked = make([][]*leafGen, len(f.tags))
	for i, t := range f.tags {
		for _, n := range ranked[t] {
			f.ranked[i] = append(f.ranked[i], facts[n])
		}
	}
	return f
}

// unchanged reports whether f was made from these inputs, without
// making a folderGen of them (the common case: nothing in the folder
// changed).
func (f *folderGen) unchanged(leaves []*node.Node, subs []string, summaries store.Summaries, facts map[*node.Node]*leafGen, inDegree map[string]int, ranked map[string][]*node.Node) bool {
	if len(leaves) != len(f.leaves) || !slices.Equal(subs, f.subs) {
		return false
	}
	for i, n := range leaves {
		if n != f.nodes[i] && facts[n] != f.leaves[i] || inDegree[n.ID] != f.degrees[i] {
			return false
		}
	}
	for i, s := range subs {
		if summaries[s] != f.sums[i] {
			return false
		}
	}
	// The same leaf versions carry the same tags.
	for i, t := range f.tags {
		r := ranked[t]
		if len(r) != len(f.ranked[i]) {
			return false
		}
		for j, n := range r {
			if facts[n] != f.ranked[i][j] {
				return false
			}
		}
	}
	return true
}

type genMemoKey struct{}

// leafGen is what generation derives from one leaf alone.
type leafGen struct {
	path   string
	hash   string   // "" when the tree had none: never kept
	links  []string // the ids it relates to (see linksTo)
	id     string
	title  string
	line   string            // the leaf's nodes_hash line
	digest [sha256.Size]byte // see leafDigest
	label  label
	graph  string // the leaf's section of GRAPH.md
}

// memoFor returns k's generation memo; nil for a zero KB.
func memoFor(k *store.KB) *genMemo {
	if k == nil {
		return nil
	}
	return store.Memo(k, genMemoKey{}, func() *genMemo { return &genMemo{} })
}

// maxIDEdits is how many leaves may come and go between two runs for the
// kept orders to be edited instead of sorted again.
const maxIDEdits = 64

// nodesHash is NodesHash(t), from the kept sorted lines when few leaves
// changed since the last run. A nil or cold memo computes it afresh.
func (m *genMemo) nodesHash(t *store.Tree) string {
	if m == nil {
		return NodesHash(t)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.warm {
		return NodesHash(t)
	}
	m.advance(t)
	return store.HashLines(m.hashLines)
}

// leafFacts returns, for every leaf of t, what generation derives from it
// alone, and the leaves' facts in GRAPH.md's order. m's lock is held.
func (m *genMemo) leafFacts(t *store.Tree) (map[*node.Node]*leafGen, []*leafGen) {
	if m == nil || !m.warm {
		if m != nil {
			m.warm = true
		}
		facts := make(map[*node.Node]*leafGen, len(t.Leaves))
		for _, n := range t.Leaves {
			facts[n] = newLeafGen(n, t.Hashes[n.Path])
		}
		return facts, graphOrder(t, facts)
	}
	if m.tree != t {
		m.advance(t)
	}
	facts := m.facts
	m.tree, m.facts = nil, nil // for this generation only: the caller may change t
	return facts, m.graph
}

// inDegrees is linksTo(t.Leaves), kept from one generation to the next
// and edited with the leaves that come and go, for t the tree m was just
// advanced to (leafFacts). m's lock is held.
func (m *genMemo) inDegrees(t *store.Tree) map[string]int {
	if m == nil || m.leaves == nil {
		return linksTo(t.Leaves)
	}
	if m.degrees == nil {
		m.degrees = linksTo(t.Leaves)
	}
	return m.degrees
}

// advance brings what m keeps from the last run's leaves to t's.
//
// The kept leaves are edited in place: a run that fails after advancing
// leaves m describing a tree that was never written, which the next run
// compares with its own like any other (every entry carries its hash).
func (m *genMemo) advance(t *store.Tree) {
	facts := make(map[*node.Node]*leafGen, len(t.Leaves))
	var added, removed []*leafGen
	complete := true // every leaf has a hash; else nothing is edited
	kept := 0        // leaves whose kept version is t's
	for _, n := range t.Leaves {
		h := t.Hashes[n.Path]
		e := m.leaves[n.Path]
		switch {
		case e != nil && h != "" && e.hash == h:
			kept++
		default:
			if e != nil {
				removed = append(removed, e) // an older version
			}
			e = newLeafGen(n, h)
			added = append(added, e)
		}
		facts[n] = e
		complete = complete && h != ""
	}
	if complete && m.leaves != nil && kept+len(removed) != len(m.leaves) {
		// Leaves whose path is gone: found by a pass over the kept ones
		// only when there are some.
		for p, e := range m.leaves {
			if _, ok := t.Hashes[p]; !ok {
				removed = append(removed, e)
			}
		}
	}
	edit := complete && m.leaves != nil && len(added)+len(removed) <= maxIDEdits
	byID := func(a, b *leafGen) int { return store.LocaleCompare(a.id, b.id) }
	graph := m.graph
	if !edit || !editSorted(&graph, removed, added, byID) {
		graph = graphOrder(t, facts)
	}
	lines := m.hashLines
	// UTF-16 order is the order HashLeaves sorts in: with no character at
	// or above U+E000 it is byte order, which HashLeaves uses then.
	byLine := func(a, b string) int { return store.CompareUTF16(a, b) }
	if !edit || !editSorted(&lines, genLines(removed), genLines(added), byLine) {
		hashes := make(map[string]string, len(t.Leaves))
		for _, n := range t.Leaves {
			hashes[n.Path] = t.Hashes[n.Path]
		}
		lines = store.LeafLines(hashes)
	}
	var next map[string]*leafGen
	switch {
	case !complete:
	case edit:
		next = m.leaves
		for _, e := range removed {
			if next[e.path] == e {
				delete(next, e.path)
			}
		}
		for _, e := range added {
			next[e.path] = e
		}
	default:
		next = make(map[string]*leafGen, len(t.Leaves))
		for _, e := range facts {
			next[e.path] = e
		}
	}
	degrees := m.degrees
	if next == nil || !edit {
		degrees = nil // counted again by the generation that needs them
	} else if degrees != nil {
		for _, e := range removed {
			for _, id := range e.links {
				if degrees[id]--; degrees[id] == 0 {
					delete(degrees, id)
				}
			}
		}
		for _, e := range added {
			for _, id := range e.links {
				degrees[id]++
			}
		}
	}
	m.leaves, m.graph, m.hashLines, m.degrees = next, graph, lines, degrees
	m.tree, m.facts = t, facts
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

func genLines(es []*leafGen) []string {
	out := make([]string, len(es))
	for i, e := range es {
		out[i] = e.line
	}
	return out
}

// editSorted removes removed and inserts added in *s, kept in the order
// of cmp (a total order on the elements kept, so the result is what
// sorting gives). It reports false when an element to remove is missing.
// The slice is copied first: the previous run may still hold it.
func editSorted[T any](s *[]T, removed, added []T, cmp func(a, b T) int) bool {
	out := slices.Clone(*s)
	for _, x := range removed {
		i, found := slices.BinarySearchFunc(out, x, cmp)
		if !found {
			return false
		}
		out = slices.Delete(out, i, i+1)
	}
	for _, x := range added {
		i, _ := slices.BinarySearchFunc(out, x, cmp)
		out = slices.Insert(out, i, x)
	}
	*s = out
	return true
}

func newLeafGen(n *node.Node, hash string) *leafGen {
	return &leafGen{path: n.Path, hash: hash, links: n.RelatesTo, id: n.ID, title: n.Title, line: n.Path + "\t" + hash, digest: leafDigest(n),
		label: label{node.EscapeLabel(n.Title), node.EscapeLabel(n.Description)}, graph: graphSection(n)}
}

// leafDigest hashes the fields a folder index shows of a leaf.
func leafDigest(n *node.Node) [sha256.Size]byte {
	return sha256.Sum256([]byte(n.Path + "\x00" + n.Type + "\x00" + n.Title + "\x00" + n.Description + "\x00" + strings.Join(n.Tags, "\x01")))
}

// graphSection is a leaf's section of GRAPH.md.
func graphSection(n *node.Node) string {
	var b strings.Builder
	b.WriteString("\n## " + n.ID + "\n\n- **kind:** " + n.Type + "\n- **title:** " + n.Title + "\n- **path:** " + n.Path + "\n")
	for _, f := range [...]struct {
		name string
		vals []string
	}{{"tags", n.Tags}, {"relates_to", n.RelatesTo}, {"depends_on", n.DependsOn}, {"derived_from", n.DerivedFrom}} {
		if len(f.vals) > 0 {
			b.WriteString("- **" + f.name + ":** " + strings.Join(f.vals, ", ") + "\n")
		}
	}
	return b.String()
}
