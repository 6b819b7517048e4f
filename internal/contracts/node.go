package contracts

// NodeInput is a whole leaf to write. It is the JSON that
// `kk node write --input` takes.
type NodeInput struct {
	Type        string   `json:"type" jsonschema:"minLength=1,description=Kind of node: practice (how we build) or map (what exists); other lowercase types are accepted."`
	Slug        string   `json:"slug,omitempty" jsonschema:"description=Slug or title the id is derived from (<type>-<slug>); defaults to the title."`
	Title       string   `json:"title" jsonschema:"minLength=1,maxLength=255,description=Display name\\, one line of at most 255 characters."`
	Description string   `json:"description" jsonschema:"maxLength=140,description=One-line summary of at most 140 characters (put the rest in the body)."`
	Tags        []string `json:"tags,omitempty"`
	RelatesTo   []string `json:"relates_to,omitempty" jsonschema:"description=Ids of loosely related nodes."`
	DependsOn   []string `json:"depends_on,omitempty" jsonschema:"description=Ids of nodes this one depends on."`
	DerivedFrom []string `json:"derived_from,omitempty" jsonschema:"description=Provenance: document paths\\, URLs\\, session ids."`
	Confidence  string   `json:"confidence,omitempty" jsonschema:"enum=low,enum=medium,enum=high,description=Defaults to high."`
	Folder      string   `json:"folder,omitempty" jsonschema:"description=Folder under nodes/ (created when missing)\\, as go/http or with the prefix nodes/ or .ai/kenkeep/nodes/; default the root\\, or the existing leaf's folder on update."`
	Status      string   `json:"status,omitempty" jsonschema:"enum=draft,enum=stable,enum=deprecated"`
	StaleAfter  string   `json:"stale_after,omitempty" jsonschema:"description=Date after which the node should be reviewed (YYYY-MM-DD)."`
	Body        string   `json:"body" jsonschema:"description=Markdown body."`
	Phrasings   []string `json:"phrasings,omitempty" jsonschema:"description=How a developer would ask for this node in their own words: questions or symptoms\\, one line each (kk_phrasings; search indexes them). Replaced on update when given."`
	SourceDoc   string   `json:"source_doc,omitempty" jsonschema:"description=Repository-relative document this node was bootstrapped from (with source_hash)."`
	SourceHash  string   `json:"source_hash,omitempty" jsonschema:"description=SHA-256 of source_doc's content (with source_doc)."`
}
