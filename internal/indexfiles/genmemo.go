package indexfiles

import (
	"crypto/sha256"
	"maps"
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
// leaves of the last generation, so it never has to be invalidated, only
// replaced by the next generation's. Nothing in it depends on what is on
// disk, so a transaction that fails after generating leaves it correct.
type genMemo struct {
	mu     sync.Mutex // held for a whole generation
	leaves map[leafKey]*leafGen
	// graphIDs are the ids of leaves, in GRAPH.md's order (root
	// collation).
	graphIDs []string

	// The leaves nodes_hash was last computed over, and its lines
	// ("<path>\t<hash>") in their order (see store.HashLeaves).
	hashKeys  map[leafKey]struct{}
	hashLines []string

	titles titleSet // the titles of the leaves of the last generation

	// The "By topic" ranking (rankmemo.go); ranked once the first
	// generation ranked without keeping it.
	ranks    *rankState
	ranked   bool
	rankFile string // the rank cache of the first generation ("": none)

	// Whether nodes_hash and the leaf facts were computed once. The
	// first run over a KB keeps nothing: a command-line run computes them
	// once, and keeping them would only cost it.
	hashed, generated bool
}

type genMemoKey struct{}

// leafKey names one version of one leaf.
type leafKey struct{ path, hash string }

// leafGen is what generation derives from one leaf alone.
type leafGen struct {
	id     string
	title  string
	digest [sha256.Size]byte // see leafDigest
	label  label
	graph  string // the leaf's section of GRAPH.md
}

// memoFor returns k's generation memo; nil for a zero KB.
func memoFor(k *store.KB) *genMemo {
	if k == nil {
		return nil
	}
	return store.Memo(k, genMemoKey{}, func() *genMemo { return &genMemo{rankFile: rankCachePath(k)} })
}

// maxIDEdits is how many ids may come and go between two generations for
// GRAPH.md's order to be edited instead of sorted again.
const maxIDEdits = 64

// leafFacts returns, for every leaf of t, what generation derives from it
// alone, reusing the previous generation's for leaves whose path and hash
// are the same, and the leaves' ids in GRAPH.md's order. A nil memo
// derives everything.
func (m *genMemo) leafFacts(t *store.Tree) (map[*node.Node]*leafGen, []string, map[*node.Node]int) {
	out := make(map[*node.Node]*leafGen, len(t.Leaves))
	if m != nil && !m.generated {
		m.generated = true
		m = nil
	}
	if m == nil {
		ids := make([]string, len(t.Leaves))
		for i, n := range t.Leaves {
			out[n] = newLeafGen(n)
			ids[i] = n.ID
		}
		store.SortLocale(ids)
		return out, ids, titleRanks(t.Leaves)
	}
	next := make(map[leafKey]*leafGen, len(t.Leaves))
	var added, removed []*leafGen
	for _, n := range t.Leaves {
		h := t.Hashes[n.Path]
		key := leafKey{n.Path, h}
		e := m.leaves[key]
		if e == nil || h == "" {
			e = newLeafGen(n)
			added = append(added, e)
		}
		out[n] = e
		if h != "" {
			next[key] = e
		}
	}
	if len(next) != len(t.Leaves) {
		m.leaves = nil // a leaf without a hash: order from scratch
	}
	for key, e := range m.leaves {
		if _, ok := next[key]; !ok {
			removed = append(removed, e)
		}
	}
	edit := m.leaves != nil && len(added)+len(removed) <= maxIDEdits
	ids := m.graphIDs
	if !edit || !editSorted(&ids, genIDs(removed), genIDs(added), store.LocaleCompare) {
		ids = make([]string, len(t.Leaves))
		for i, n := range t.Leaves {
			ids[i] = n.ID
		}
		store.SortLocale(ids)
	}
	titles := m.titles
	if !edit || !m.editTitles(&titles, removed, added) {
		titles = distinctTitles(t.Leaves)
	}
	m.leaves, m.graphIDs, m.titles = next, ids, titles
	if len(next) != len(t.Leaves) {
		m.leaves, m.graphIDs, m.titles = nil, nil, titleSet{}
	}
	rank := make(map[string]int, len(titles.order))
	for i, title := range titles.order {
		rank[title] = i
	}
	byTitle := make(map[*node.Node]int, len(t.Leaves))
	for _, n := range t.Leaves {
		byTitle[n] = rank[n.Title]
	}
	return out, ids, byTitle
}

// titleSet is the leaves' titles: how many leaves have each, and the
// distinct ones in locale order.
type titleSet struct {
	count map[string]int
	order []string
}

func distinctTitles(leaves []*node.Node) titleSet {
	ts := titleSet{count: make(map[string]int, len(leaves))}
	for _, n := range leaves {
		if ts.count[n.Title]++; ts.count[n.Title] == 1 {
			ts.order = append(ts.order, n.Title)
		}
	}
	store.SortLocale(ts.order)
	return ts
}

// editTitles updates *ts for the leaves that went and came; false when
// the previous set is inconsistent with them.
func (m *genMemo) editTitles(ts *titleSet, removed, added []*leafGen) bool {
	if ts.count == nil {
		return false
	}
	count := maps.Clone(ts.count)
	var gone, come []string
	for _, e := range removed {
		switch count[e.title]--; {
		case count[e.title] == 0:
			delete(count, e.title)
			gone = append(gone, e.title)
		case count[e.title] < 0:
			return false
		}
	}
	for _, e := range added {
		if count[e.title]++; count[e.title] == 1 {
			come = append(come, e.title)
		}
	}
	order := ts.order
	if !editSorted(&order, gone, come, store.LocaleCompare) {
		return false
	}
	*ts = titleSet{count: count, order: order}
	return true
}

// titleRanks ranks leaves by title in locale order; equal titles share a
// rank. Only the order of ranks is used (the catalog and the By topic
// order compare them).
func titleRanks(leaves []*node.Node) map[*node.Node]int {
	ts := distinctTitles(leaves)
	rank := make(map[string]int, len(ts.order))
	for i, title := range ts.order {
		rank[title] = i
	}
	out := make(map[*node.Node]int, len(leaves))
	for _, n := range leaves {
		out[n] = rank[n.Title]
	}
	return out
}

func genIDs(es []*leafGen) []string {
	ids := make([]string, len(es))
	for i, e := range es {
		ids[i] = e.id
	}
	return ids
}

// nodesHash is NodesHash(t), computed from the previous run's sorted
// lines when few leaves changed since. A nil memo computes it afresh.
func (m *genMemo) nodesHash(t *store.Tree) string {
	if m == nil {
		return NodesHash(t)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.hashed {
		m.hashed = true
		return NodesHash(t)
	}
	next := make(map[leafKey]struct{}, len(t.Leaves))
	var added, removed []string
	for _, n := range t.Leaves {
		key := leafKey{n.Path, t.Hashes[n.Path]}
		next[key] = struct{}{}
		if _, ok := m.hashKeys[key]; !ok {
			added = append(added, key.path+"\t"+key.hash)
		}
	}
	for key := range m.hashKeys {
		if _, ok := next[key]; !ok {
			removed = append(removed, key.path+"\t"+key.hash)
		}
	}
	lines := m.hashLines
	// UTF-16 order is the order HashLeaves sorts in: with no character at
	// or above U+E000 it is byte order, which HashLeaves uses then.
	if m.hashKeys == nil || len(added)+len(removed) > maxIDEdits || !editSorted(&lines, removed, added, store.CompareUTF16) {
		hashes := make(map[string]string, len(t.Leaves))
		for _, n := range t.Leaves {
			hashes[n.Path] = t.Hashes[n.Path]
		}
		lines = store.LeafLines(hashes)
	}
	m.hashKeys, m.hashLines = next, lines
	return store.HashLines(lines)
}

// editSorted removes removed and inserts added in *ids, kept in the order
// of cmp (a total order, so the result is what sorting gives). It reports false when an id to remove is missing.
// The slice is copied first: the previous generation may still hold it.
func editSorted(ids *[]string, removed, added []string, cmp func(a, b string) int) bool {
	s := slices.Clone(*ids)
	for _, id := range removed {
		i, found := slices.BinarySearchFunc(s, id, cmp)
		if !found {
			return false
		}
		s = slices.Delete(s, i, i+1)
	}
	for _, id := range added {
		i, _ := slices.BinarySearchFunc(s, id, cmp)
		s = slices.Insert(s, i, id)
	}
	*ids = s
	return true
}

func newLeafGen(n *node.Node) *leafGen {
	return &leafGen{id: n.ID, title: n.Title, digest: leafDigest(n), label: label{node.EscapeLabel(n.Title), node.EscapeLabel(n.Description)}, graph: graphSection(n)}
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
