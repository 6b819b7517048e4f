// Package extract reads typed traceability entities (req, scenario, test,
// adr, flag, event, symbol) and their typed edges from repository files
// other than the leaves of the knowledge tree. Each kind of input has an
// Extractor; the index (internal/index) syncs what they return into the
// same tables as the leaves, with the source file as provenance.
//
// Two extractors exist: Markdown (documents whose front matter carries id,
// type and links) and Symbols (a symbol manifest, JSON or YAML). Adding
// another one (SCIP or LSP symbols, coverage reports) means writing a type
// that implements Extractor and listing it in FromConfig; storage does not
// change.
package extract

import (
	"fmt"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Extractor reads entities from repository files.
type Extractor interface {
	// Name identifies the extractor in provenance and reports (such as
	// "markdown").
	Name() string
	// Sources lists the repository-relative files (slash-separated,
	// sorted) the extractor reads under the repository root. Files that
	// do not exist are not listed.
	Sources(root string) ([]string, error)
	// Extract returns the entities of one source file, given its
	// repository-relative path and content. A malformed file returns an
	// *Error; a file that declares nothing returns no entities.
	Extract(root, rel string, src []byte) ([]Entity, error)
}

// Entity is one extracted entity. Ids, edge targets and types are
// normalised kk ids and types.
type Entity struct {
	ID          string
	Type        string
	Title       string
	Status      string
	Priority    string
	Severity    string
	Owner       string
	Description string
	Tags        []string
	Body        string
	Edges       []Edge
	// Source is the repository-relative file the entity was read from.
	Source string
	// CreatedAt and UpdatedAt are the times the document gives
	// (created_at, updated_at: RFC 3339 or YYYY-MM-DD), normalized to
	// RFC 3339; "" when it gives none.
	CreatedAt, UpdatedAt string
}

// Edge is one typed edge from the entity that declares it.
type Edge struct {
	Type       string
	To         string
	Confidence *float64
}

// Error is a malformed source file. Field names the offending value: a
// front matter key path (links.verified_by[1]) for markdown documents, a
// JSON pointer (/symbols/2/implements/0) for manifests, "" for the whole
// file.
type Error struct {
	Source string
	Field  string
	Msg    string
}

func (e *Error) Error() string {
	if e.Field == "" {
		return e.Source + ": " + e.Msg
	}
	return fmt.Sprintf("%s: %s: %s", e.Source, e.Field, e.Msg)
}

// FromConfig returns the extractors a knowledge base's config asks for, in
// the order the index runs them: markdown documents in cfg.DocsFolders(),
// then the symbol manifests cfg.SymbolManifests().
func FromConfig(cfg store.Config) []Extractor {
	return []Extractor{
		&Markdown{Folders: cfg.DocsFolders()},
		&Symbols{Files: cfg.SymbolManifests()},
	}
}

// Entity types of the traceability layer: what markdown documents may
// declare and what edges may point at (besides map and molecule, which
// affects reaches).
var Types = []string{"req", "scenario", "test", "adr", "flag", "event", "symbol"}

// EdgeRule says which entity types an edge type connects. An empty To
// means any type.
type EdgeRule struct {
	From []string
	To   []string
}

// EdgeRules is kk's typed-edge table (the one graph.EdgeTable holds)
// as extractors apply it: an edge is accepted only from the types in From,
// and its target must be of a type in To. relates_to is left out: it needs
// a kind, which extracted edges cannot carry.
var EdgeRules = map[string]EdgeRule{
	"depends_on":     {From: []string{"req"}, To: []string{"req"}},
	"specified_by":   {From: []string{"req"}, To: []string{"scenario"}},
	"verified_by":    {From: []string{"req"}, To: []string{"test"}},
	"implements":     {From: []string{"symbol"}, To: []string{"req"}},
	"covered_by":     {From: []string{"symbol"}, To: []string{"test"}},
	"constrained_by": {From: []string{"symbol"}, To: []string{"adr"}},
	"affects":        {From: []string{"adr"}, To: []string{"symbol", "map", "molecule"}},
	"guards":         {From: []string{"flag"}, To: []string{"symbol", "event", "req"}},
	"publishes":      {From: []string{"symbol"}, To: []string{"event"}},
	"consumes":       {From: []string{"symbol"}, To: []string{"event"}},
}

// EdgeTypesFrom lists, sorted, the edge types an entity of type typ may declare.
func EdgeTypesFrom(typ string) []string {
	var out []string
	for t, r := range EdgeRules {
		if slices.Contains(r.From, typ) {
			out = append(out, t)
		}
	}
	slices.Sort(out)
	return out
}

// NormalizeID checks an id as people write it for an entity of type typ
// and returns it as given (trimmed): an entity keeps exactly the id its
// writer gave, REQ-7 stays REQ-7, and lookups compare ids without regard
// to case. Ids holding other characters than ASCII letters, digits, '-',
// '_' and '.' (spaces, '/', non-ASCII letters) are refused, as are ids
// that are only a type name.
func NormalizeID(typ, id string) (string, error) {
	if !validType(typ) {
		return "", fmt.Errorf("%q is not a valid type; use lowercase letters, digits and -", typ)
	}
	id = strings.TrimSpace(id)
	if err := node.CheckID(id); err != nil {
		return "", fmt.Errorf("id %w", err)
	}
	if strings.EqualFold(id, typ) {
		return "", fmt.Errorf("id %q has nothing after its type %s", id, typ)
	}
	return id, nil
}

// NormalizeRef checks an edge target that may be of any of the given
// types and returns it as given; whether the entity it names has one of
// those types is checked against the index (kk check, edge-endpoint-types).
func NormalizeRef(types []string, id string) (string, error) {
	id = strings.TrimSpace(id)
	if err := node.CheckID(id); err != nil {
		return "", fmt.Errorf("id %w", err)
	}
	return id, nil
}

func validType(typ string) bool {
	if typ == "" || typ[0] == '-' {
		return false
	}
	for _, r := range typ {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '-') {
			return false
		}
	}
	return true
}

