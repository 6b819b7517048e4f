// Package schema is kk's registry of JSON Schemas: every structured input
// kk accepts (front matter, config files, the JSON plans agents hand to kk
// primitives) has a name, a Go type, and a draft 2020-12 schema generated
// from that type. `kk schema <name>` prints one, `kk validate <name>` checks
// a document against one, and schemas/<name>.json holds a committed copy.
//
// Schemas are generated from the Go types, never written by hand, and each
// one stands alone: no $ref to another file, nothing loaded from disk or
// the network.
//
// The registry imports the packages that own the types. A package whose
// type is registered here therefore cannot import schema; it validates its
// input through its caller (the CLI, MCP or HTTP face) instead.
package schema

import (
	"bytes"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/typeschema"
)

// Entry is one registered schema: its name, title, description and Go
// type.
type Entry = typeschema.Entry

// entries is the registry: the core's schemas (coreEntries) and each
// area's, listed in a file of its own (entries_<area>.go) so that no two
// areas edit the same list. It is built once, here, from those lists, in
// the order written: no init function adds to it, and it never changes.
var entries = slices.Concat(coreEntries, curateEntries, graphEntries, packEntries, rebalanceEntries, serveEntries, symbolEntries)

// coreEntries are the schemas of the knowledge base's own files.
var coreEntries = []Entry{
	{Name: "config", Title: "kk config.yaml", Description: "Settings in .ai/kenkeep/config.yaml; unknown settings are an error.", Type: reflect.TypeFor[store.Config]()},
	{Name: "folder-summaries", Title: "kk FOLDER_SUMMARIES.md front matter", Description: "Front matter of .ai/kenkeep/FOLDER_SUMMARIES.md: a one-line summary per folder under nodes/.", Type: reflect.TypeFor[FolderSummaries]()},
	{Name: "installed-version", Title: "kk installed-version", Description: "The .ai/kenkeep/.state/installed-version file: which kk version set up the knowledge base, and when.", Type: reflect.TypeFor[store.Installed]()},
	{Name: "node", Title: "kk leaf front matter", Description: "Front matter of a knowledge leaf (nodes/**/<kk_id>.md): kenkeep v3 keys plus optional OKF v0.2 keys; other keys are kept.", Type: reflect.TypeFor[LeafFrontMatter]()},
	{Name: "node-input", Title: "kk node write input", Description: "The JSON that `kk node write --input` takes: one whole leaf to create or update.", Type: reflect.TypeFor[contracts.NodeInput]()},
}

// UnknownError is a schema name that is not in the registry.
type UnknownError struct {
	Name  string
	Known []string
}

func (e *UnknownError) Error() string {
	return fmt.Sprintf("unknown schema %q; known schemas: %s", e.Name, strings.Join(e.Known, ", "))
}

// Names returns the registered schema names, sorted.
func Names() []string {
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name
	}
	slices.Sort(names)
	return names
}

// Entries returns the registered schemas, sorted by name.
func Entries() []Entry {
	out := slices.Clone(entries)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// Lookup returns the entry for name, or an *UnknownError.
func Lookup(name string) (Entry, error) {
	for _, e := range entries {
		if e.Name == name {
			return e, nil
		}
	}
	return Entry{}, &UnknownError{Name: name, Known: Names()}
}

// JSON returns the named schema as JSON, indented by two spaces, with a
// trailing newline. The caller may modify the returned slice.
func JSON(name string) ([]byte, error) {
	c, err := compiledFor(name)
	if err != nil {
		return nil, err
	}
	data, err := c.JSON()
	if err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil
}

// Validate checks doc against the named schema (typeschema.Schema's
// Validate): a document that does not match returns a *ValidationError
// listing every failure.
func Validate(name string, doc any) error {
	c, err := compiledFor(name)
	if err != nil {
		return err
	}
	return c.Validate(doc)
}

// cache holds each schema, generated and compiled on first use, so that
// validating many documents costs one compilation. It is process-wide on
// purpose: the registry it compiles (entries) is fixed at build time, so
// an entry can never be stale and nothing needs a cache of its own.
var (
	cacheMu sync.Mutex
	cache   = map[string]*typeschema.Schema{}
)

func compiledFor(name string) (*typeschema.Schema, error) {
	e, err := Lookup(name)
	if err != nil {
		return nil, err
	}
	cacheMu.Lock()
	defer cacheMu.Unlock()
	c := cache[name]
	if c == nil {
		c = typeschema.New(e)
		cache[name] = c
	}
	return c, nil
}

// The schema machinery, under the names kk's faces use.
type (
	ValidationError = typeschema.ValidationError
	Failure         = typeschema.Failure
	ParseError      = typeschema.ParseError
)

// BaseURI prefixes every schema's $id.
const BaseURI = typeschema.BaseURI

// URI returns the $id of the named schema.
func URI(name string) string { return typeschema.URI(name) }

// ParseDocument turns a file's bytes (JSON, markdown front matter or
// YAML) into the JSON-shaped value Validate takes
// (typeschema.ParseDocument).
func ParseDocument(data []byte) (any, error) { return typeschema.ParseDocument(data) }

// ErrInvalidSchema wraps a failure to build a registered schema: a bug in
// a registered Go type or its tags, not in the user's document.
var ErrInvalidSchema = typeschema.ErrInvalidSchema
