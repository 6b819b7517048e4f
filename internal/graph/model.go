// Package graph is kk's knowledge graph core (seed 002 and the typed
// entities of seed 003): atoms that own path globs, molecules that group
// them, their append-only changelog, and typed edges. Everything is stored
// in leaves of the knowledge tree under .ai/kenkeep/nodes/, in the v3
// format plus kk_ keys; this package reads those keys, validates them, and
// implements the query_graph, manage_graph and manage_changelog operations
// the CLI, MCP and HTTP faces call.
//
// Storage:
//   - An atom is any leaf with kk_paths. Atoms created by manage_graph are
//     leaves of type map ("what exists" in kenkeep's terms), id map-<slug>.
//   - A molecule is a leaf of type molecule, id molecule-<slug>.
//   - Name is the title, knowledge is the body (without kk's generated
//     Related/Citations blocks), description is set once from the first
//     line of the knowledge when the leaf is created.
//   - New graph leaves are written flat into nodes/graph/. Updates never
//     move a leaf: the path is presentation, and reassigning or orphaning an
//     atom must not rename files (use kk's place/rebalance tools to move).
//   - kk_version starts at 1 and grows by one on every write; a leaf without
//     it (written by hand) is at version 1.
//   - kk_updated_at is kept next to kk_created_at (seed 002's updatedAt).
package graph

import (
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/node"
)

// Front matter keys of the graph.
const (
	KeyPaths         = "kk_paths"
	KeyMolecule      = "kk_molecule"
	KeyRelated       = "kk_related"
	KeyEdges         = "kk_edges"
	KeyVersion       = "kk_version"
	KeyChangelog     = "kk_changelog"
	KeyCreatedAt     = "kk_created_at"
	KeyUpdatedAt     = "kk_updated_at"
	KeyCreatedByTask = "kk_created_by_task"
	KeyLastTask      = "kk_last_task"
	KeyOwner         = "kk_owner"
	KeyPriority      = "kk_priority"
	KeySeverity      = "kk_severity"
	KeyLinks         = "kk_links"
)

// Entity types (node type values) of the graph and the traceability layer.
const (
	TypeAtom     = "map" // the type of atoms manage_graph creates
	TypeMolecule = "molecule"
	TypeReq      = "req"
	TypeScenario = "scenario"
	TypeTest     = "test"
	TypeADR      = "adr"
	TypeFlag     = "flag"
	TypeEvent    = "event"
	TypeSymbol   = "symbol"
)

// EntityTypes lists the types kk knows, kenkeep's first. Other lowercase
// types are accepted and treated generically.
var EntityTypes = []string{"practice", "map", TypeMolecule, TypeReq, TypeScenario, TypeTest, TypeADR, TypeFlag, TypeEvent, TypeSymbol}

// Folder is where manage_graph writes new atoms and molecules, relative to nodes/.
const Folder = "graph"

// Kinds of graph entity, as seed 002's entityType and parentType name them.
const (
	KindAtom     = "atom"
	KindMolecule = "molecule"
)

// Related is one lightweight relationship, stored as {id, reason}.
type Related struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

// ChangelogEntry is one immutable changelog entry, stored as {at, task, summary}.
type ChangelogEntry struct {
	At      string `json:"createdAt"`
	Task    string `json:"taskId"`
	Summary string `json:"summary"`
}

// Edge is one typed edge kept in its source entity's kk_edges.
type Edge struct {
	Type       string   `json:"type"`
	To         string   `json:"to"`
	Kind       string   `json:"kind,omitempty"` // relates_to only
	CreatedAt  string   `json:"created_at"`
	CreatedBy  string   `json:"created_by"`
	Source     string   `json:"source"`
	Confidence *float64 `json:"confidence,omitempty"`
}

// Entity holds what atoms and molecules share.
type Entity struct {
	ID            string
	Path          string // relative to nodes/
	Type          string
	Name          string
	Knowledge     string
	Related       []Related
	Edges         []Edge
	Version       int64
	Changelog     []ChangelogEntry // oldest first, as stored
	CreatedAt     string
	UpdatedAt     string
	CreatedByTask string
	LastTask      string
}

// Atom is a leaf that owns path patterns.
type Atom struct {
	Entity
	Paths    []string
	Molecule string // "" for an orphan atom
}

// Molecule groups atoms.
type Molecule struct {
	Entity
}

// IsAtom reports whether a leaf is an atom (has kk_paths and is not a molecule).
func IsAtom(n *node.Node) bool {
	if n.Type == TypeMolecule {
		return false
	}
	_, ok := n.Extra(KeyPaths)
	return ok
}

// IsMolecule reports whether a leaf is a molecule.
func IsMolecule(n *node.Node) bool { return n.Type == TypeMolecule }

// KnowledgeOf returns a leaf body without kk's generated blocks, trimmed.
func KnowledgeOf(body []byte) string {
	return strings.TrimSpace(node.WithoutGeneratedBlocks(string(body)))
}

