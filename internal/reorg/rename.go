package reorg

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
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
	// CaseOnly: the new id is the old one in another case (the same id,
	// as kk compares ids): the old spelling is not retired in the ledger.
	CaseOnly bool `json:"case_only,omitempty"`
	// ReferencesOnly: no leaf held the old id and one held the new id (its
	// file renamed and kk_id changed by hand): only the references to the
	// old id were pointed at it; Path and NewPath are its file, left where
	// it is, and Version is its version (raised only when its own body
	// linked to its old file).
	ReferencesOnly bool `json:"references_only,omitempty"`
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
	// refsOnly: the person renamed the file (git mv) and changed kk_id
	// too, so that no file names id and the leaf holds newID: only the
	// references to id are left, and they are pointed at the leaf, which
	// is left as it is (but for links its own body types to its old file).
	refsOnly := false
	if !ok && strings.TrimSpace(id) != "" {
		if err := graph.UnreadableInTree("node", id, t); err != nil {
			return err
		}
		if h, held := t.ByID(newID); held {
			if _, gone := retired(id); !gone {
				if path.Base(h.Path) == id+".md" {
					n, ok, byHand = h, true, true
				} else {
					n, ok, refsOnly = h, true, true
				}
			}
		}
	}
	if !ok {
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
	if refsOnly && !strings.HasPrefix(store.IDKey(id), store.IDKey(full.Type)+"-") {
		// An id of another type is no former id of this note: its edges
		// are not the note's to take.
		return refuse(fmt.Sprintf("no leaf has this id, and it is no id for a %s, which %s is", full.Type, full.ID))
	}
	if byHand {
		// The leaf as it was before the hand edit: deleteNotes retires
		// that id to the new one and points the edges naming it there.
		full.ID = id
	} else if newID == full.ID && !refsOnly && path.Base(full.Path) == newID+".md" {
		// (A file named otherwise, its case say, is renamed to match.)
		return refuseNew("is the id " + full.ID + " has already")
	}
	// caseOnly: newID is full.ID spelled in another case (ids are
	// compared without regard to case): the same id, its spelling fixed.
	caseOnly := store.IDKey(newID) == store.IDKey(full.ID)
	if other, ok := t.ByID(newID); ok && !byHand && !caseOnly && !refsOnly {
		return refuseNew(fmt.Sprintf("is the id of %s; choose another id", k.Rel(k.NodePath(other.Path))))
	}
	if err := graph.UnreadableInTree("node", newID, t); err != nil {
		return err
	}
	if old, ok := retired(newID); ok {
		return refuseNew(fmt.Sprintf("was retired to %s (%s); a retired id is not given again, choose another id", strings.Join(ledger[old], ", "), ledgerFile))
	}

	if refsOnly {
		return finishReferences(tx, id, full, o, res, del)
	}
	if msg := node.CheckNaming(full.Type, newID, newID+".md"); msg != "" {
		if caseOnly {
			return refuseNew(fmt.Sprintf("is the id %s has already, in another case (ids are compared without regard to case), and no id for a %s: %s", full.ID, full.Type, msg))
		}
		return refuseNew(fmt.Sprintf("is no id for a %s: %s", full.Type, msg))
	}

	newPath := path.Join(path.Dir(full.Path), newID+".md")
	if caseOnly && newPath != full.Path {
		// A file system that does not tell names apart by case (macOS's,
		// Windows's) has the new name already: it is the old file, and
		// writing the one and removing the other would lose it.
		was, err1 := os.Lstat(k.NodePath(full.Path))
		now, err2 := os.Lstat(k.NodePath(newPath))
		if err1 == nil && err2 == nil && os.SameFile(was, now) {
			return refuseNew(fmt.Sprintf("differs from %s only in case, and this file system does not tell %s and %s apart: rename the file first (git mv -f %s %s), then run this command again, which changes the leaf in place",
				full.ID, full.Path, newPath, k.Rel(k.NodePath(full.Path)), k.Rel(k.NodePath(newPath))))
		}
	}
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

	res.Redirects = redirected(del)
	res.ID, res.NewID, res.CaseOnly = oldID, newID, caseOnly
	res.Path, res.NewPath = oldPath, newPath
	res.Version = v + 1
	return nil
}

