package schema

import "github.com/invopop/jsonschema"

// LeafFrontMatter is the front matter of a v3 leaf (nodes/**/<id>.md): the
// keys kenkeep v3 writes plus the optional OKF v0.2 keys. It exists to
// generate the "node" schema; internal/node reads and writes leaves.
// Unknown keys are allowed, because kk keeps them on round trip.
type LeafFrontMatter struct {
	Type          string         `json:"type" jsonschema:"pattern=^[a-z][a-z0-9_-]*$,description=Kind of node: practice (how we build) or map (what exists); other lowercase types are accepted."`
	Title         string         `json:"title" jsonschema:"minLength=1,pattern=\\S,description=Display name."`
	Description   string         `json:"description" jsonschema:"description=One-line summary."`
	Tags          []string       `json:"tags" jsonschema:"description=Free-form tags."`
	Status        string         `json:"status,omitempty" jsonschema:"enum=draft,enum=stable,enum=deprecated,description=OKF lifecycle state."`
	StaleAfter    string         `json:"stale_after,omitempty" jsonschema:"format=date,description=Date (YYYY-MM-DD) after which the node should be reviewed."`
	Generated     map[string]any `json:"generated,omitempty" jsonschema:"description=OKF: who or what wrote the node and when (free-form)."`
	Verified      map[string]any `json:"verified,omitempty" jsonschema:"description=OKF: who confirmed the node and when (free-form)."`
	Sources       []any          `json:"sources,omitempty" jsonschema:"description=OKF: where the knowledge came from."`
	SchemaVersion int            `json:"kk_schema_version" jsonschema:"description=Leaf format version; kk writes 3."`
	ID            string         `json:"kk_id" jsonschema:"pattern=^[a-z][a-z0-9_-]*-[a-z0-9]+(-[a-z0-9]+)*$,description=Identity: <type>-<slug>; the file is named <kk_id>.md."`
	DerivedFrom   []string       `json:"kk_derived_from" jsonschema:"description=Provenance: session ids\\, document paths\\, URLs or a retired id."`
	RelatesTo     []string       `json:"kk_relates_to" jsonschema:"description=Ids of loosely related nodes."`
	DependsOn     []string       `json:"kk_depends_on,omitempty" jsonschema:"description=Ids of nodes this one depends on (absent means none)."`
	Confidence    string         `json:"kk_confidence" jsonschema:"enum=low,enum=medium,enum=high,description=How sure the author is."`
}

// JSONSchemaExtend opens the leaf schema to unknown keys and pins the
// format version.
func (LeafFrontMatter) JSONSchemaExtend(s *jsonschema.Schema) {
	s.AdditionalProperties = jsonschema.TrueSchema
	if p, ok := s.Properties.Get("kk_schema_version"); ok {
		p.Const = 3
	}
}

// FolderSummaries is the front matter of FOLDER_SUMMARIES.md.
type FolderSummaries struct {
	SchemaVersion int               `json:"schema_version" jsonschema:"description=Format version of the file; always 1."`
	Summaries     map[string]string `json:"summaries" jsonschema:"description=One-line summary per folder under nodes/ (\"\" is the root); keys use / separators."`
}

// JSONSchemaExtend pins the format version.
func (FolderSummaries) JSONSchemaExtend(s *jsonschema.Schema) {
	if p, ok := s.Properties.Get("schema_version"); ok {
		p.Const = 1
	}
}
