package reorg

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
	"github.com/kk-project/kk/internal/txn"
)

// RenameOptions are the choices of RenameNote.
type RenameOptions struct {
	// Command is the command line recorded in the lock and the audit log.
	Command string
}

// RenameResult is what RenameNote did.
type RenameResult struct {
	ID      string `json:"id"`       // the old id
	NewID   string `json:"new_id"`   // the id the leaf has now
	Path    string `json:"path"`     // the leaf's file before, relative to nodes/
	NewPath string `json:"new_path"` // and now
	Version int64  `json:"version"`  // the leaf's kk_version now
	// Edges are the other leaves' edges to the old id, pointed at the
	// new one (or dropped, with Why, when the list names it already).
	Edges []EdgeChange `json:"edges"`
	// Links are the links typed in other leaves' bodies to the old file,
	// pointed at the new one in the form they had.
	Links []TypedLink `json:"links"`
	// Redirects are the retired ids whose entries in nodes/.redirects.json
	// led to the old id and lead to the new one now (the old id itself is
	// retired to the new one, and not listed).
	Redirects []string `json:"redirects"`
}

// RenameRefusal is a rename RenameNote will not make; nothing is written.
type RenameRefusal struct {
	// NewID: the refusal is of the new id, not of the note to rename.
	NewID  bool
	Arg    string // the argument as given
	Reason string
}

func (e *RenameRefusal) Error() string {
	if e.NewID {
		return "the new id " + e.Arg + ": " + e.Reason
	}
	return e.Arg + ": " + e.Reason
}

// RenameNote gives the note id (a practice, a map or another type kk node
// write writes; ids are matched without regard to case) the id newID, in
// one transaction: the leaf gets kk_id newID and a new version, and its
// file is renamed <newID>.md in the same folder (kk's identity contract
// names a leaf's file for its id); every other leaf's kk_relates_to,
// kk_depends_on and kk_edges name newID instead, the links typed in their
// bodies to the old file lead to the new one, the old id is retired to
// newID in nodes/.redirects.json, and the ledger's entries that led to the
// old id lead to newID. The edges, links and ledger are kk node delete
// --redirect-to newID's (deleteNotes, told the note stays), so that the
// two keep one account of them; the leaf itself moves, so the audit log
// records one update and its version goes on. A leaf whose file is named
// for newID already (renamed with git mv) changes in place, and one whose
// kk_id was changed by hand in the file named for id is taken as it is.
//
// An id that is no live leaf, a traceability entity, an atom or a
// molecule, and a newID that is no valid id for the note's type (kk node
// write's rule, CheckNaming), that a leaf holds or that the ledger
// retired, are a *RenameRefusal, and nothing is written.
func RenameNote(ctx context.Context, k *store.KB, id, newID string, o RenameOptions) (*RenameResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	res := &RenameResult{}
	del := &DeleteResult{Deleted: []DeletedNote{}, Edges: []EdgeChange{}, Links: []TypedLink{}}
	_, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: o.Command}, func(tx *txn.Tx) error {
		return renameNote(tx, id, newID, o, res, del)
	})
	if r, ok := errors.AsType[*DeleteRefusal](err); ok {
		// deleteNotes's refusals of the old leaf (another leaf's kk_related
		// naming it) are refusals of <id>.
		return nil, &RenameRefusal{Arg: id, Reason: r.Reason}
	}
	if err != nil {
		return nil, err
	}
	// The lines of the links are those of the files as written
	// (deleteNotes fills them in after the commit).
	res.Edges, res.Links = del.Edges, del.Links
	return res, nil
}

