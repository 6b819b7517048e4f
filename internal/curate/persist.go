package curate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
)

// Statuses of one action applied by Persist.
const (
	PersistWritten   = "written"   // the leaf was created or changed
	PersistUnchanged = "unchanged" // the leaf already had exactly this content
	PersistDropped   = "dropped"   // a drop action: nothing to write
	PersistFailed    = "failed"    // see Reason and Message
)

// Reasons Persist gives for a failed action.
const (
	ReasonContradict        = "contradict_not_persistable"
	ReasonNoProposedNode    = "missing_proposed_node"
	ReasonAddWithTarget     = "add_with_target"
	ReasonAddCollision      = "add_collision"
	ReasonHomeFolderInvalid = "home_folder_invalid"
	ReasonHomeFolderMissing = "home_folder_missing"
	ReasonModifyNoTarget    = "modify_without_target"
	ReasonModifyMissing     = "modify_missing_target"
	ReasonTypeMismatch      = "type_mismatch"
	ReasonInvalidNode       = "invalid_node"
	ReasonIO                = "io_error"
)

// Placements reported for written leaves, besides the folder name.
const (
	PlacementInPlace = "in place"      // a modify keeps the leaf where it is
	PlacementRoot    = "root fallback" // an add without a home folder
)

// PersistOptions control Persist.
type PersistOptions struct {
	Command string // recorded in the writer lock and the audit log
	Source  string // the face: "cli", "mcp", …
	// NoIndex leaves the generated index files alone.
	NoIndex bool
}

// PersistRow is the outcome of one action, in input order.
type PersistRow struct {
	Index           int    `json:"index"`
	Action          string `json:"action"`
	CandidateOrigin string `json:"candidate_origin"`
	Status          string `json:"status"`
	ID              string `json:"id,omitempty"`
	// Path is the leaf's path relative to nodes/.
	Path      string `json:"path,omitempty"`
	Placement string `json:"placement,omitempty"`
	Reason    string `json:"reason,omitempty"`
	Message   string `json:"message,omitempty"`
}

// PersistReport is what Persist did.
type PersistReport struct {
	Written   int          `json:"written"`
	Unchanged int          `json:"unchanged"`
	Dropped   int          `json:"dropped"`
	Failed    int          `json:"failed"`
	Results   []PersistRow `json:"results"`
	// IndexChanged lists the regenerated index files (repository-relative).
	IndexChanged []string `json:"index_changed"`
}

// plannedLeaf is the state a leaf will be written in, and the rows of the
// actions that produced it.
type plannedLeaf struct {
	n   *node.Node
	old *node.Node // the leaf of the tree it replaces; nil for a new leaf
	// handle is the leaf the transaction handed out for old, which n's
	// fields are copied into when it is staged.
	handle *node.Node
	rows   []int
	// replay marks an add over a leaf that already came from the same
	// candidate: it may only confirm that leaf, never change it.
	replay bool
}