// AtomFromLeaf reads an atom from a leaf read with its front matter
// (store.ReadLeaf). Malformed kk_ keys are reported with the leaf's path.
func AtomFromLeaf(n *node.Node) (*Atom, error) {
	r := leafReader(n)
	return r.atom(n.ID, n.Type, n.Title, n.Body)
}

// MoleculeFromLeaf reads a molecule from a leaf read with its front matter.
func MoleculeFromLeaf(n *node.Node) (*Molecule, error) {
	r := leafReader(n)
	return r.molecule(n.ID, n.Type, n.Title, n.Body)
}

// extras is where a reader finds the kk_ keys: a leaf, or an index row.
type extras interface {
	Extra(key string) (any, bool)
}

type reader struct {
	path string
	src  extras
	err  error
}

func leafReader(n *node.Node) *reader { return &reader{path: n.Path, src: n} }

func (r *reader) atom(id, typ, title string, body []byte) (*Atom, error) {
	a := &Atom{Entity: r.entity(id, typ, title, body)}
	a.Paths = r.strings(KeyPaths)
	a.Molecule = r.str(KeyMolecule)
	return a, r.err
}

func (r *reader) molecule(id, typ, title string, body []byte) (*Molecule, error) {
	m := &Molecule{Entity: r.entity(id, typ, title, body)}
	return m, r.err
}

func (r *reader) fail(key, format string, args ...any) {
	if r.err == nil {
		r.err = &node.Error{Path: r.path, Field: key, Msg: fmt.Sprintf(format, args...)}
	}
}

func (r *reader) entity(id, typ, title string, body []byte) Entity {
	n := r.src
	e := Entity{ID: id, Path: r.path, Type: typ, Name: title, Knowledge: KnowledgeOf(body)}
	e.Version = 1
	if v, ok := n.Extra(KeyVersion); ok {
		i, isInt := v.(int64)
		if !isInt || i < 1 {
			r.fail(KeyVersion, "must be a whole number of at least 1, not %v", v)
		} else {
			e.Version = i
		}
	}
	e.CreatedAt = r.str(KeyCreatedAt)
	e.UpdatedAt = r.str(KeyUpdatedAt)
	e.CreatedByTask = r.str(KeyCreatedByTask)
	e.LastTask = r.str(KeyLastTask)
	for i, m := range r.maps(KeyRelated) {
		rel := Related{ID: r.field(KeyRelated, i, m, "id", true), Reason: r.field(KeyRelated, i, m, "reason", false)}
		e.Related = append(e.Related, rel)
	}
	for i, m := range r.maps(KeyChangelog) {
		e.Changelog = append(e.Changelog, ChangelogEntry{
			At:      r.field(KeyChangelog, i, m, "at", true),
			Task:    r.field(KeyChangelog, i, m, "task", false),
			Summary: r.field(KeyChangelog, i, m, "summary", true),
		})
	}
	for i, m := range r.maps(KeyEdges) {
		ed := Edge{
			Type:      r.field(KeyEdges, i, m, "type", true),
			To:        r.field(KeyEdges, i, m, "to", true),
			Kind:      r.field(KeyEdges, i, m, "kind", false),
			CreatedAt: r.field(KeyEdges, i, m, "created_at", false),
			CreatedBy: r.field(KeyEdges, i, m, "created_by", false),
			Source:    r.field(KeyEdges, i, m, "source", false),
		}
		if c, ok := m["confidence"]; ok && c != nil {
			switch x := c.(type) {
			case float64:
				ed.Confidence = &x
			case int64:
				f := float64(x)
				ed.Confidence = &f
			default:
				r.fail(KeyEdges, "entry %d: confidence must be a number", i+1)
			}
		}
		e.Edges = append(e.Edges, ed)
	}
	return e
}

func (r *reader) str(key string) string {
	v, ok := r.src.Extra(key)
	if !ok || v == nil {
		return ""
	}
	s, isStr := v.(string)
	if !isStr {
		r.fail(key, "must be a string")
	}
	return s
}

func (r *reader) strings(key string) []string {
	v, ok := r.src.Extra(key)
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		r.fail(key, "must be a list of strings")
		return nil
	}
	out := make([]string, 0, len(list))
	for i, e := range list {
		s, isStr := e.(string)
		if !isStr {
			r.fail(key, "entry %d must be a string", i+1)
			continue
		}
		out = append(out, s)
	}
	return out
}

func (r *reader) maps(key string) []map[string]any {
	v, ok := r.src.Extra(key)
	if !ok || v == nil {
		return nil
	}
	list, isList := v.([]any)
	if !isList {
		r.fail(key, "must be a list")
		return nil
	}
	out := make([]map[string]any, 0, len(list))
	for i, e := range list {
		m, isMap := e.(map[string]any)
		if !isMap {
			r.fail(key, "entry %d must be a mapping", i+1)
			continue
		}
		out = append(out, m)
	}
	return out
}

func (r *reader) field(key string, i int, m map[string]any, name string, required bool) string {
	v, ok := m[name]
	if !ok || v == nil {
		if required {
			r.fail(key, "entry %d has no %s", i+1, name)
		}
		return ""
	}
	switch x := v.(type) {
	case string:
		return x
	case int64, float64, bool:
		return fmt.Sprint(x)
	}
	r.fail(key, "entry %d: %s must be a string", i+1, name)
	return ""
}

