package trace

import (
	"bytes"
	"encoding/json"
	"github.com/kk-project/kk/internal/graph"

	"github.com/invopop/jsonschema"
)

// KBEntityIn is one entity of a kb_upsert changeset. An id that exists is
// updated (absent fields are left alone); a new id is created. An entity
// keeps exactly the id its writer gave ("REQ-7" stays REQ-7); ids are
// compared without regard to case.
type KBEntityIn struct {
	ID          string   `json:"id" jsonschema:"minLength=1,maxLength=128,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$,description=the entity's id\\, kept exactly as given (REQ-7 stays REQ-7; lookups ignore case): ASCII letters\\, digits\\, '-'\\, '_' and '.'"`
	Type        string   `json:"type" jsonschema:"enum=req,enum=scenario,enum=test,enum=adr,enum=flag,enum=event,enum=symbol"`
	Title       string   `json:"title,omitempty" jsonschema:"maxLength=255,description=short summary; required when the entity is created"`
	Status      *string  `json:"status,omitempty" jsonschema:"enum=draft,enum=stable,enum=deprecated,description=lifecycle (default draft on create)"`
	Priority    *string  `json:"priority,omitempty" jsonschema:"maxLength=64,description=e.g. must\\, should\\, could"`
	Severity    *string  `json:"severity,omitempty" jsonschema:"maxLength=64"`
	Owner       *string  `json:"owner,omitempty" jsonschema:"maxLength=255"`
	Tags        []string `json:"tags,omitempty" jsonschema:"maxItems=50"`
	Links       []string `json:"links,omitempty" jsonschema:"maxItems=50,description=URLs"`
	TextRef     *string  `json:"text_ref,omitempty" jsonschema:"maxLength=512,description=pointer to a markdown document or blob"`
	Description *string  `json:"description,omitempty" jsonschema:"maxLength=1024,description=one-line summary"`
	Body        *string  `json:"body,omitempty" jsonschema:"description=markdown body (at most 32 KB)"`
	Folder      string   `json:"folder,omitempty" jsonschema:"description=folder under nodes/ for a new entity (default: the type's folder)"`
	Version     *int64   `json:"version,omitempty" jsonschema:"minimum=1,description=when given\\, the update fails with CONFLICT unless the entity is at this version"`
}

// KBEdgeIn is one edge of a kb_upsert changeset. It is stored in the
// source entity's kk_edges with created_at and created_by stamped by kk.
type KBEdgeIn struct {
	Type       string   `json:"type" jsonschema:"enum=depends_on,enum=specified_by,enum=verified_by,enum=implements,enum=covered_by,enum=constrained_by,enum=affects,enum=guards,enum=publishes,enum=consumes,enum=relates_to"`
	From       string   `json:"from" jsonschema:"minLength=1"`
	To         string   `json:"to" jsonschema:"minLength=1"`
	Kind       string   `json:"kind,omitempty" jsonschema:"maxLength=64,description=how the two are related (relates_to only\\, required there)"`
	Confidence *float64 `json:"confidence,omitempty" jsonschema:"minimum=0,maximum=1"`
}

// KBUpsertParams is the parameter object of kb_upsert: a changeset applied
// all-or-nothing.
type KBUpsertParams struct {
	ProjectID string       `json:"projectId,omitempty" jsonschema:"description=optional: this knowledge base's project id (config projectId); any other value is refused"`
	Entities  []KBEntityIn `json:"entities,omitempty" jsonschema:"maxItems=1000"`
	Edges     []KBEdgeIn   `json:"edges,omitempty" jsonschema:"maxItems=5000"`
	CreatedBy string       `json:"created_by" jsonschema:"minLength=1,maxLength=255,description=who applies the changeset (an agent or a person)"`
	Source    string       `json:"source" jsonschema:"minLength=1,maxLength=512,description=where the facts come from (a task\\, a document\\, a session)"`
}

// KBEntityRef names an entity to delete: an id, or {id, version}.
type KBEntityRef struct {
	ID      string `json:"id"`
	Version *int64 `json:"version,omitempty"`
}

