package extract

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/typeschema"
)

// SymbolManifestSchema is the registered schema every manifest is checked
// against before use (schemas/symbol-manifest.json).
const SymbolManifestSchema = "symbol-manifest"

// SymbolManifestEntry is the symbol manifest's schema: the registry lists
// it (internal/schema), and the extractor checks every manifest against it
// before use.
var SymbolManifestEntry = typeschema.Entry{
	Name:        SymbolManifestSchema,
	Title:       "kk symbol manifest",
	Description: "A symbol manifest (.ai/kenkeep/symbols.json or .yaml by default): code symbols and their implements, covered_by, constrained_by, publishes and consumes edges; unknown keys are an error.",
	Type:        reflect.TypeFor[contracts.SymbolManifest](),
}

var symbolManifest = typeschema.New(SymbolManifestEntry)

// checkManifest parses a manifest's bytes (JSON or YAML) into a
// JSON-shaped document and checks it against the symbol-manifest schema.
// A schema failure names the first failing JSON pointer as the field and
// lists the others in the message (Source is filled in by the caller).
func checkManifest(src []byte) (any, error) {
	doc, err := typeschema.ParseDocument(src)
	if err != nil {
		return nil, &Error{Msg: err.Error()}
	}
	err = symbolManifest.Validate(doc)
	if err == nil {
		return doc, nil
	}
	var ve *typeschema.ValidationError
	if !errors.As(err, &ve) || len(ve.Failures) == 0 {
		return nil, err
	}
	first := ve.Failures[0]
	msg := first.Message
	if len(ve.Failures) > 1 {
		rest := make([]string, len(ve.Failures)-1)
		for i, f := range ve.Failures[1:] {
			rest[i] = f.String()
		}
		msg += " (also " + strings.Join(rest, "; ") + ")"
	}
	field := first.Pointer
	if field == "" {
		field = "(root)"
	}
	return nil, &Error{Field: field, Msg: msg}
}

// Symbols extracts symbol entities and their implements, covered_by,
// constrained_by, publishes and consumes edges from symbol manifests
// (contracts.SymbolManifest), JSON or YAML:
//
//	schema_version: 1
//	symbols:
//	  - id: auth-login            # default: derived from name
//	    name: auth.Login
//	    kind: function
//	    file: internal/auth/login.go
//	    implements: [REQ-7]
//	    covered_by: [TEST-login]
//
// A manifest is checked against the symbol-manifest schema first, so a
// malformed one is reported with the JSON pointer of the failing value.
type Symbols struct {
	// Files are repository-relative manifest paths.
	Files []string
}

// Name implements Extractor.
func (*Symbols) Name() string { return "symbols" }

// Sources lists the manifests that exist.
func (s *Symbols) Sources(root string) ([]string, error) {
	var out []string
	for _, f := range s.Files {
		clean, err := repoRel(f)
		if err != nil {
			return nil, fmt.Errorf("symbol manifest %q: %w", f, err)
		}
		fi, err := os.Stat(filepath.Join(root, filepath.FromSlash(clean)))
		if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.Mode().IsRegular() {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("symbol manifest %s: %w", clean, err)
		}
		out = append(out, clean)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// symbolEdges returns the edge lists of a symbol in the order of
// contracts.SymbolEdgeKeys.
func symbolEdges(sym contracts.Symbol) [][]string {
	return [][]string{sym.Implements, sym.CoveredBy, sym.ConstrainedBy, sym.Publishes, sym.Consumes}
}

// Extract implements Extractor.
func (s *Symbols) Extract(_, rel string, src []byte) ([]Entity, error) {
	doc, err := checkManifest(src)
	if err != nil {
		var ee *Error
		if errors.As(err, &ee) {
			return nil, &Error{Source: rel, Field: ee.Field, Msg: ee.Msg}
		}
		return nil, &Error{Source: rel, Msg: err.Error()}
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, &Error{Source: rel, Msg: err.Error()}
	}
	var m contracts.SymbolManifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, &Error{Source: rel, Msg: err.Error()}
	}
	out := make([]Entity, 0, len(m.Symbols))
	where := map[string]int{}
	for i, sym := range m.Symbols {
		at := fmt.Sprintf("/symbols/%d", i)
		var id string
		if sym.ID != "" {
			if id, err = NormalizeID("symbol", sym.ID); err != nil {
				return nil, &Error{Source: rel, Field: at + "/id", Msg: err.Error()}
			}
		} else {
			if !strings.ContainsFunc(sym.Name, func(r rune) bool {
				return r < 128 && (r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
			}) {
				return nil, &Error{Source: rel, Field: at + "/name", Msg: "has no ASCII letter or digit to derive an id from; give the symbol an id"}
			}
			if id, err = node.DeriveID("symbol", sym.Name); err == nil {
				id, err = NormalizeID("symbol", id)
			}
			if err != nil {
				return nil, &Error{Source: rel, Field: at + "/name", Msg: err.Error() + "; give the symbol an id"}
			}
		}
		if j, dup := where[strings.ToLower(id)]; dup {
			field := at + "/id"
			if sym.ID == "" {
				field = at + "/name"
			}
			return nil, &Error{Source: rel, Field: field, Msg: fmt.Sprintf("gives the id %s, which /symbols/%d already has", id, j)}
		}
		where[strings.ToLower(id)] = i
		e := Entity{ID: id, Type: "symbol", Title: strings.TrimSpace(sym.Name), Description: sym.Description,
			Status: sym.Status, Owner: sym.Owner, Source: rel, Body: symbolBody(sym)}
		for _, t := range sym.Tags {
			if !slices.Contains(e.Tags, t) {
				e.Tags = append(e.Tags, t)
			}
		}
		for k, targets := range symbolEdges(sym) {
			key := contracts.SymbolEdgeKeys[k]
			for j, to := range targets {
				ed, _, msg := edge("symbol", key, to, nil)
				if msg != "" {
					return nil, &Error{Source: rel, Field: fmt.Sprintf("%s/%s/%d", at, key, j), Msg: msg}
				}
				e.Edges = addEdge(e.Edges, ed)
			}
		}
		out = append(out, e)
	}
	return out, nil
}

// symbolBody is the searchable text of a symbol: its name, kind and file.
func symbolBody(sym contracts.Symbol) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Symbol `%s`", strings.TrimSpace(sym.Name))
	if sym.Kind != "" {
		fmt.Fprintf(&b, " (%s)", sym.Kind)
	}
	if sym.File != "" {
		fmt.Fprintf(&b, " in `%s`", sym.File)
	}
	b.WriteString(".\n")
	if sym.Description != "" {
		b.WriteString("\n" + sym.Description + "\n")
	}
	return b.String()
}
