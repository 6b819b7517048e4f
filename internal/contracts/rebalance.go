package contracts

import "github.com/invopop/jsonschema"

// The four structural changes of a rebalance, as `kk rebalance trigger`
// names them and as a rebalance plan carries them out.
const (
	OpSplitFolder  = "split-folder"
	OpMerge        = "merge"
	OpCreateBranch = "create-branch"
	OpSplitLeaf    = "split-leaf"
)

// RebalanceOperations lists the operations in the order the schema shows them.
var RebalanceOperations = []string{OpSplitFolder, OpMerge, OpCreateBranch, OpSplitLeaf}

// RebalanceAction is one structural change `kk rebalance trigger` proposes.
// Branch is a folder relative to nodes/ for split-folder and merge ("" is
// the root), and a leaf's path relative to nodes/ for split-leaf and
// create-branch. A create-branch that groups several homeless root leaves
// by a shared tag lists them all in Branches (Branch is the first) and
// names the tag in Topic.
type RebalanceAction struct {
	Branch    string   `json:"branch"`
	Operation string   `json:"operation"`
	Branches  []string `json:"branches,omitempty"`
	Topic     string   `json:"topic,omitempty"`
}

// RebalanceActions is what `kk rebalance trigger` prints.
type RebalanceActions struct {
	Actions []RebalanceAction `json:"actions"`
}

// RebalancePlan is the document `kk rebalance move` applies: operations run
// in order, each against the tree the ones before it leave.
type RebalancePlan struct {
	Operations []RebalanceOperation `json:"operations" jsonschema:"description=Operations applied in order; each sees the tree the earlier ones leave."`
}

// RebalanceOperation is one operation of a plan. Which fields it uses
// depends on Operation:
//
//   - split-folder: Branch, Groups. Each group's leaves (direct leaves of
//     Branch) move into Branch/<subfolder>, whose summary is recorded.
//   - merge: Branch, Into. Every direct leaf of Branch moves into the
//     existing folder Into ("" is the root).
//   - create-branch: Folder, Summary, IDs. The leaves move into Folder,
//     whose summary is recorded.
//   - split-leaf: LeafID, Folder, Summary, Children. The leaf is replaced by
//     two or more new leaves in Folder; its id is retired and redirected to
//     theirs.
type RebalanceOperation struct {
	Operation string           `json:"operation"`
	Branch    string           `json:"branch,omitempty"`
	Groups    []RebalanceGroup `json:"groups,omitempty"`
	Into      string           `json:"into,omitempty"`
	Folder    string           `json:"folder,omitempty"`
	Summary   string           `json:"summary,omitempty"`
	IDs       []string         `json:"ids,omitempty"`
	LeafID    string           `json:"leafId,omitempty"`
	Children  []SplitLeafChild `json:"children,omitempty"`
}

// RebalanceGroup is one new subfolder of a split-folder operation.
type RebalanceGroup struct {
	Subfolder string   `json:"subfolder" jsonschema:"minLength=1,description=Name of the new subfolder\\, relative to the branch being split."`
	Summary   string   `json:"summary" jsonschema:"description=One-line summary of the subfolder for FOLDER_SUMMARIES.md (blank: leave the summary as it is)."`
	IDs       []string `json:"ids" jsonschema:"minItems=1,description=Ids of the branch's direct leaves that move into the subfolder."`
}

// SplitLeafChild is one of the new leaves a split-leaf operation writes.
// The child gets the retired leaf's type and confidence, the retired id as
// its provenance, and an id minted from its title.
type SplitLeafChild struct {
	Title     string   `json:"title" jsonschema:"minLength=1,pattern=\\S,description=Title of the new leaf; its id is <type>-<slug of the title>."`
	Summary   string   `json:"summary" jsonschema:"description=One-line description of the new leaf."`
	Body      string   `json:"body" jsonschema:"description=Markdown body of the new leaf."`
	Tags      []string `json:"tags,omitempty" jsonschema:"description=Tags of the new leaf."`
	RelatesTo []string `json:"relates_to,omitempty" jsonschema:"description=Ids the new leaf relates to (not the retired id itself)."`
}

// The shapes of each operation, used only to generate the plan's schema.
type splitFolderOperation struct {
	Operation string           `json:"operation"`
	Branch    string           `json:"branch" jsonschema:"minLength=1,description=Folder under nodes/ whose direct leaves are split into subfolders."`
	Groups    []RebalanceGroup `json:"groups" jsonschema:"minItems=1,description=The new subfolders and the leaves each receives."`
}