// UnmarshalJSON accepts "id" or {"id":…, "version":…}.
func (r *KBEntityRef) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		r.Version = nil
		return json.Unmarshal(b, &r.ID)
	}
	type plain KBEntityRef
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return err
	}
	*r = KBEntityRef(p)
	return nil
}

// KBEdgeRef names an edge to delete.
type KBEdgeRef struct {
	Type string `json:"type" jsonschema:"minLength=1"`
	From string `json:"from" jsonschema:"minLength=1"`
	To   string `json:"to" jsonschema:"minLength=1"`
}

// KBDeleteParams is the parameter object of kb_delete.
type KBDeleteParams struct {
	ProjectID string        `json:"projectId,omitempty" jsonschema:"description=optional: this knowledge base's project id (config projectId); any other value is refused"`
	Entities  []KBEntityRef `json:"entities,omitempty" jsonschema:"maxItems=1000"`
	Edges     []KBEdgeRef   `json:"edges,omitempty" jsonschema:"maxItems=5000"`
	CreatedBy string        `json:"created_by" jsonschema:"minLength=1,maxLength=255"`
	Source    string        `json:"source" jsonschema:"minLength=1,maxLength=512"`
}

// DeleteOptions restrict kb_delete for agents (the MCP tool): every entity
// must carry its version, and types config does not let agents delete are
// refused.
type DeleteOptions struct {
	Agent bool
}

// KBRelationship is kb_query's relationship pattern: entities with (or,
// with missing, without) an edge of type in direction, optionally to or
// from the entity other.
type KBRelationship struct {
	Type      string `json:"type" jsonschema:"minLength=1"`
	Direction string `json:"direction,omitempty" jsonschema:"enum=out,enum=in,description=out: the entity is the edge's source (default); in: its target"`
	Missing   bool   `json:"missing,omitempty" jsonschema:"description=match entities WITHOUT such an edge"`
	Other     string `json:"other,omitempty" jsonschema:"description=the id at the edge's other end"`
}

// KBQueryParams is the parameter object of kb_query.
type KBQueryParams struct {
	ProjectID    string          `json:"projectId,omitempty" jsonschema:"description=optional: this knowledge base's project id (config projectId); any other value is refused"`
	Type         string          `json:"type,omitempty"`
	ID           string          `json:"id,omitempty"`
	Tags         []string        `json:"tags,omitempty" jsonschema:"description=entities carrying every one of these tags"`
	Status       string          `json:"status,omitempty"`
	Relationship *KBRelationship `json:"relationship,omitempty"`
	Limit        *int            `json:"limit,omitempty" jsonschema:"minimum=1,maximum=1000"`
	Offset       *int            `json:"offset,omitempty" jsonschema:"minimum=0"`
}

// KBCheckParams is the parameter object of kb_check.
type KBCheckParams struct {
	ProjectID string   `json:"projectId,omitempty" jsonschema:"description=optional: this knowledge base's project id (config projectId); any other value is refused"`
	Rules     []string `json:"rules,omitempty" jsonschema:"description=rules to run (default: all)"`
}

// JSONSchema describes an entity to delete: an id, or {id, version}.
func (KBEntityRef) JSONSchema() *jsonschema.Schema {
	props := jsonschema.NewProperties()
	props.Set("id", &jsonschema.Schema{Type: "string", MinLength: new(uint64(1)), Description: "The entity's id."})
	props.Set("version", &jsonschema.Schema{Type: "integer", Minimum: graph.JsonNumber(1),
		Description: "The version you last read; the delete fails with CONFLICT when the entity has changed since. Required for agents (the MCP tool)."})
	return &jsonschema.Schema{OneOf: []*jsonschema.Schema{
		{Type: "string", MinLength: new(uint64(1)), Description: "The entity's id."},
		{Type: "object", Properties: props, Required: []string{"id"}, AdditionalProperties: jsonschema.FalseSchema},
	}}
}
