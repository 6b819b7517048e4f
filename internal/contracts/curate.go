package contracts

import "github.com/invopop/jsonschema"

// Candidate is one piece of knowledge an extraction pass proposes from a
// session: a practice (how the project builds things) or a map entry (what
// exists and where). Candidates carry no id; the curator decides whether
// each one becomes a new node, changes an existing one, or is dropped.
type Candidate struct {
	Type        string   `json:"type" jsonschema:"enum=practice,enum=map,description=practice (how we build) or map (what exists)."`
	Tags        []string `json:"tags" jsonschema:"description=Free-form tags."`
	Title       string   `json:"title" jsonschema:"minLength=1,description=Display name of the proposed node."`
	Description string   `json:"description" jsonschema:"description=One-line summary."`
	Body        string   `json:"body" jsonschema:"description=Markdown body of the proposed node."`
	Confidence  string   `json:"kk_confidence" jsonschema:"enum=low,enum=medium,enum=high,description=How sure the extractor is."`
}

// ProposalOutput is what an extraction pass returns for one session (the
// proposal-output contract): the candidates it found, split by type. It is
// stored under "proposals" in the session log's front matter.
type ProposalOutput struct {
	Practice []Candidate `json:"practice" jsonschema:"description=Practice candidates (conventions\\, prohibitions\\, gotchas\\, tooling)."`
	Map      []Candidate `json:"map" jsonschema:"description=Map candidates (features\\, modules\\, vocabulary\\, locations)."`
}

// JSONSchemaExtend leaves the outer object open, as kenkeep's extractor
// contract does: keys other than practice and map are ignored, while each
// candidate stays closed.
func (ProposalOutput) JSONSchemaExtend(s *jsonschema.Schema) {
	s.AdditionalProperties = jsonschema.TrueSchema
}

// ProposedNode is the node a curator action would write (the
// proposed-node contract). It has no id and no provenance: curate-persist
// derives the id from type and title and records the action's
// candidate_origin as the node's kk_derived_from.
type ProposedNode struct {
	Title       string   `json:"title" jsonschema:"minLength=1,description=Display name; the id of a new node is derived from it."`
	Type        string   `json:"type" jsonschema:"enum=practice,enum=map,description=practice or map; a node never changes type."`
	Tags        []string `json:"tags" jsonschema:"description=Free-form tags."`
	Description string   `json:"description" jsonschema:"description=One-line summary."`
	Body        string   `json:"body" jsonschema:"description=Markdown body."`
	Confidence  string   `json:"kk_confidence" jsonschema:"enum=low,enum=medium,enum=high,description=How sure the curator is."`
	RelatesTo   []string `json:"kk_relates_to" jsonschema:"description=Ids of loosely related nodes."`
	// DependsOn may be left out of the input (it means none); kk always
	// writes it back, as [] when empty.
	DependsOn []string `json:"kk_depends_on" jsonschema:"description=Ids of nodes this one depends on; absent means none."`
	// Phrasings may be left out; on an update, leaving them out keeps the
	// node's own.
	Phrasings []string `json:"kk_phrasings,omitempty" jsonschema:"description=How a developer would ask for this node in their own words: questions or symptoms\\, one line each; search indexes them."`
}

// JSONSchemaExtend makes kk_depends_on optional, defaulting to [].
func (ProposedNode) JSONSchemaExtend(s *jsonschema.Schema) {
	required := s.Required[:0]
	for _, r := range s.Required {
		if r != "kk_depends_on" {
			required = append(required, r)
		}
	}
	s.Required = required
	if p, ok := s.Properties.Get("kk_depends_on"); ok {
		p.Default = []string{}
	}
}

// Curator action kinds.
const (
	ActionAdd        = "add"
	ActionModify     = "modify"
	ActionContradict = "contradict"
	ActionDrop       = "drop"
)

// CuratorAction is the curator's decision about one candidate.
type CuratorAction struct {
	Action          string        `json:"action" jsonschema:"enum=add,enum=modify,enum=contradict,enum=drop,description=add a new node\\, modify target_node_id\\, record a contradiction of target_node_id for a human\\, or drop the candidate."`
	CandidateOrigin string        `json:"candidate_origin" jsonschema:"minLength=1,description=Where the candidate came from: <session_id>:<practice|map>:<index> for a session candidate\\, else a document path or URL."`
	TargetNodeID    *string       `json:"target_node_id" jsonschema:"nullable,description=Id of the existing node a modify or contradict is about; null for add and drop."`
	ProposedNode    *ProposedNode `json:"proposed_node" jsonschema:"nullable,description=The node to write (add\\, modify) or the contradicting version (contradict); null for drop."`
	Rationale       string        `json:"rationale" jsonschema:"description=Why the curator chose this action."`
	HomeFolder      *string       `json:"home_folder,omitempty" jsonschema:"nullable,description=For add: an existing folder under nodes/ to place the node in; null or empty means the nodes/ root."`
}

// CuratorOutput is the curator's plan for a batch of candidates (the
// curator-output contract).
type CuratorOutput []CuratorAction

// DraftBatch is one sub-agent's draft of curator actions, written to
// .ai/kenkeep/_logs/curator/<runId>__<n>.draft.json when curation fans out
// (the drafts contract). `kk drafts collect` validates each batch and
// concatenates the valid ones into one curator-output document.
type DraftBatch []CuratorAction