type mergeOperation struct {
	Operation string `json:"operation"`
	Branch    string `json:"branch" jsonschema:"minLength=1,description=Folder under nodes/ whose direct leaves move out."`
	Into      string `json:"into" jsonschema:"description=Existing folder that receives them; \"\" is the nodes/ root."`
}

type createBranchOperation struct {
	Operation string   `json:"operation"`
	Folder    string   `json:"folder" jsonschema:"minLength=1,description=Folder under nodes/ that receives the leaves (created when missing)."`
	Summary   string   `json:"summary" jsonschema:"description=One-line summary of the folder for FOLDER_SUMMARIES.md (blank: leave the summary as it is)."`
	IDs       []string `json:"ids" jsonschema:"minItems=1,description=Ids of the leaves to move."`
}

type splitLeafOperation struct {
	Operation string           `json:"operation"`
	LeafID    string           `json:"leafId" jsonschema:"minLength=1,description=Id of the leaf to split; it is retired and redirected to the new leaves."`
	Folder    string           `json:"folder" jsonschema:"minLength=1,description=Folder under nodes/ for the new leaves (\".\" is the root)."`
	Summary   string           `json:"summary" jsonschema:"description=One-line summary of the folder for FOLDER_SUMMARIES.md (blank: leave the summary as it is)."`
	Children  []SplitLeafChild `json:"children" jsonschema:"minItems=2,description=The new leaves; at least two."`
}

// JSONSchema describes an operation as an object whose "operation" picks
// which of four closed shapes the rest must have. Each shape sits behind an
// if/then on the operation name, so a failing document is reported against
// the shape it names rather than against all four.
func (RebalanceOperation) JSONSchema() *jsonschema.Schema {
	r := &jsonschema.Reflector{ExpandedStruct: true, DoNotReference: true, Anonymous: true}
	ops := make([]any, len(RebalanceOperations))
	for i, op := range RebalanceOperations {
		ops[i] = op
	}
	props := jsonschema.NewProperties()
	props.Set("operation", &jsonschema.Schema{Type: "string", Enum: ops, Description: "Which structural change this is."})
	s := &jsonschema.Schema{
		Type:        "object",
		Description: "One rebalance operation; \"operation\" decides which other properties it takes.",
		Required:    []string{"operation"},
		Properties:  props,
	}
	for _, v := range []struct {
		op    string
		shape any
	}{
		{OpSplitFolder, splitFolderOperation{}},
		{OpMerge, mergeOperation{}},
		{OpCreateBranch, createBranchOperation{}},
		{OpSplitLeaf, splitLeafOperation{}},
	} {
		then := r.Reflect(v.shape)
		then.Version = ""
		if p, ok := then.Properties.Get("operation"); ok {
			p.Const = v.op
		}
		cond := jsonschema.NewProperties()
		cond.Set("operation", &jsonschema.Schema{Const: v.op})
		s.AllOf = append(s.AllOf, &jsonschema.Schema{
			If:   &jsonschema.Schema{Required: []string{"operation"}, Properties: cond},
			Then: then,
		})
	}
	return s
}

// PlaceLeaf is one leaf of a kenkeep v1 (flat) tree as `kk place inventory`
// lists it for the clustering step. SourcePath is relative to the
// repository root.
type PlaceLeaf struct {
	ID         string   `json:"id"`
	Title      string   `json:"title"`
	Kind       string   `json:"kind"`
	Tags       []string `json:"tags"`
	Summary    string   `json:"summary"`
	RelatesTo  []string `json:"relates_to"`
	SourcePath string   `json:"sourcePath"`
}

// PlaceInventory is what `kk place inventory` prints.
type PlaceInventory struct {
	Leaves []PlaceLeaf `json:"leaves"`
}

// PlacePlan is the document `kk place apply` carries out: a topical folder
// for every leaf of a v1 tree, and summaries for the folders it creates.
type PlacePlan struct {
	Placements []Placement     `json:"placements" jsonschema:"description=Where each leaf goes; every leaf of the inventory exactly once."`
	Folders    []FolderSummary `json:"folders,omitempty" jsonschema:"description=One-line summaries of the folders the placements create (or their ancestors)."`
}

// Placement puts one leaf into a folder.
type Placement struct {
	ID           string `json:"id" jsonschema:"minLength=1,description=Id of a leaf from the inventory."`
	TargetFolder string `json:"targetFolder" jsonschema:"description=Folder under nodes/ the leaf moves into; \"\" is the root."`
}

// FolderSummary is the summary of one folder.
type FolderSummary struct {
	Folder  string `json:"folder" jsonschema:"description=Folder under nodes/; \"\" is the root."`
	Summary string `json:"summary" jsonschema:"minLength=1,pattern=\\S,description=One-line summary for FOLDER_SUMMARIES.md."`
}
