package usage

import (
	"cmp"
	"context"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// NodeReads is how often one live node was read.
type NodeReads struct {
	ID   string `json:"id"`
	Path string `json:"path"` // relative to nodes/
	// Reads counts ledger lines; Sessions the distinct sessions among them.
	Reads    int    `json:"reads"`
	Sessions int    `json:"sessions"`
	LastRead string `json:"last_read,omitempty"`
}

// DocumentReads is how often a document that is not a live node (an index,
// or a node that no longer exists) was read.
type DocumentReads struct {
	Document string `json:"document"`
	Reads    int    `json:"reads"`
	Sessions int    `json:"sessions"`
}

// Summary is what the ledger says about the tree.
type Summary struct {
	// Reads counts the ledger's valid lines, Sessions their distinct sessions.
	Reads    int `json:"reads"`
	Sessions int `json:"sessions"`
	// LiveNodes counts the leaves of the tree; ReadNodes those read at
	// least once.
	LiveNodes int `json:"live_nodes"`
	ReadNodes int `json:"read_nodes"`
	// MostRead and LeastRead are the read nodes by reads, descending and
	// ascending (ties by id), each cut to the limit.
	MostRead  []NodeReads `json:"most_read"`
	LeastRead []NodeReads `json:"least_read"`
	// NeverRead are live nodes with no read, by id, cut to the limit;
	// NeverReadCount is the full number.
	NeverRead      []NodeReads `json:"never_read"`
	NeverReadCount int         `json:"never_read_count"`
	// Indexes are index.md reads; Unresolved are reads of documents that
	// are no live node (deleted, renamed, or never a node), by reads.
	Indexes    []DocumentReads `json:"indexes"`
	Unresolved []DocumentReads `json:"unresolved"`
	// BadLines are ledger lines that were skipped.
	BadLines []BadLine `json:"bad_lines"`
}

// Load reads the ledger and the tree of k and summarises them.
func Load(k *store.KB, limit int) (*Summary, error) {
	entries, bad, err := Read(k)
	if err != nil {
		return nil, err
	}
	t, err := index.ReadTree(context.Background(), k)
	if err != nil {
		return nil, err
	}
	s := Summarize(t, entries, limit)
	if bad != nil {
		s.BadLines = bad
	}
	return s, nil
}

// Summarize counts the reads of the ledger entries against the tree.
// limit > 0 cuts each list to that many items; 0 keeps them all.
func Summarize(t *store.Tree, entries []Entry, limit int) *Summary {
	type tally struct {
		reads    int
		sessions map[string]bool
		last     string
		lastAt   time.Time
	}
	count := func(m map[string]*tally, key string, e Entry) {
		c := m[key]
		if c == nil {
			c = &tally{sessions: map[string]bool{}}
			m[key] = c
		}
		c.reads++
		c.sessions[e.SessionID] = true
		// Entries are validated, so used_at parses; compare instants, not
		// strings, as writers may differ in precision and time zone.
		if at, _ := time.Parse(time.RFC3339Nano, e.UsedAt); c.last == "" || at.After(c.lastAt) {
			c.last, c.lastAt = e.UsedAt, at
		}
	}
	byPath := make(map[string]string, len(t.Leaves))
	for _, n := range t.Leaves {
		byPath[n.Path] = n.ID
	}
	nodes, indexes, unresolved := map[string]*tally{}, map[string]*tally{}, map[string]*tally{}
	sessions := map[string]bool{}
	for _, e := range entries {
		sessions[e.SessionID] = true
		id, index := resolve(t, byPath, e)
		switch {
		case index != "":
			count(indexes, index, e)
		case id != "":
			count(nodes, id, e)
		default:
			count(unresolved, e.Document, e)
		}
	}
	s := &Summary{Reads: len(entries), Sessions: len(sessions), LiveNodes: len(t.Leaves), ReadNodes: len(nodes),
		MostRead: []NodeReads{}, LeastRead: []NodeReads{}, NeverRead: []NodeReads{}, BadLines: []BadLine{}}
	var read []NodeReads
	for _, n := range t.Leaves {
		c := nodes[n.ID]
		if c == nil {
			s.NeverRead = append(s.NeverRead, NodeReads{ID: n.ID, Path: n.Path})
			continue
		}
		read = append(read, NodeReads{ID: n.ID, Path: n.Path, Reads: c.reads, Sessions: len(c.sessions), LastRead: c.last})
	}
	s.NeverReadCount = len(s.NeverRead)
	slices.SortFunc(s.NeverRead, func(a, b NodeReads) int { return strings.Compare(a.ID, b.ID) })
	s.NeverRead = cut(s.NeverRead, limit)
	slices.SortFunc(read, func(a, b NodeReads) int {
		return cmp.Or(cmp.Compare(b.Reads, a.Reads), cmp.Compare(b.Sessions, a.Sessions), strings.Compare(a.ID, b.ID))
	})
	s.MostRead = append(s.MostRead, cut(read, limit)...)
	least := slices.Clone(read)
	slices.SortFunc(least, func(a, b NodeReads) int {
		return cmp.Or(cmp.Compare(a.Reads, b.Reads), cmp.Compare(a.Sessions, b.Sessions), strings.Compare(a.ID, b.ID))
	})
	s.LeastRead = append(s.LeastRead, cut(least, limit)...)
	docs := func(m map[string]*tally) []DocumentReads {
		out := []DocumentReads{}
		for d, c := range m {
			out = append(out, DocumentReads{Document: d, Reads: c.reads, Sessions: len(c.sessions)})
		}
		slices.SortFunc(out, func(a, b DocumentReads) int {
			return cmp.Or(cmp.Compare(b.Reads, a.Reads), strings.Compare(a.Document, b.Document))
		})
		return cut(out, limit)
	}
	s.Indexes = docs(indexes)
	s.Unresolved = docs(unresolved)
	return s
}

// resolve maps a ledger document to a live node id, or to an index path
// (relative to .ai/kenkeep), or to neither. A leaf document is normally an
// id; a path under nodes/ (relative to .ai/kenkeep or to the repository)
// is looked up in the tree.
func resolve(t *store.Tree, byPath map[string]string, e Entry) (id, index string) {
	doc := strings.ReplaceAll(strings.TrimSpace(e.Document), `\`, "/")
	rel, isPath := nodesRel(doc)
	if isPath {
		if rel == "index.md" || strings.HasSuffix(rel, "/index.md") {
			return "", "nodes/" + rel
		}
		if id, ok := byPath[rel]; ok {
			return id, ""
		}
		return "", ""
	}
	if e.Type == TypeIndex {
		return "", doc
	}
	if n, ok := t.ByID(strings.TrimSuffix(doc, ".md")); ok {
		return n.ID, ""
	}
	return "", ""
}

// nodesRel returns a document path relative to nodes/ when the document is
// a path under it.
func nodesRel(doc string) (string, bool) {
	if i := strings.Index(doc, "/"+store.DirName+"/nodes/"); i >= 0 {
		doc = doc[i+1:] // an absolute path
	}
	doc = strings.TrimPrefix(doc, "./")
	doc = strings.TrimPrefix(doc, store.DirName+"/")
	if rel, ok := strings.CutPrefix(doc, "nodes/"); ok && rel != "" {
		return rel, true
	}
	return "", false
}

func cut[T any](s []T, limit int) []T {
	if limit > 0 && len(s) > limit {
		return s[:limit]
	}
	return s
}