// Persist applies curator actions (already checked against the
// curator-output schema) to the tree under one writer lock: add writes a
// new leaf in its home folder, modify rewrites the target leaf in place,
// drop writes nothing. Every action is tried; one that cannot be applied
// is reported as failed in its row and does not stop the others, and the
// leaves already written stay written. The index files are regenerated
// once at the end unless opts.NoIndex. The returned error is reserved for
// problems with the whole batch (an unreadable tree, a held lock).
//
// An add whose id is already taken fails with add_collision rather than
// being written under <id>-2 as kenkeep does: a taken id means the tree
// already has a node for that knowledge, and a numbered twin would split
// it in two without anyone noticing. The curator should modify the
// existing node instead. An add that was already applied (the leaf exists,
// came from the same candidate and has the same content) is reported as
// unchanged, so running the same batch twice is harmless.
func Persist(ctx context.Context, k *store.KB, actions []contracts.CuratorAction, opts PersistOptions) (*PersistReport, error) {
	var rep *PersistReport
	done, err := txn.Update(ctx, k, txn.Meta{Source: opts.Source, Command: opts.Command}, func(tx *txn.Tx) error {
		var err error
		rep, err = persist(tx, actions, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		rep.IndexChanged = done.Index.Changed
	}
	return rep, nil
}

func persist(tx *txn.Tx, actions []contracts.CuratorAction, opts PersistOptions) (*PersistReport, error) {
	t, err := tx.Tree()
	if err != nil {
		return nil, err
	}
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	dirs := make(map[string]bool, len(t.Dirs))
	for _, d := range t.Dirs {
		dirs[d] = true
	}
	paths := make(map[string]bool, len(t.Leaves))
	for _, n := range t.Leaves {
		paths[n.Path] = true
	}
	rows := make([]PersistRow, len(actions))
	planned := map[string]*plannedLeaf{}
	var order []string
	for i, a := range actions {
		rows[i] = PersistRow{Index: i, Action: a.Action, CandidateOrigin: a.CandidateOrigin}
		row := &rows[i]
		fail := func(reason, format string, args ...any) {
			row.Status, row.Reason, row.Message = PersistFailed, reason, fmt.Sprintf(format, args...)
		}
		p := a.ProposedNode
		target := ""
		if a.TargetNodeID != nil {
			target = strings.TrimSpace(*a.TargetNodeID)
		}
		switch {
		case a.Action == contracts.ActionDrop:
			row.Status = PersistDropped
		case a.Action == contracts.ActionContradict:
			fail(ReasonContradict, "contradict actions become conflict files through `kk curate-dedup`; they are never written as nodes")
		case p == nil:
			fail(ReasonNoProposedNode, "%s needs a proposed_node", a.Action)
		case a.Action == contracts.ActionAdd:
			if target != "" {
				fail(ReasonAddWithTarget, "add must have target_node_id null (got %q); to change %s, use modify", target, target)
				break
			}
			home := ""
			if a.HomeFolder != nil {
				home = strings.TrimSpace(*a.HomeFolder)
			}
			folder, err := node.TreeFolder(home)
			if err != nil {
				fail(ReasonHomeFolderInvalid, "home_folder: %v", err)
				break
			}
			if !dirs[folder] {
				fail(ReasonHomeFolderMissing, "home_folder %q is not an existing folder under nodes/", folder)
				break
			}
			id, err := node.DeriveID(p.Type, p.Title)
			if err != nil {
				fail(ReasonInvalidNode, "proposed_node.title %v", err)
				break
			}
			if msg := node.LongID(id); msg != "" {
				if _, ok := t.ByID(id); !ok {
					fail(ReasonInvalidNode, "proposed_node.title %s: give a shorter title", msg)
					break
				}
			}
			if _, ok := planned[id]; ok {
				fail(ReasonAddCollision, "an earlier action of this batch already writes %s", id)
				break
			}
			n := &node.Node{Format: node.SchemaVersion, Type: p.Type, ID: id, Path: joinLeaf(folder, id), DerivedFrom: []string{a.CandidateOrigin}}
			var old *node.Node
			if existing, ok := t.ByID(id); ok {
				if !slices.Contains(existing.DerivedFrom, a.CandidateOrigin) {
					fail(ReasonAddCollision, "%s already exists at nodes/%s; propose a modify of it instead of an add", id, existing.Path)
					break
				}
				// The leaf came from this very candidate: this is the batch
				// running again. Plan the add over it; if the batch leaves
				// the leaf as it is, the add was already applied.
				old, n.Path, folder = existing, existing.Path, existing.Dir()
			} else if paths[n.Path] {
				fail(ReasonAddCollision, "nodes/%s already exists and holds another id", n.Path)
				break
			}
			applyProposed(n, p)
			if err := checkLeaf(n, folder); err != nil {
				fail(ReasonInvalidNode, "%v", err)
				break
			}
			planned[id] = &plannedLeaf{n: n, old: old, replay: old != nil, rows: []int{i}}
			order = append(order, id)
			row.Status, row.ID, row.Path, row.Placement = PersistWritten, id, n.Path, placementOf(folder)
		case a.Action == contracts.ActionModify:
			if target == "" {
				fail(ReasonModifyNoTarget, "modify needs target_node_id: the id of the node to change")
				break
			}
			pl, ok := planned[target]
			if !ok {
				existing, inTree := t.ByID(target)
				if !inTree {
					fail(ReasonModifyMissing, "target node %s does not exist; `kk node list` shows the ids", target)
					break
				}
				full, err := tx.LeafAt(existing.Path)
				if err != nil || full == nil {
					fail(ReasonIO, "reading %s: %v", existing.Path, err)
					break
				}
				pl = &plannedLeaf{n: full, old: existing, handle: full}
			}
			if pl.n.Type != p.Type {
				fail(ReasonTypeMismatch, "%s is a %s and the proposed node a %s; a node never changes type", target, pl.n.Type, p.Type)
				break
			}
			n := *pl.n
			applyProposed(&n, p)
			n.DerivedFrom = node.Dedupe(append(slices.Clone(pl.n.DerivedFrom), a.CandidateOrigin))
			if err := checkLeaf(&n, n.Dir()); err != nil {
				fail(ReasonInvalidNode, "%v", err)
				break
			}
			if _, ok := planned[target]; !ok {
				planned[target] = pl
				order = append(order, target)
			}
			pl.n = &n
			pl.rows = append(pl.rows, i)
			row.Status, row.ID, row.Path, row.Placement = PersistWritten, target, n.Path, PlacementInPlace
		default:
			fail(ReasonInvalidNode, "unknown action %q", a.Action)
		}
	}

	for _, id := range order {
		pl := planned[id]
		status, reason, msg := stagePlanned(tx, pl)
		for _, r := range pl.rows {
			rows[r].Status = status
			if status == PersistFailed {
				rows[r].Reason, rows[r].Message = reason, msg
				rows[r].ID, rows[r].Path, rows[r].Placement = "", "", ""
			}
		}
	}
	rep := &PersistReport{Results: rows, IndexChanged: []string{}}
	for _, r := range rows {
		switch r.Status {
		case PersistWritten:
			rep.Written++
		case PersistUnchanged:
			rep.Unchanged++
		case PersistDropped:
			rep.Dropped++
		case PersistFailed:
			rep.Failed++
		}
	}
	if opts.NoIndex {
		tx.SkipIndexFiles()
	}
	return rep, nil
}

// stagePlanned renders one planned leaf and stages it in the transaction,
// unless its file already holds exactly those bytes. A leaf that cannot be
// rendered fails its rows only.
func stagePlanned(tx *txn.Tx, pl *plannedLeaf) (status, reason, msg string) {
	if err := pl.n.Validate(); err != nil {
		return PersistFailed, ReasonInvalidNode, err.Error()
	}
	if pl.replay {
		// The leaf the same candidate wrote before carries the version the
		// transaction gave it; the batch running again compares without it.
		if h, err := tx.LeafAt(pl.old.Path); err == nil && h != nil {
			if v, ok := h.Extra(txn.KeyVersion); ok {
				if err := pl.n.SetExtra(txn.KeyVersion, v); err != nil {
					return PersistFailed, ReasonInvalidNode, err.Error()
				}
			}
		}
	}
	data, err := pl.n.Render(tx.Resolve)
	if err != nil {
		return PersistFailed, ReasonInvalidNode, err.Error()
	}
	if len(data) > node.MaxSize {
		return PersistFailed, ReasonInvalidNode, fmt.Sprintf("nodes/%s would be %d bytes; the limit is %d", pl.n.Path, len(data), node.MaxSize)
	}
	if pl.old != nil {
		if cur, err := os.ReadFile(tx.KB().NodePath(pl.n.Path)); err == nil && bytes.Equal(cur, data) {
			return PersistUnchanged, "", ""
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return PersistFailed, ReasonIO, err.Error()
		}
	}
	if pl.replay {
		return PersistFailed, ReasonAddCollision, fmt.Sprintf("%s already exists at nodes/%s with other content; propose a modify of it instead of an add", pl.n.ID, pl.n.Path)
	}
	if pl.handle != nil {
		*pl.handle = *pl.n
		tx.Put(pl.handle)
	} else {
		tx.Put(pl.n)
	}
	return PersistWritten, "", ""
}

// applyProposed copies the proposed node's fields onto n.
func applyProposed(n *node.Node, p *contracts.ProposedNode) {
	n.Title, n.Description = strings.TrimSpace(p.Title), strings.TrimSpace(p.Description)
	n.Tags = node.List(slices.Clone(p.Tags))
	n.RelatesTo, n.DependsOn = node.Dedupe(p.RelatesTo), node.Dedupe(p.DependsOn)
	n.Confidence = p.Confidence
	n.Body = []byte(p.Body)
	if p.Phrasings != nil {
		n.Phrasings = slices.Clone(p.Phrasings)
	}
}

// checkLeaf applies the checks `kk node write` makes to a leaf's fields,
// the refusal of an edge to the leaf's own id included.
func checkLeaf(n *node.Node, folder string) error {
	in := contracts.NodeInput{Type: n.Type, Title: n.Title, Description: n.Description, Tags: n.Tags, RelatesTo: n.RelatesTo,
		DependsOn: n.DependsOn, DerivedFrom: n.DerivedFrom, Confidence: n.Confidence, Folder: folder, Body: string(n.Body), Phrasings: n.Phrasings}
	if err := validateInput(&in); err != nil {
		return err
	}
	if msg := node.BodyFrontMatter(in.Body); msg != "" {
		return fmt.Errorf("field %q: %s", "body", msg)
	}
	if err := checkNoSelfEdge(n.ID, n.RelatesTo, n.DependsOn); err != nil {
		return err
	}
	return n.Validate()
}

func placementOf(folder string) string {
	if folder == "" {
		return PlacementRoot
	}
	return folder
}

func joinLeaf(folder, id string) string {
	if folder == "" {
		return id + ".md"
	}
	return folder + "/" + id + ".md"
}