// writeEntity stores the shared fields into n. Mappings inside lists
// (kk_related, kk_changelog, kk_edges entries) are written with sorted keys.
// Keys are set in a fixed order so that a new leaf lists them the same way every time; keys whose
// value did not change keep their bytes.
func writeEntity(n *node.Node, e *Entity, atom *Atom, fresh bool) error {
	n.Title = e.Name
	if KnowledgeOf(n.Body) != e.Knowledge {
		lead := ""
		if trimmed := strings.TrimLeft(string(n.Body), " \t\r\n"); len(trimmed) < len(n.Body) && strings.HasPrefix(string(n.Body), "\n") {
			lead = "\n"
		}
		n.Body = []byte(lead + e.Knowledge + "\n")
	}
	set := func(key string, v any, empty bool) error {
		if _, had := n.Extra(key); empty && !had {
			return nil
		}
		return n.SetExtra(key, v)
	}
	if atom != nil {
		if err := n.SetExtra(KeyPaths, node.List(atom.Paths)); err != nil {
			return err
		}
		if atom.Molecule == "" {
			if err := n.DeleteExtra(KeyMolecule); err != nil {
				return err
			}
		} else if err := n.SetExtra(KeyMolecule, atom.Molecule); err != nil {
			return err
		}
	}
	related := make([]any, len(e.Related))
	for i, rel := range e.Related {
		related[i] = map[string]any{"id": rel.ID, "reason": rel.Reason}
	}
	if err := set(KeyRelated, related, len(related) == 0); err != nil {
		return err
	}
	if len(e.Edges) > 0 {
		if err := n.SetExtra(KeyEdges, EdgeValues(e.Edges)); err != nil {
			return err
		}
	}
	// A hand-written leaf without kk_version is at version 1 and keeps
	// its bytes until a write raises the version.
	if err := set(KeyVersion, e.Version, e.Version == 1 && !fresh); err != nil {
		return err
	}
	log := make([]any, len(e.Changelog))
	for i, c := range e.Changelog {
		log[i] = map[string]any{"at": c.At, "task": c.Task, "summary": c.Summary}
	}
	if err := set(KeyChangelog, log, len(log) == 0); err != nil {
		return err
	}
	for _, kv := range []struct{ key, val string }{
		{KeyCreatedAt, e.CreatedAt}, {KeyUpdatedAt, e.UpdatedAt}, {KeyCreatedByTask, e.CreatedByTask}, {KeyLastTask, e.LastTask},
	} {
		if err := set(kv.key, kv.val, kv.val == ""); err != nil {
			return err
		}
	}
	return nil
}

// edgeValues converts edges into front matter values. Mappings inside a
// list are written with their keys sorted (frontmatter.Emit's rule).
func EdgeValues(edges []Edge) []any {
	out := make([]any, len(edges))
	for i, e := range edges {
		m := map[string]any{"type": e.Type, "to": e.To, "created_at": e.CreatedAt, "created_by": e.CreatedBy, "source": e.Source}
		if e.Kind != "" {
			m["kind"] = e.Kind
		}
		if e.Confidence != nil {
			m["confidence"] = *e.Confidence
		}
		out[i] = m
	}
	return out
}

// WriteAtom stores a into the leaf n (which it was read from, or a new leaf).
func WriteAtom(n *node.Node, a *Atom) error { return writeEntity(n, &a.Entity, a, false) }

// WriteMolecule stores m into the leaf n.
func WriteMolecule(n *node.Node, m *Molecule) error { return writeEntity(n, &m.Entity, nil, false) }

// FileVersion is a leaf's kk_version as written (1 when absent).
func FileVersion(n *node.Node) int64 {
	if v, ok := n.Extra(KeyVersion); ok {
		if i, ok := v.(int64); ok && i >= 1 {
			return i
		}
	}
	return 1
}

// Fields are the graph fields of one leaf, as kk_read shows them.
type Fields struct {
	Entity
	Priority, Severity, Owner string
	// Paths and Molecule are set for atoms.
	Paths    []string
	Molecule string
}

// FieldsOf reads the graph fields of leaf n (its kk_ keys); a malformed
// value is an error naming the key.
func FieldsOf(n *node.Node) (*Fields, error) {
	r := leafReader(n)
	f := &Fields{Entity: r.entity(n.ID, n.Type, n.Title, n.Body),
		Priority: r.str(KeyPriority), Severity: r.str(KeySeverity), Owner: r.str(KeyOwner)}
	if IsAtom(n) {
		f.Paths, f.Molecule = r.strings(KeyPaths), r.str(KeyMolecule)
	}
	return f, r.err
}

// EdgesOf reads a leaf's typed edges (kk_edges).
func EdgesOf(n *node.Node) ([]Edge, error) {
	r := leafReader(n)
	e := r.entity(n.ID, n.Type, n.Title, nil)
	return e.Edges, r.err
}
