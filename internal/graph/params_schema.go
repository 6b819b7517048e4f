package graph

import (
	"encoding/json"
	"reflect"
	"strconv"

	"github.com/invopop/jsonschema"
)

// JSON Schemas of the parameter objects, for `kk schema` and the MCP tool
// input schemas. The parameter types carry no schema tags of their own;
// their descriptions, enums and bounds are added here, next to nothing
// else, so that params.go stays about decoding.

// JSONSchema describes a list given as a JSON array or as a string holding one.
func (JSONArray[T]) JSONSchema() *jsonschema.Schema {
	r := &jsonschema.Reflector{ExpandedStruct: true, DoNotReference: true, Anonymous: true}
	item := r.ReflectFromType(reflect.TypeFor[T]())
	item.Version = ""
	item.ID = ""
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "array", Items: item},
		{Type: "string", Description: "The same list as a string holding a JSON array."},
	}}
}

// JSONSchema describes an id that may be null.
func (NullableID) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{{Type: "string"}, {Type: "null"}}}
}

// JSONSchema describes a list of paths given as an array or as one string.
func (PathList) JSONSchema() *jsonschema.Schema {
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "array", Items: &jsonschema.Schema{Type: "string"}},
		{Type: "string", Description: "Paths separated by commas and/or line breaks."},
	}}
}

// describe sets descriptions (and enums) on the properties of s.
func describe(s *jsonschema.Schema, props map[string]string, enums map[string][]any) {
	for name, d := range props {
		if p, ok := s.Properties.Get(name); ok {
			p.Description = d
		}
	}
	for name, e := range enums {
		if p, ok := s.Properties.Get(name); ok {
			p.Enum = e
		}
	}
}

func bounds(s *jsonschema.Schema, name string, lo, hi int) {
	if p, ok := s.Properties.Get(name); ok {
		p.Minimum = JsonNumber(lo)
		if hi > 0 {
			p.Maximum = JsonNumber(hi)
		}
	}
}

func JsonNumber(n int) json.Number { return json.Number(strconv.Itoa(n)) }

func kinds() []any { return []any{KindAtom, KindMolecule} }

// JSONSchemaExtend adds descriptions, enums and bounds.
func (QueryGraphParams) JSONSchemaExtend(s *jsonschema.Schema) {
	describe(s, map[string]string{
		"operation":        "get: one atom or molecule by id (a molecule comes with its atoms). search: atoms or molecules by text, molecule or orphans, paginated. context: the atoms whose path patterns match some files, grouped by molecule. A field of another operation (taskFile given to search) is refused, naming the fields the operation takes.",
		"entityType":       "atom or molecule; required for get and search.",
		"id":               "The entity id, for get.",
		"projectId":        "Optional; defaults to this knowledge base's project id, and any other value is refused.",
		"paths":            "For context: repository file paths to match against atom patterns.",
		"taskFile":         "For context: a task markdown file whose \"Context Files\" section lists more paths.",
		"query":            "For search: words that must all occur in the name or knowledge (case-insensitive).",
		"moleculeId":       "For search of atoms: only the atoms of this molecule.",
		"orphansOnly":      "For search of atoms: only atoms without a molecule.",
		"includeChangelog": "Include the newest changelog entries of each entity (default true).",
		"changelogLimit":   "How many changelog entries per entity (default 5).",
		"limit":            "For search: page size (default 20).",
		"offset":           "For search: entries to skip (default 0).",
	}, map[string][]any{
		"operation":  {"get", "search", "context"},
		"entityType": kinds(),
	})
	bounds(s, "changelogLimit", 0, MaxLimit)
	bounds(s, "limit", 1, MaxLimit)
	bounds(s, "offset", 0, 0)
}

// JSONSchemaExtend adds descriptions, enums and bounds.
func (ManageGraphParams) JSONSchemaExtend(s *jsonschema.Schema) {
	describe(s, map[string]string{
		"operation":        "create, update or delete one atom or molecule.",
		"entityType":       "atom or molecule.",
		"id":               "The entity id; required for update and delete.",
		"version":          "The version you last read; required for update and delete. A stale version fails with CONFLICT carrying the current one.",
		"projectId":        "Optional; defaults to this knowledge base's project id, and any other value is refused.",
		"name":             "Display name, 1-255 characters; required for create.",
		"paths":            "Atom path globs (relative, no \"..\", at most 20 of at most 512 characters); required when creating an atom.",
		"knowledge":        "What an agent must know before touching the matched files (at most 32 KB).",
		"knowledgeMode":    "For update: overwrite (default) replaces the knowledge; append adds it after a separator line naming the time and lastTaskId.",
		"moleculeId":       "The atom's molecule; null makes it an orphan.",
		"relatedAtoms":     "For atoms: [{atomId, reason}], at most 50.",
		"relatedMolecules": "For molecules: [{moleculeId, reason}], at most 50.",
		"createdByTaskId":  "For create: the task that created the entity (an opaque string).",
		"lastTaskId":       "For update and delete: the task making the change (an opaque string).",
		"cascade":          "For deleting a molecule: true deletes its atoms too; false (default) orphans them.",
	}, map[string][]any{
		"operation":     {"create", "update", "delete"},
		"entityType":    kinds(),
		"knowledgeMode": {"overwrite", "append"},
	})
	bounds(s, "version", 1, 0)
}

// JSONSchemaExtend adds descriptions, enums and bounds.
func (ManageChangelogParams) JSONSchemaExtend(s *jsonschema.Schema) {
	describe(s, map[string]string{
		"operation":  "append one immutable entry, or search the entries newest first.",
		"parentType": "atom or molecule.",
		"parentId":   "The id of the atom or molecule the changelog belongs to.",
		"projectId":  "Optional; defaults to this knowledge base's project id, and any other value is refused.",
		"taskId":     "For append: the task making the change (an opaque string).",
		"summary":    "For append: what changed and why (1 byte to 4 KB).",
		"limit":      "For search: page size (default 20).",
		"offset":     "For search: entries to skip (default 0).",
	}, map[string][]any{
		"operation":  {"append", "search"},
		"parentType": kinds(),
	})
	bounds(s, "limit", 1, MaxLimit)
	bounds(s, "offset", 0, 0)
}

// JSONSchemaExtend describes the fields of a relatedAtoms or
// relatedMolecules entry.
func (RelatedIn) JSONSchemaExtend(s *jsonschema.Schema) {
	describe(s, map[string]string{
		"atomId":     "The related atom (in relatedAtoms).",
		"moleculeId": "The related molecule (in relatedMolecules).",
		"reason":     "Why the two are related.",
	}, nil)
}