// edge checks one declared edge of an entity of type from and returns it
// with its target normalised. On failure it names the part at fault
// ("type", "to" or "confidence") and what is wrong.
func edge(from, typ, to string, confidence *float64) (e Edge, part, msg string) {
	rule, ok := EdgeRules[typ]
	if !ok {
		if typ == "relates_to" {
			return Edge{}, "type", "relates_to needs a kind, which extracted links cannot carry; use a typed edge (" + strings.Join(EdgeTypesFrom(from), ", ") + ")"
		}
		return Edge{}, "type", fmt.Sprintf("%q is not an edge type a %s can declare; use one of %s", typ, from, strings.Join(EdgeTypesFrom(from), ", "))
	}
	if !slices.Contains(rule.From, from) {
		allowed := EdgeTypesFrom(from)
		if len(allowed) == 0 {
			return Edge{}, "type", fmt.Sprintf("%s edge starts at %s; %s declares no edges", withArticle(typ), withArticle(strings.Join(rule.From, " or ")), withArticle(from))
		}
		return Edge{}, "type", fmt.Sprintf("%s edge starts at %s, not %s; %s can declare %s", withArticle(typ), withArticle(strings.Join(rule.From, " or ")), withArticle(from), withArticle(from), strings.Join(allowed, ", "))
	}
	if confidence != nil && (*confidence < 0 || *confidence > 1) {
		return Edge{}, "confidence", fmt.Sprintf("%v is outside 0..1", *confidence)
	}
	id, err := NormalizeRef(rule.To, to)
	if err != nil {
		return Edge{}, "to", err.Error()
	}
	return Edge{Type: typ, To: id, Confidence: confidence}, "", ""
}

// withArticle puts "a" or "an" before a type name.
func withArticle(s string) string {
	if s != "" && strings.ContainsRune("aeio", rune(s[0])) {
		return "an " + s
	}
	return "a " + s
}

// addEdge appends e unless an edge of the same type to the same target
// (compared without regard to case) is already there (the first
// declaration wins).
func addEdge(edges []Edge, e Edge) []Edge {
	for _, x := range edges {
		if x.Type == e.Type && strings.EqualFold(x.To, e.To) {
			return edges
		}
	}
	return append(edges, e)
}
