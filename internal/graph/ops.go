package graph

import (
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/op"
)

// The graph operations are one function each, with a parameter type of
// their own: Get, Search and Context (query_graph), Create, Update and
// Delete (manage_graph), AppendChangelog and SearchChangelog
// (manage_changelog). The tools' parameter objects (QueryGraphParams,
// ManageGraphParams, ManageChangelogParams), which name the operation in
// a field, turn into these with their As… methods; choosing the operation
// is the MCP face's work, and each CLI command runs one.

// GetParams are the parameters of Get: one atom or molecule by id.
type GetParams struct {
	ProjectID  string
	EntityType string // atom or molecule
	ID         string
	// IncludeChangelog (default true) and ChangelogLimit (default
	// DefaultChangelogLimit) choose the changelog entries returned.
	IncludeChangelog *bool
	ChangelogLimit   *int
}

// SearchParams are the parameters of Search: atoms or molecules by text,
// molecule or orphans, a page at a time.
type SearchParams struct {
	ProjectID        string
	EntityType       string
	Query            string
	MoleculeID       string
	OrphansOnly      bool
	IncludeChangelog *bool
	ChangelogLimit   *int
	Limit            *int
	Offset           *int
}

// ContextParams are the parameters of Context: the atoms whose patterns
// match some files.
type ContextParams struct {
	ProjectID string
	Paths     []string
	// TaskFile is a task markdown file whose "Context Files" section adds
	// paths.
	TaskFile         string
	IncludeChangelog *bool
	ChangelogLimit   *int
}

// CreateParams are the parameters of Create. Name is required; an atom
// needs Paths.
type CreateParams struct {
	ProjectID        string
	EntityType       string
	Name             *string
	Paths            JSONArray[string]
	Knowledge        *string
	MoleculeID       NullableID
	RelatedAtoms     JSONArray[RelatedIn]
	RelatedMolecules JSONArray[RelatedIn]
	CreatedByTaskID  string
}

// UpdateParams are the parameters of Update: the fields that are set
// change, the others stay. Version is the version last read (required).
type UpdateParams struct {
	ProjectID        string
	EntityType       string
	ID               string
	Version          int64
	Name             *string
	Paths            JSONArray[string]
	Knowledge        *string
	KnowledgeMode    string // overwrite (default) or append
	MoleculeID       NullableID
	RelatedAtoms     JSONArray[RelatedIn]
	RelatedMolecules JSONArray[RelatedIn]
	LastTaskID       string
}

// DeleteParams are the parameters of Delete. Version is the version last
// read (required); Cascade deletes a molecule's atoms too.
type DeleteParams struct {
	ProjectID  string
	EntityType string
	ID         string
	Version    int64
	LastTaskID string
	Cascade    bool
}

// AppendChangelogParams are the parameters of AppendChangelog.
type AppendChangelogParams struct {
	ProjectID  string
	ParentType string
	ParentID   string
	TaskID     string
	Summary    string
}

// SearchChangelogParams are the parameters of SearchChangelog.
type SearchChangelogParams struct {
	ProjectID  string
	ParentType string
	ParentID   string
	Limit      *int
	Offset     *int
}

// EntityView is an atom or a molecule as Get, Create and Update return
// it: an AtomView or a MoleculeView.
type EntityView interface{ entityView() }

func (AtomView) entityView()     {}
func (MoleculeView) entityView() {}

// field is a field of a parameter object: its JSON name, and whether the
// caller gave it.
type field struct {
	name string
	set  bool
}

// given lists the fields of a query_graph parameter object, in the order
// of the schema, with whether the caller gave each.
func (p QueryGraphParams) given() []field {
	return []field{
		{"entityType", p.EntityType != ""}, {"id", p.ID != ""}, {"projectId", p.ProjectID != ""},
		{"paths", p.Paths != nil}, {"taskFile", p.TaskFile != ""}, {"query", p.Query != ""},
		{"moleculeId", p.MoleculeID != ""}, {"orphansOnly", p.OrphansOnly},
		{"includeChangelog", p.IncludeChangelog != nil}, {"changelogLimit", p.ChangelogLimit != nil},
		{"limit", p.Limit != nil}, {"offset", p.Offset != nil},
	}
}

