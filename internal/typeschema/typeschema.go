// Package typeschema makes draft 2020-12 JSON Schemas from Go types: it
// generates a schema from a type (reflection, keywords in a fixed order),
// compiles it once, validates JSON-shaped documents against it with every
// failure named by its JSON pointer, and parses JSON, YAML and markdown
// front matter into such documents. Schemas stand alone: no $ref to
// another file, nothing loaded from disk or the network.
//
// It depends on no package of kk's domain, so that any package can check
// its input against the schema of its own type (the symbol extractor its
// manifests); kk's registry of named schemas is internal/schema.
package typeschema

import (
	"errors"
	"reflect"
)

// Entry names a schema and the Go type it is generated from.
type Entry struct {
	// Name is what `kk schema` and `kk validate` take, and the file name
	// under schemas/.
	Name string
	// Title is the schema's "title".
	Title string
	// Description is one line: the schema's "description" and what
	// `kk schema --list` shows.
	Description string
	// Type is the Go type the schema is generated from.
	Type reflect.Type
}

// ErrInvalidSchema wraps a failure to build a schema: a bug in a Go type
// or its tags, not in the user's document.
var ErrInvalidSchema = errors.New("internal error: registered schema cannot be built")

// Schema is an entry's schema, generated and compiled on first use, once.
// It is safe for concurrent use.
type Schema struct{ c compiled }

// New returns the schema of e.
func New(e Entry) *Schema { return &Schema{c: compiled{entry: e}} }

// Entry is the entry s was made from.
func (s *Schema) Entry() Entry { return s.c.entry }

// JSON returns the schema as indented JSON with a trailing newline; the
// caller must not modify it.
func (s *Schema) JSON() ([]byte, error) {
	if err := s.c.generate(); err != nil {
		return nil, err
	}
	return s.c.json, nil
}

// Validate checks doc against the schema. doc is a JSON-shaped value as
// ParseDocument returns it (nil, bool, string, numbers, []any,
// map[string]any); any other Go value is first converted through
// encoding/json. A document that does not match returns a
// *ValidationError listing every failure.
func (s *Schema) Validate(doc any) error {
	sch, err := s.c.compile()
	if err != nil {
		return err
	}
	doc, err = jsonShaped(doc)
	if err != nil {
		return err
	}
	verr := sch.Validate(doc)
	if verr == nil {
		return nil
	}
	return newValidationError(s.c.entry.Name, verr)
}