// redirected returns the retired ids whose ledger entries deleteNotes
// pointed at the new id, sorted.
func redirected(del *DeleteResult) []string {
	out := []string{}
	for _, c := range del.Redirects {
		if !slices.Contains(out, c.ID) {
			out = append(out, c.ID)
		}
	}
	slices.Sort(out)
	return out
}

// spelledAsReferenced returns id as the edges of the tree, or else the
// ledger's entries, spell it, id as given when nothing names it: ids are
// compared without regard to case, but the ledger keeps the id retired as
// written, and the note's file was named for it as the edges spell it.
func spelledAsReferenced(tx *txn.Tx, id string) (string, error) {
	t, ledger, err := treeAndLedger(tx)
	if err != nil {
		return "", err
	}
	same := func(s string) bool { return store.IDKey(s) == store.IDKey(id) }
	for _, l := range t.Leaves {
		for _, list := range [][]string{l.RelatesTo, l.DependsOn, l.GraphLinks} {
			if i := slices.IndexFunc(list, same); i >= 0 {
				return list[i], nil
			}
		}
	}
	for _, old := range slices.SortedFunc(maps.Keys(ledger), store.CompareUTF16) {
		if i := slices.IndexFunc(ledger[old], same); i >= 0 {
			return ledger[old][i], nil
		}
	}
	return id, nil
}

// finishReferences points the references to id, which no leaf holds any
// more, at leaf n, which holds the new id (its file renamed with git mv
// and its kk_id changed by hand): the other leaves' edges, the links typed
// to a file named for id where there is none (in n's folder or another:
// git mv may have taken it anywhere), and the ledger's entries that
// led to id, and id is retired to n's id; all of it is deleteNotes's, told
// of a note that is gone from the tree already (DeleteOptions.formerly).
// n itself is left, but for links its own body types to that file. An id
// that nothing names is refused: there is nothing to finish, and a leaf
// is not given a stranger's id to answer to.
func finishReferences(tx *txn.Tx, id string, n *node.Node, o RenameOptions, res *RenameResult, del *DeleteResult) error {
	k := tx.KB()
	v, err := tx.Version(n)
	if err != nil {
		return err
	}
	id, err = spelledAsReferenced(tx, id)
	if err != nil {
		return err
	}
	// The file the note had, named for id in the folder it has now (git
	// mv renames in place, mostly): the links typed to it lead to n.
	// None, when a file is there.
	was := &node.Node{ID: id, Type: n.Type, Path: path.Join(path.Dir(n.Path), id+".md")}
	if _, err := os.Lstat(k.NodePath(was.Path)); !errors.Is(err, fs.ErrNotExist) {
		was.Path = ""
	}
	if err := deleteNotes(tx, []string{id}, DeleteOptions{RedirectTo: n.ID, Command: o.Command,
		renamed: &node.Node{ID: n.ID, Type: n.Type, Path: n.Path}, formerly: was}, del); err != nil {
		return err
	}
	if len(del.Edges) == 0 && len(del.Links) == 0 && len(del.Redirects) == 0 {
		return &RenameRefusal{Arg: id, Reason: fmt.Sprintf("no leaf has this id, and no edge, typed link or entry of %s names it: there is nothing to point at %s", k.Rel(k.RedirectsPath()), n.ID)}
	}
	res.Redirects = redirected(del)
	res.ID, res.NewID, res.ReferencesOnly = id, n.ID, true
	res.Path, res.NewPath = n.Path, n.Path
	res.Version = v
	touched := slices.ContainsFunc(del.Edges, func(e EdgeChange) bool { return e.Path == n.Path }) ||
		slices.ContainsFunc(del.Links, func(l TypedLink) bool { return l.from == n.Path })
	if touched {
		res.Version = v + 1
	}
	return nil
}