// given lists the fields of a manage_graph parameter object.
func (p ManageGraphParams) given() []field {
	return []field{
		{"entityType", p.EntityType != ""}, {"id", p.ID != ""}, {"version", p.Version != nil}, {"projectId", p.ProjectID != ""},
		{"name", p.Name != nil}, {"paths", p.Paths.Set}, {"knowledge", p.Knowledge != nil}, {"knowledgeMode", p.KnowledgeMode != ""},
		{"moleculeId", p.MoleculeID.Set}, {"relatedAtoms", p.RelatedAtoms.Set}, {"relatedMolecules", p.RelatedMolecules.Set},
		{"createdByTaskId", p.CreatedByTaskID != ""}, {"lastTaskId", p.LastTaskID != ""}, {"cascade", p.Cascade},
	}
}

// The fields each operation takes (besides operation).
var (
	getFields     = []string{"entityType", "id", "projectId", "includeChangelog", "changelogLimit"}
	searchFields  = []string{"entityType", "query", "moleculeId", "orphansOnly", "projectId", "includeChangelog", "changelogLimit", "limit", "offset"}
	contextFields = []string{"paths", "taskFile", "projectId", "includeChangelog", "changelogLimit"}
	createFields  = []string{"entityType", "projectId", "name", "paths", "knowledge", "knowledgeMode", "moleculeId", "relatedAtoms", "relatedMolecules", "createdByTaskId"}
	updateFields  = []string{"entityType", "id", "version", "projectId", "name", "paths", "knowledge", "knowledgeMode", "moleculeId", "relatedAtoms", "relatedMolecules", "lastTaskId"}
	deleteFields  = []string{"entityType", "id", "version", "projectId", "lastTaskId", "cascade"}
)

// only refuses the first of the fields given that the operation does not
// take, naming it, the operation and the fields it takes: a field of
// another operation, ignored, would let the caller believe it was applied.
func only(operation string, given []field, takes []string) error {
	for _, f := range given {
		if f.set && !slices.Contains(takes, f.name) {
			return op.Invalid(f.name, "the %s operation does not take it; %s takes %s", operation, operation, strings.Join(takes, ", "))
		}
	}
	return nil
}

// AsGet is the get operation's part of a query_graph parameter object;
// the fields of search and context are refused.
func (p QueryGraphParams) AsGet() (GetParams, error) {
	if err := only("get", p.given(), getFields); err != nil {
		return GetParams{}, err
	}
	return GetParams{ProjectID: p.ProjectID, EntityType: p.EntityType, ID: p.ID, IncludeChangelog: p.IncludeChangelog, ChangelogLimit: p.ChangelogLimit}, nil
}

// AsSearch is the search operation's part of a query_graph parameter
// object; the fields of get and context are refused.
func (p QueryGraphParams) AsSearch() (SearchParams, error) {
	if err := only("search", p.given(), searchFields); err != nil {
		return SearchParams{}, err
	}
	return SearchParams{ProjectID: p.ProjectID, EntityType: p.EntityType, Query: p.Query, MoleculeID: p.MoleculeID, OrphansOnly: p.OrphansOnly,
		IncludeChangelog: p.IncludeChangelog, ChangelogLimit: p.ChangelogLimit, Limit: p.Limit, Offset: p.Offset}, nil
}

// AsContext is the context operation's part of a query_graph parameter
// object; the fields of get and search are refused.
func (p QueryGraphParams) AsContext() (ContextParams, error) {
	if err := only("context", p.given(), contextFields); err != nil {
		return ContextParams{}, err
	}
	return ContextParams{ProjectID: p.ProjectID, Paths: p.Paths, TaskFile: p.TaskFile, IncludeChangelog: p.IncludeChangelog, ChangelogLimit: p.ChangelogLimit}, nil
}