func renameNote(tx *txn.Tx, id, newID string, o RenameOptions, res *RenameResult, del *DeleteResult) error {
	k := tx.KB()
	t, ledger, err := treeAndLedger(tx)
	if err != nil {
		return err
	}
	live := func(id string) bool { _, ok := t.ByID(id); return ok }
	ledgerFile := k.Rel(k.RedirectsPath())
	// retired returns the ledger's key for id, when the ledger retired it.
	retired := func(id string) (string, bool) {
		for old := range ledger {
			if store.IDKey(old) == store.IDKey(id) {
				return old, true
			}
		}
		return "", false
	}

	refuse := func(reason string) error { return &RenameRefusal{Arg: id, Reason: reason} }
	if strings.TrimSpace(id) == "" {
		return refuse("is empty: give the id of a note")
	}
	n, ok := t.ByID(id)
	// byHand: the person changed kk_id in the file named for id and left
	// the rest (its file name, the edges and links to it) to kk: the
	// rename is finished from the leaf as the file holds it.
	byHand := false
	if !ok {
		if h, held := t.ByID(newID); held && path.Base(h.Path) == id+".md" && !live(id) {
			if _, gone := retired(id); !gone {
				n, ok, byHand = h, true, true
			}
		}
	}
	if !ok {
		if err := graph.UnreadableInTree("node", id, t); err != nil {
			return err
		}
		if old, ok := retired(id); ok {
			to := store.ResolveRedirect(ledger, old, live)
			if len(to) == 0 {
				return refuse(fmt.Sprintf("was retired (%s), and no leaf it was retired to is left", ledgerFile))
			}
			return refuse(fmt.Sprintf("was retired to %s (%s); rename %s instead", strings.Join(to, ", "), ledgerFile, to[0]))
		}
		// A file removed by hand (rm, git rm) is not there to rename.
		if n, file, _, err := tx.DeletedByHand(id); err != nil {
			return err
		} else if n != nil {
			return refuse(fmt.Sprintf("its leaf %s is deleted in the work tree; restore it with `git checkout HEAD -- %s` to rename it, or delete the note with kk node delete %s", file, file, id))
		}
		return refuse("no leaf has this id")
	}
	full, err := tx.LeafAt(n.Path)
	if err != nil {
		return err
	}
	if full == nil {
		return refuse("no leaf has this id")
	}
	switch {
	case slices.Contains(trace.TraceTypes, full.Type):
		return refuse(fmt.Sprintf("is a %s, a traceability entity: kk upsert and kk delete keep them; kk node rename renames notes", full.Type))
	case graph.IsMolecule(full):
		return refuse("is a molecule of the knowledge graph: kk graph create, update and delete keep them; kk node rename renames notes")
	case graph.IsAtom(full):
		return refuse("is an atom of the knowledge graph (it has kk_paths): kk graph create, update and delete keep them; kk node rename renames notes")
	}

	refuseNew := func(reason string) error { return &RenameRefusal{NewID: true, Arg: newID, Reason: reason} }
	if strings.TrimSpace(newID) == "" {
		return refuseNew("is empty: give the id the note is to have")
	}
	if byHand {
		// The leaf as it was before the hand edit: deleteNotes retires
		// that id to the new one and points the edges naming it there.
		full.ID = id
	} else if store.IDKey(newID) == store.IDKey(full.ID) {
		return refuseNew("is the id " + full.ID + " has already (ids are compared without regard to case)")
	}
	if other, ok := t.ByID(newID); ok && !byHand {
		return refuseNew(fmt.Sprintf("is the id of %s; choose another id", k.Rel(k.NodePath(other.Path))))
	}
	if err := graph.UnreadableInTree("node", newID, t); err != nil {
		return err
	}
	if old, ok := retired(newID); ok {
		return refuseNew(fmt.Sprintf("was retired to %s (%s); a retired id is not given again, choose another id", strings.Join(ledger[old], ", "), ledgerFile))
	}

	if msg := node.CheckNaming(full.Type, newID, newID+".md"); msg != "" {
		return refuseNew(fmt.Sprintf("is no id for a %s: %s", full.Type, msg))
	}

	newPath := path.Join(path.Dir(full.Path), newID+".md")
	v, err := tx.Version(full)
	if err != nil {
		return err
	}
	if byHand {
		tx.Put(full) // under the id it had: deleteNotes finds it by that id
	}
	// deleteNotes points the edges, the typed links and the ledger's
	// entries that led to the old id at the new one, and retires the old
	// id to it; the leaf itself stays, and is staged below under its new
	// id and path (a move, so the audit log records one update and the
	// version goes on).
	if err := deleteNotes(tx, []string{full.ID}, DeleteOptions{RedirectTo: newID, Command: o.Command,
		renamed: &node.Node{ID: newID, Type: full.Type, Path: newPath}}, del); err != nil {
		return err
	}
	oldID, oldPath := full.ID, full.Path
	full.ID, full.Path = newID, newPath
	// Links the leaf's own body types to its file lead to the new one.
	full.Body, _ = store.RetargetTypedLinks(full.Body, oldPath, newPath, func(p string) (string, bool) {
		return newPath, p == oldPath
	})
	tx.Put(full)

	res.Redirects = []string{}
	for _, c := range del.Redirects {
		if !slices.Contains(res.Redirects, c.ID) {
			res.Redirects = append(res.Redirects, c.ID)
		}
	}
	slices.Sort(res.Redirects)

	res.ID, res.NewID = oldID, newID
	res.Path, res.NewPath = oldPath, newPath
	res.Version = v + 1
	return nil
}