// AsCreate is the create operation's part of a manage_graph parameter
// object; fields that only update or delete take are refused.
func (p ManageGraphParams) AsCreate() (CreateParams, error) {
	switch {
	case p.ID != "":
		return CreateParams{}, op.Invalid("id", "is chosen by kk on create (from the name); leave it out")
	case p.Version != nil:
		return CreateParams{}, op.Invalid("version", "a new entity starts at version 1; leave it out on create")
	case p.Cascade:
		return CreateParams{}, op.Invalid("cascade", "applies to delete only")
	case p.KnowledgeMode == ModeAppend:
		return CreateParams{}, op.Invalid("knowledgeMode", "append applies to update; a new entity's knowledge is written as given")
	case p.KnowledgeMode != "" && p.KnowledgeMode != ModeOverwrite:
		return CreateParams{}, op.Invalid("knowledgeMode", "%q is not overwrite or append", p.KnowledgeMode)
	}
	if err := only("create", p.given(), createFields); err != nil {
		return CreateParams{}, err
	}
	return CreateParams{ProjectID: p.ProjectID, EntityType: p.EntityType, Name: p.Name, Paths: p.Paths, Knowledge: p.Knowledge, MoleculeID: p.MoleculeID,
		RelatedAtoms: p.RelatedAtoms, RelatedMolecules: p.RelatedMolecules, CreatedByTaskID: p.CreatedByTaskID}, nil
}

// AsUpdate is the update operation's part of a manage_graph parameter
// object; fields that only create or delete take are refused.
func (p ManageGraphParams) AsUpdate() (UpdateParams, error) {
	switch {
	case p.CreatedByTaskID != "":
		return UpdateParams{}, op.Invalid("createdByTaskId", "is set on create only")
	case p.Cascade:
		return UpdateParams{}, op.Invalid("cascade", "applies to delete only")
	}
	if err := only("update", p.given(), updateFields); err != nil {
		return UpdateParams{}, err
	}
	return UpdateParams{ProjectID: p.ProjectID, EntityType: p.EntityType, ID: p.ID, Version: version(p.Version), Name: p.Name, Paths: p.Paths,
		Knowledge: p.Knowledge, KnowledgeMode: p.KnowledgeMode, MoleculeID: p.MoleculeID, RelatedAtoms: p.RelatedAtoms,
		RelatedMolecules: p.RelatedMolecules, LastTaskID: p.LastTaskID}, nil
}

// AsDelete is the delete operation's part of a manage_graph parameter
// object; the fields of create and update are refused.
func (p ManageGraphParams) AsDelete() (DeleteParams, error) {
	if err := only("delete", p.given(), deleteFields); err != nil {
		return DeleteParams{}, err
	}
	return DeleteParams{ProjectID: p.ProjectID, EntityType: p.EntityType, ID: p.ID, Version: version(p.Version), LastTaskID: p.LastTaskID, Cascade: p.Cascade}, nil
}

// version is a version parameter, 0 when absent (versions start at 1).
func version(v *int64) int64 {
	if v == nil {
		return 0
	}
	return *v
}

// AsAppend is the append operation's part of a manage_changelog parameter
// object; limit and offset, which only search takes, are refused.
func (p ManageChangelogParams) AsAppend() (AppendChangelogParams, error) {
	if p.Limit != nil || p.Offset != nil {
		return AppendChangelogParams{}, op.Invalid("limit", "limit and offset apply to search")
	}
	return AppendChangelogParams{ProjectID: p.ProjectID, ParentType: p.ParentType, ParentID: p.ParentID, TaskID: p.TaskID, Summary: p.Summary}, nil
}

// AsSearch is the search operation's part of a manage_changelog parameter
// object; taskId and summary, which only append takes, are refused.
func (p ManageChangelogParams) AsSearch() (SearchChangelogParams, error) {
	if p.TaskID != "" || p.Summary != "" {
		return SearchChangelogParams{}, op.Invalid("summary", "taskId and summary apply to append")
	}
	return SearchChangelogParams{ProjectID: p.ProjectID, ParentType: p.ParentType, ParentID: p.ParentID, Limit: p.Limit, Offset: p.Offset}, nil
}
