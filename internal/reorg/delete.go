package reorg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
	"github.com/kk-project/kk/internal/txn"
)

// DeleteOptions are the choices of DeleteNotes.
type DeleteOptions struct {
	// RedirectTo, when set, is the live leaf the deleted ids are retired
	// to in the redirect ledger; edges to them are pointed at it instead
	// of dropped.
	RedirectTo string
	// Command is the command line recorded in the lock and the audit log.
	Command string

	// renamed, set by RenameNote, is what its one note becomes (its new
	// id and path): the edges, links and ledger are pointed at it as at a
	// replacement, and the note is not removed (RenameNote stages it
	// under its new id and path).
	renamed *node.Node
	// formerly, set by RenameNote with renamed, is its one note as it was
	// before a person renamed its file and changed its kk_id by hand (its
	// id, and the path of its file then, "" when unknown): no leaf holds
	// the id any more, and only the references to it are pointed at
	// renamed; the links typed to a file named for the id, in any folder,
	// where there is none, among them.
	formerly *node.Node
}

// DeletedNote is one leaf DeleteNotes removed.
type DeletedNote struct {
	ID   string `json:"id"`
	Path string `json:"path"` // relative to nodes/
}

// EdgeChange is one edge of another leaf to a deleted note that
// DeleteNotes dropped, or pointed at the replacement.
type EdgeChange struct {
	ID      string `json:"id"`   // the leaf that held the edge
	Path    string `json:"path"` // its path, relative to nodes/
	Key     string `json:"key"`  // kk_relates_to, kk_depends_on or kk_edges
	Removed string `json:"removed"`
	// To is the replacement the edge names now; "" when the edge was
	// dropped (no replacement, the leaf is the replacement, or it names
	// the replacement already).
	To string `json:"to,omitempty"`
	// Why says why an edge was dropped, not pointed at the replacement:
	// "names <replacement> already", or "is <replacement> itself".
	Why string `json:"why,omitempty"`
}

// TypedLink is a link a person typed in another leaf's body to a deleted
// note. Without a replacement DeleteNotes leaves it as it is (it leads
// nowhere now, and kk check reports it until it is pointed elsewhere or
// removed); with one, it is pointed at the replacement's file in the same
// transaction, in the form it had (relative or bundle-absolute, its text
// and fragment kept), as kk rebalance move points links at a moved leaf.
type TypedLink struct {
	File   string `json:"file"` // the linking leaf, relative to the repository root
	Line   int    `json:"line"`
	Target string `json:"target"` // the link's path as written
	ID     string `json:"id"`     // the deleted note it named
	// To is the replacement; NewTarget the link's path now ("" without a
	// replacement: the link is left as it is).
	To        string `json:"to,omitempty"`
	NewTarget string `json:"new_target,omitempty"`

	from string // the linking leaf, relative to nodes/
	ord  int    // the link's place among the links typed in its body
}

// DeleteResult is what DeleteNotes did.
type DeleteResult struct {
	Deleted []DeletedNote `json:"deleted"`
	// RedirectedTo is the leaf the deleted ids were retired to in
	// nodes/.redirects.json; "" when none.
	RedirectedTo string       `json:"redirected_to,omitempty"`
	Edges        []EdgeChange `json:"edges"`
	Links        []TypedLink  `json:"links"`
	// Redirects are the entries of nodes/.redirects.json that led to a
	// deleted note, in the order of their retired ids.
	Redirects []RedirectChange `json:"redirects"`
	// Unreadable are the leaf files kk cannot read that name a note
	// deleted without a replacement: their edges are left as written (kk
	// does not rewrite a file it cannot parse), and dangle once the file
	// is mended. With a replacement the ledger leads them to it.
	Unreadable []UnreadableMention `json:"unreadable"`

	// byHand are the ids, as given, of the deleted notes whose files
	// were removed by hand (rm, git rm) before: the deletion finished
	// what was left of them.
	byHand []string
}

// UnreadableMention is a leaf file kk cannot read whose bytes name a
// deleted note's id.
type UnreadableMention struct {
	File string `json:"file"` // relative to the repository root
	ID   string `json:"id"`   // the deleted note it names
}

// RedirectChange is an entry of the redirect ledger that named a deleted
// note among its successors (or a retired id that, with the change,
// leads nowhere): DeleteNotes points it at the replacement, or takes the
// successor out, in the same transaction, so no entry is left leading to
// a note that is gone.
type RedirectChange struct {
	ID      string `json:"id"`      // the retired id the entry is of
	Removed string `json:"removed"` // the successor it named, as written
	// To is the replacement the entry names instead; "" when the
	// successor was taken out.
	To string `json:"to,omitempty"`
	// Why says why the successor was taken out, not pointed at the
	// replacement: "leads to <id> already", "is <replacement> itself",
	// "leads to <ids> still", or "leads nowhere now".
	Why string `json:"why,omitempty"`
	// EntryRemoved: the entry is gone from the ledger (no successor was
	// left): its retired id leads nowhere now, as the deleted note's.
	EntryRemoved bool `json:"entry_removed,omitempty"`
}

// DeleteRefusal is a note DeleteNotes will not delete, or a replacement
// it will not retire them to; nothing is written.
type DeleteRefusal struct {
	// Replacement: the refusal is of DeleteOptions.RedirectTo, not of an
	// id to delete.
	Replacement bool
	Arg         string // the id as given
	Reason      string
}

func (e *DeleteRefusal) Error() string {
	if e.Replacement {
		return "the replacement " + e.Arg + ": " + e.Reason
	}
	return e.Arg + ": " + e.Reason
}

// Front matter keys of the edges DeleteNotes changes.
const (
	keyRelatesTo = "kk_relates_to"
	keyDependsOn = "kk_depends_on"
)

// DeleteNotes removes the leaves ids name (notes: practice, map and the
// other types kk node write writes; traceability entities are kk delete's,
// atoms and molecules kk graph delete's), and in the same transaction
// takes their ids out of every other leaf's kk_relates_to, kk_depends_on
// and kk_edges, which renders those leaves' Related blocks again and bumps
// their versions. With o.RedirectTo the ids are retired to that leaf in
// nodes/.redirects.json and the edges name it instead (once per list; a
// leaf's edge to itself is dropped). Ids are matched as kk matches ids,
// without regard to case; an edge naming a retired id whose successors
// are all deleted counts as an edge to them. An id that is no live leaf,
// an id named twice, or a replacement that is no live leaf or is being
// deleted is a *DeleteRefusal, and nothing is written.
//
// Links typed in other leaves' bodies to a deleted note are left as they
// are and returned, with their lines in the files as written.
func DeleteNotes(ctx context.Context, k *store.KB, ids []string, o DeleteOptions) (*DeleteResult, error) {
	if len(ids) == 0 {
		return nil, errors.New("no note to delete")
	}
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	res := &DeleteResult{Deleted: []DeletedNote{}, Edges: []EdgeChange{}, Links: []TypedLink{}, Redirects: []RedirectChange{}, Unreadable: []UnreadableMention{}}
	r, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: o.Command}, func(tx *txn.Tx) error {
		return deleteNotes(tx, ids, o, res)
	})
	if err != nil {
		return nil, err
	}
	// Notes whose files were removed by hand, and a deletion that found
	// nothing left to change (no edge, link, ledger entry or generated
	// file): a run after the one that finished them. It wrote nothing,
	// and is refused as the deletion of an id no leaf has is, saying so.
	if len(r.Written) == 0 && len(r.Removed) == 0 && len(res.Deleted) > 0 && len(res.byHand) == len(res.Deleted) {
		d := res.Deleted[0]
		return nil, &DeleteRefusal{Arg: res.byHand[0], Reason: fmt.Sprintf("already deleted: its leaf %s is removed from the work tree, and no edge, typed link or generated file is left to change; commit the removal (git add -A %s, git commit)",
			k.Rel(k.NodePath(d.Path)), store.DirName)}
	}
	return res, nil
}

// treeAndLedger returns the transaction's tree, refused unless of format
// v3, and the redirect ledger.
func treeAndLedger(tx *txn.Tx) (*store.Tree, store.Redirects, error) {
	t, err := tx.Tree()
	if err != nil {
		return nil, nil, err
	}
	if err := store.RequireV3(t); err != nil {
		return nil, nil, err
	}
	ledger, err := tx.Redirects()
	if err != nil {
		return nil, nil, err
	}
	return t, ledger, nil
}

func deleteNotes(tx *txn.Tx, ids []string, o DeleteOptions, res *DeleteResult) error {
	k := tx.KB()
	t, ledger, err := treeAndLedger(tx)
	if err != nil {
		return err
	}
	live := func(id string) bool { _, ok := t.ByID(id); return ok }
	// named reports whether a live leaf's edges name id.
	named := func(id string) bool {
		is := func(s string) bool { return store.IDKey(s) == store.IDKey(id) }
		return slices.ContainsFunc(t.Leaves, func(l *node.Node) bool {
			return slices.ContainsFunc(l.RelatesTo, is) || slices.ContainsFunc(l.DependsOn, is) || slices.ContainsFunc(l.GraphLinks, is)
		})
	}
	// byHand holds the notes whose files a person removed (rm, git rm;
	// the removal committed when edges still name them) that the
	// deletion finishes: the edges, links and ledger entries to
	// them go as to any deleted note; their files are gone already.
	byHand := map[*node.Node]bool{}
	renamedByHand := index.NewRemoved(k) // git asked once, on the first argument no leaf holds
	// lookup finds the live leaf an argument names, or says why none;
	// removed, with the leaf git has of a file removed by hand.
	lookup := func(arg string, removed bool) (*node.Node, string, error) {
		if strings.TrimSpace(arg) == "" {
			return nil, "is empty: give the id of a note", nil
		}
		if n, ok := t.ByID(arg); ok {
			return n, "", nil
		}
		if f := o.formerly; f != nil && store.IDKey(arg) == store.IDKey(f.ID) {
			return f, "", nil
		}
		// A leaf staged in the transaction before is live too
		// (RenameNote's, under the id it had before kk_id was changed
		// by hand).
		if n, err := tx.Leaf(arg); err != nil || n != nil {
			return n, "", err
		}
		if err := graph.UnreadableInTree("node", arg, t); err != nil {
			return nil, "", err
		}
		for old := range ledger {
			if store.IDKey(old) != store.IDKey(arg) {
				continue
			}
			to := store.ResolveRedirect(ledger, old, live)
			if len(to) == 0 {
				return nil, fmt.Sprintf("was retired (%s), and no leaf it was retired to is left", k.Rel(k.RedirectsPath())), nil
			}
			return nil, fmt.Sprintf("was retired to %s (%s); it is no note to delete", strings.Join(to, ", "), k.Rel(k.RedirectsPath())), nil
		}
		if removed {
			// A file git pairs with one that holds another id now (git mv,
			// kk_id changed by hand) was renamed, not removed: deleting
			// it would take out the edges its note still answers to.
			if how, to := renamedByHand.Leaf(tx.Context(), arg); to != "" {
				if l, ok := t.LeafAt(to); ok && store.IDKey(l.ID) != store.IDKey(arg) {
					return nil, fmt.Sprintf("no leaf has this id: its file %s and holds %s; if kk_id was changed by hand, `kk node rename %s %s` points the edges and links to %s at it (to delete that note, kk node delete %s)", how, l.ID, arg, l.ID, arg, l.ID), nil
				}
			}
			n, _, _, err := tx.DeletedByHand(arg)
			if err == nil && n == nil && named(arg) {
				// removed and committed (git rm, git commit), with
				// edges left to it
				n, _, _, err = tx.RemovedInHistory(arg)
			}
			if err != nil || n != nil {
				if n != nil {
					byHand[n] = true
				}
				return n, "", err
			}
		}
		return nil, "no leaf has this id", nil
	}

	deleted := map[string]*node.Node{} // by store.IDKey
	given := map[string]string{}       // the argument that named each, by store.IDKey
	var order []*node.Node
	for _, arg := range ids {
		if first, dup := given[store.IDKey(arg)]; dup {
			return &DeleteRefusal{Arg: arg, Reason: "names " + first + " a second time"}
		}
		n, why, err := lookup(arg, o.renamed == nil)
		if err != nil {
			return err
		}
		if n == nil {
			return &DeleteRefusal{Arg: arg, Reason: why}
		}
		given[store.IDKey(arg)] = arg
		full := n // o.formerly, byHand: no file holds it
		if n != o.formerly && !byHand[n] {
			if full, err = tx.LeafAt(n.Path); err != nil {
				return err
			}
		}
		if full == nil {
			return &DeleteRefusal{Arg: arg, Reason: "no leaf has this id"}
		}
		switch {
		case slices.Contains(trace.TraceTypes, full.Type):
			return &DeleteRefusal{Arg: arg, Reason: fmt.Sprintf("is a %s, a traceability entity: delete it with kk delete %s, which removes the edges to it too", full.Type, full.ID)}
		case graph.IsMolecule(full):
			return &DeleteRefusal{Arg: arg, Reason: fmt.Sprintf("is a molecule of the knowledge graph: delete it with kk graph delete %s --expect-version N (--cascade deletes its atoms)", full.ID)}
		case graph.IsAtom(full):
			return &DeleteRefusal{Arg: arg, Reason: fmt.Sprintf("is an atom of the knowledge graph (it has kk_paths): delete it with kk graph delete %s --expect-version N", full.ID)}
		}
		deleted[store.IDKey(full.ID)] = full
		order = append(order, full)
	}

	target := o.renamed
	if target == nil && o.RedirectTo != "" {
		n, why, err := lookup(o.RedirectTo, false)
		if err != nil {
			return err
		}
		switch {
		case n == nil:
			return &DeleteRefusal{Replacement: true, Arg: o.RedirectTo, Reason: why}
		case deleted[store.IDKey(n.ID)] != nil:
			return &DeleteRefusal{Replacement: true, Arg: o.RedirectTo, Reason: "is one of the notes being deleted; retire them to a note that stays"}
		}
		target = n
	}

	// gone reports whether an edge to id is an edge to a deleted note: it
	// names one, or a retired id whose live successors are all deleted.
	gone := func(id string) bool {
		if o.renamed != nil && id == o.renamed.ID {
			return false // spelled as the renamed note's new id already (a case-only rename)
		}
		if deleted[store.IDKey(id)] != nil {
			return true
		}
		if live(id) {
			return false
		}
		to := store.ResolveRedirect(ledger, id, live)
		return len(to) > 0 && !slices.ContainsFunc(to, func(s string) bool { return deleted[store.IDKey(s)] == nil })
	}

	// removed reports whether tree leaf l goes: a deleted note, or the
	// file of one under the id it had before (kk node rename of a kk_id
	// changed by hand: the tree has the file under the new id).
	removed := func(l *node.Node) bool {
		return deleted[store.IDKey(l.ID)] != nil || slices.ContainsFunc(order, func(n *node.Node) bool { return n.Path != "" && n.Path == l.Path })
	}
	var edits []*node.Node
	for _, l := range t.Leaves {
		if removed(l) {
			continue
		}
		if !slices.ContainsFunc(l.RelatesTo, gone) && !slices.ContainsFunc(l.DependsOn, gone) && !slices.ContainsFunc(l.GraphLinks, gone) {
			continue
		}
		n, err := tx.LeafAt(l.Path)
		if err != nil {
			return err
		}
		if n == nil {
			continue
		}
		edits = append(edits, n)
	}
	slices.SortFunc(edits, func(a, b *node.Node) int { return store.LocaleCompare(a.Path, b.Path) })
	// A depends_on edge pointed at the replacement must not close a
	// cycle, through kk_depends_on or the depends_on entries of kk_edges
	// (one graph to kk check's depends-on-acyclic). deps holds the
	// targets of each leaf's depends_on edges as the index has them
	// before the change, by store.IDKey, read when first needed; depsNow
	// those of the leaves changed so far, as the change leaves them.
	var deps map[string][]string
	depsNow := map[string][]string{}
	// dependsOn reports whether from depends on to through depends_on
	// edges of either form (a retired id standing for its successors).
	dependsOn := func(from, to string) (bool, error) {
		if deps == nil {
			db, err := tx.Index()
			if err != nil {
				return false, err
			}
			edges, err := db.Edges(tx.Context())
			if err != nil {
				return false, err
			}
			deps = map[string][]string{}
			for _, e := range edges {
				if e.Type == index.EdgeDependsOn && deleted[store.IDKey(e.From)] == nil {
					deps[store.IDKey(e.From)] = append(deps[store.IDKey(e.From)], e.To)
				}
			}
		}
		seen := map[string]bool{}
		queue := []string{store.IDKey(from)}
		for len(queue) > 0 {
			cur := queue[0]
			queue = queue[1:]
			if cur == store.IDKey(to) {
				return true, nil
			}
			if seen[cur] {
				continue
			}
			seen[cur] = true
			out, changed := depsNow[cur]
			if !changed {
				out = deps[cur]
			}
			for _, id := range out {
				for _, s := range store.ResolveRedirect(ledger, id, live) {
					queue = append(queue, store.IDKey(s))
				}
			}
		}
		return false, nil
	}
	paths := map[string]string{} // deleted path -> id
	names := [][]byte{}          // their file names: a link to one holds it
	for _, n := range order {
		if n.Path != "" {
			paths[n.Path] = n.ID
			names = append(names, []byte(path.Base(n.Path)))
		}
	}
	// renamedFrom holds, for kk node rename, the id the note had (by
	// store.IDKey), its file named for it: the file a person moved by
	// hand, with git mv, to another folder or name (its kk_id changed or
	// not) was at a path kk does not know, and the links typed to it
	// from any folder lead there.
	renamedFrom := map[string]string{}
	if o.renamed != nil {
		for _, n := range order {
			renamedFrom[store.IDKey(n.ID)] = n.ID
		}
		if f := o.formerly; f != nil {
			renamedFrom[store.IDKey(f.ID)] = f.ID
		}
		for _, id := range renamedFrom {
			names = append(names, []byte(id+".md"))
		}
	}
	// goneAt returns the id of the deleted note a link that leads to p
	// (relative to nodes/) named, "" for none: a deleted note's path, or,
	// for a renamed note, any path named for its old id where there is
	// no file (the file name is the id, as kk doctor's relinking of dead
	// links takes it). One lstat per such link, on links that name the
	// file only.
	goneAt := func(p string) string {
		if id := paths[p]; id != "" {
			return id
		}
		if len(renamedFrom) == 0 || path.Ext(p) != ".md" {
			return ""
		}
		id := renamedFrom[store.IDKey(strings.TrimSuffix(path.Base(p), ".md"))]
		if id == "" {
			return ""
		}
		if _, err := os.Lstat(k.NodePath(p)); errors.Is(err, fs.ErrNotExist) {
			return id
		}
		return ""
	}
	// The links typed in other bodies are found in the files as they are
	// before the change, for their lines; with a replacement, each is
	// pointed at it in the leaf's body.
	var others []string
	for _, l := range t.Leaves {
		if !removed(l) {
			others = append(others, l.Path)
		}
	}
	links, err := typedLinksTo(k, others, names, goneAt)
	if err != nil {
		return err
	}
	relink := map[string]bool{} // leaves with a typed link to relink, relative to nodes/
	if target != nil {
		for i, l := range links {
			links[i].To = target.ID
			relink[l.from] = true
		}
	}
	res.Links = links
	if target == nil {
		// A rename or --redirect-to retires the ids in the ledger: an
		// edge to one still leads somewhere. A deletion without them
		// leaves an unreadable file's edge to nowhere once the file is
		// mended: said, not changed.
		if res.Unreadable, err = unreadableMentions(k, tx.Skipped(), order); err != nil {
			return err
		}
	}
	for _, n := range edits {
		delete(relink, n.Path) // relinked below, with its edges
	}
	for _, p := range slices.Sorted(maps.Keys(relink)) {
		n, err := tx.LeafAt(p)
		if err != nil {
			return err
		}
		if n != nil {
			edits = append(edits, n)
		}
	}
	relinkBody := func(n *node.Node) {
		if target == nil {
			return
		}
		body, changed := store.RetargetTypedLinks(n.Body, n.Path, n.Path, func(p string) (string, bool) {
			return target.Path, goneAt(p) != ""
		})
		for _, c := range changed {
			for j := range res.Links {
				if res.Links[j].from == n.Path && res.Links[j].Target == c.Was && res.Links[j].NewTarget == "" {
					res.Links[j].NewTarget = c.Now
					break
				}
			}
		}
		n.Body = body
	}
	for _, n := range edits {
		relinkBody(n)
		self := target != nil && store.IDKey(n.ID) == store.IDKey(target.ID)
		// retarget returns what an edge to a deleted note becomes: the
		// replacement's id, or "" to drop it, and why it is dropped. A
		// depends_on edge is dropped when the replacement depends on n.
		retarget := func(names func(id string) bool, depends bool) (string, string, error) {
			switch {
			case target == nil:
				return "", "", nil
			case self:
				return "", "is " + target.ID + " itself", nil
			case names(target.ID):
				return "", "names " + target.ID + " already", nil
			}
			if depends {
				cycle, err := dependsOn(target.ID, n.ID)
				if err != nil {
					return "", "", err
				}
				if cycle {
					return "", fmt.Sprintf("would make a depends_on cycle: %s depends on %s", target.ID, n.ID), nil
				}
			}
			return target.ID, "", nil
		}
		for _, key := range []string{keyRelatesTo, keyDependsOn} {
			list := &n.RelatesTo
			if key == keyDependsOn {
				list = &n.DependsOn
			}
			var out []string
			for _, id := range *list {
				if !gone(id) {
					out = append(out, id)
					continue
				}
				// (An edge that is gone does not name the replacement: a
				// case-only rename's edges spelled the old way are the
				// ones it rewrites.)
				to, why, err := retarget(func(t string) bool {
					return slices.ContainsFunc(out, func(s string) bool { return store.IDKey(s) == store.IDKey(t) }) ||
						slices.ContainsFunc(*list, func(s string) bool { return !gone(s) && store.IDKey(s) == store.IDKey(t) })
				}, key == keyDependsOn)
				if err != nil {
					return err
				}
				if to != "" {
					out = append(out, to)
				}
				res.Edges = append(res.Edges, EdgeChange{ID: n.ID, Path: n.Path, Key: key, Removed: id, To: to, Why: why})
			}
			if out == nil {
				out = []string{}
			}
			*list = out
		}
		// kk_molecule and kk_related are the graph's own: kk graph
		// changes them.
		if id, ok := graphLinkLeft(n, gone); ok {
			return &DeleteRefusal{Arg: given[store.IDKey(deletedID(deleted, ledger, live, id))], Reason: fmt.Sprintf(
				"%s (%s) names it in kk_related or kk_molecule, which kk graph keeps; take it out there first (kk graph update %s)", n.ID, k.Rel(k.NodePath(n.Path)), n.ID)}
		}
		typed, err := retargetGraphEdges(n, gone, retarget, res)
		if err != nil {
			return err
		}
		depsNow[store.IDKey(n.ID)] = append(slices.Clone(n.DependsOn), typed...)
		tx.Put(n)
	}

	for _, n := range order {
		if o.renamed != nil {
			break
		}
		if !byHand[n] {
			if err := tx.Remove(n); err != nil {
				return err
			}
		}
		res.Deleted = append(res.Deleted, DeletedNote{ID: n.ID, Path: n.Path})
		if byHand[n] {
			res.byHand = append(res.byHand, given[store.IDKey(n.ID)])
			// No leaf of the tree changes when nothing named the note: the
			// generated files are brought up to date all the same (they
			// list it until then), and a later run finds them so.
			tx.Regenerate()
		}
	}
	// The ledger's entries that led to a deleted note lead to the
	// replacement now, or no longer name it.
	r, changes := repointLedger(ledger, deleted, target, live)
	res.Redirects = append(res.Redirects, changes...)
	if target != nil {
		for _, n := range order {
			if store.IDKey(n.ID) == store.IDKey(target.ID) {
				continue // a case-only rename: the old spelling is the same id, not retired to itself
			}
			if !slices.ContainsFunc(r[n.ID], func(s string) bool { return store.IDKey(s) == store.IDKey(target.ID) }) {
				r[n.ID] = append(r[n.ID], target.ID)
			}
		}
		res.RedirectedTo = target.ID
	}
	if target != nil || len(changes) > 0 {
		tx.SetRedirects(r)
	}

	// The lines are given in the files as the change leaves them (their
	// front matter and Related block may have changed length): each link
	// is found again by its place among the links typed in its body,
	// which the change keeps.
	tx.AfterCommit(func(*txn.Result) error {
		for i := range res.Links {
			l := &res.Links[i]
			src, err := os.ReadFile(k.NodePath(l.from))
			if err != nil {
				return err
			}
			parts, err := frontmatter.Split(src)
			if err != nil {
				return err
			}
			if typed := typedLinks(parts.Body); l.ord < len(typed) {
				l.Line = bytes.Count(src[:len(src)-len(parts.Body)], []byte("\n")) + typed[l.ord].Line
			}
		}
		return nil
	})
	return nil
}

// typedLinks returns the links of body a person typed (not those of a
// generated block), in order.
func typedLinks(body []byte) []node.Link {
	var out []node.Link
	for _, l := range node.MarkdownLinks(body) {
		if !l.Generated {
			out = append(out, l)
		}
	}
	return out
}

// retargetGraphEdges drops or retargets the leaf's kk_edges to deleted
// notes, keeping one edge of a type and kind per target; a depends_on
// edge goes through retarget's cycle check. It returns the targets of the
// leaf's depends_on edges in kk_edges as it leaves them.
func retargetGraphEdges(n *node.Node, gone func(string) bool, retarget func(func(string) bool, bool) (string, string, error), res *DeleteResult) ([]string, error) {
	if _, ok := n.Extra(graph.KeyEdges); !ok {
		return nil, nil
	}
	list, err := graph.EdgesOf(n)
	if err != nil {
		return nil, err
	}
	var out []graph.Edge
	changed := false
	for _, e := range list {
		if !gone(e.To) {
			out = append(out, e)
			continue
		}
		changed = true
		to, why, err := retarget(func(t string) bool {
			same := func(x graph.Edge) bool {
				return x.Type == e.Type && x.Kind == e.Kind && store.IDKey(x.To) == store.IDKey(t)
			}
			// (An edge that is gone does not name the replacement.)
			return slices.ContainsFunc(out, same) || slices.ContainsFunc(list, func(x graph.Edge) bool { return !gone(x.To) && same(x) })
		}, e.Type == index.EdgeDependsOn)
		if err != nil {
			return nil, err
		}
		res.Edges = append(res.Edges, EdgeChange{ID: n.ID, Path: n.Path, Key: graph.KeyEdges, Removed: e.To, To: to, Why: why})
		if to != "" {
			e.To = to
			out = append(out, e)
		}
	}
	var deps []string
	for _, e := range out {
		if e.Type == index.EdgeDependsOn {
			deps = append(deps, e.To)
		}
	}
	if !changed {
		return deps, nil
	}
	if len(out) == 0 {
		return deps, n.DeleteExtra(graph.KeyEdges)
	}
	return deps, n.SetExtra(graph.KeyEdges, graph.EdgeValues(out))
}

// repointLedger returns a copy of the redirect ledger in which no entry
// leads to a deleted note, and what changed, in the order of the retired
// ids. With a replacement each deleted successor is replaced by it, or
// taken out when the entry names the replacement already or is the
// replacement's own (an entry left with no successor is removed). Without
// one each deleted successor is taken out; an entry left with no
// successor is removed, as its retired id leads nowhere now, and so, in
// turn, is a successor naming such a retired id. Entries that named no
// deleted note are left as they are.
func repointLedger(ledger store.Redirects, deleted map[string]*node.Node, target *node.Node, live func(string) bool) (store.Redirects, []RedirectChange) {
	r := ledger.Clone()
	gone := map[string]bool{} // successors that lead nowhere, by store.IDKey
	for key := range deleted {
		gone[store.IDKey(key)] = true
	}
	isGone := func(s string) bool {
		// (A successor spelled as the replacement is not gone: a case-only
		// rename's replacement has the deleted note's id.)
		return gone[store.IDKey(s)] && (target == nil || s != target.ID)
	}
	var changes []RedirectChange
	for again := true; again; {
		again = false
		for _, old := range slices.SortedFunc(maps.Keys(r), store.CompareUTF16) {
			list := r[old]
			if !slices.ContainsFunc(list, isGone) {
				continue
			}
			names := func(list []string, id string) bool {
				return slices.ContainsFunc(list, func(s string) bool { return store.IDKey(s) == store.IDKey(id) })
			}
			var now []string
			var entry []RedirectChange
			for _, s := range list {
				switch {
				case !isGone(s):
					if !names(now, s) {
						now = append(now, s)
					}
				case target == nil:
					entry = append(entry, RedirectChange{ID: old, Removed: s})
				case store.IDKey(old) == store.IDKey(target.ID):
					entry = append(entry, RedirectChange{ID: old, Removed: s, Why: "is " + target.ID + " itself"})
				case names(now, target.ID) || slices.ContainsFunc(list, func(x string) bool { return !isGone(x) && store.IDKey(x) == store.IDKey(target.ID) }):
					entry = append(entry, RedirectChange{ID: old, Removed: s, Why: "leads to " + target.ID + " already"})
				default:
					now = append(now, target.ID)
					entry = append(entry, RedirectChange{ID: old, Removed: s, To: target.ID})
				}
			}
			for i := range entry {
				switch {
				case len(now) == 0:
					entry[i].EntryRemoved = true
					if entry[i].Why == "" {
						entry[i].Why = "leads nowhere now"
					}
				case entry[i].To == "" && entry[i].Why == "":
					entry[i].Why = "leads to " + strings.Join(now, ", ") + " still"
				}
			}
			changes = append(changes, entry...)
			if len(now) > 0 {
				r[old] = now
				continue
			}
			delete(r, old)
			if !live(old) && !gone[store.IDKey(old)] {
				gone[store.IDKey(old)] = true
				again = true // a successor naming it leads nowhere now
			}
		}
	}
	slices.SortStableFunc(changes, func(a, b RedirectChange) int { return store.CompareUTF16(a.ID, b.ID) })
	return r, changes
}

// graphLinkLeft returns an id of a deleted note the leaf still names
// through kk_molecule or kk_related (its graph links other than kk_edges).
func graphLinkLeft(n *node.Node, gone func(string) bool) (string, bool) {
	edges := map[string]bool{}
	if list, err := graph.EdgesOf(n); err == nil {
		for _, e := range list {
			edges[store.IDKey(e.To)] = true
		}
	}
	for _, id := range n.GraphLinks {
		if gone(id) && !edges[store.IDKey(id)] {
			return id, true
		}
	}
	return "", false
}

// deletedID returns the deleted note an edge to id stands for.
func deletedID(deleted map[string]*node.Node, ledger store.Redirects, live func(string) bool, id string) string {
	if n := deleted[store.IDKey(id)]; n != nil {
		return n.ID
	}
	for _, to := range store.ResolveRedirect(ledger, id, live) {
		if n := deleted[store.IDKey(to)]; n != nil {
			return n.ID
		}
	}
	return id
}

// typedLinksTo returns the links typed in the bodies of the leaves at
// others (relative to nodes/) that lead to a path goneAt gives the id of
// a deleted note for (a file that holds none of names is not parsed),
// in the order of others and of the links, with their lines in
// the files.
func typedLinksTo(k *store.KB, others []string, names [][]byte, goneAt func(p string) string) ([]TypedLink, error) {
	found := make([][]TypedLink, len(others))
	errs := make([]error, len(others))
	store.Parallel(len(others), func(i int) {
		from := others[i]
		src, err := os.ReadFile(k.NodePath(from))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs[i] = err
			}
			return
		}
		if !bytes.Contains(src, []byte("](")) && !bytes.Contains(src, []byte("]:")) || !slices.ContainsFunc(names, func(b []byte) bool { return bytes.Contains(src, b) }) {
			return // no link, or none that names a deleted note's file
		}
		parts, err := frontmatter.Split(src)
		if err != nil {
			return // not a leaf kk reads: the checks say why
		}
		head := bytes.Count(src[:len(src)-len(parts.Body)], []byte("\n"))
		for j, l := range typedLinks(parts.Body) {
			p, ok := store.LinkPath(from, l.Path)
			if !ok {
				continue
			}
			if id := goneAt(p); id != "" {
				found[i] = append(found[i], TypedLink{File: k.Rel(k.NodePath(from)), Line: head + l.Line, Target: l.Path, ID: id, from: from, ord: j})
			}
		}
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	out := []TypedLink{}
	for _, f := range found {
		out = append(out, f...)
	}
	return out, nil
}

// unreadableMentions lists the skipped leaf files (problems, as the
// transaction's tree has them) whose bytes name one of the deleted notes'
// ids, as a whole id (compared as kk compares ids, without regard to
// case). Only the files kk could not read are read, once each.
func unreadableMentions(k *store.KB, problems []error, deleted []*node.Node) ([]UnreadableMention, error) {
	out := []UnreadableMention{}
	for _, p := range problems {
		ne, ok := errors.AsType[*node.Error](p)
		if !ok || ne.Path == "" {
			continue
		}
		data, err := os.ReadFile(k.NodePath(ne.Path))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		text := strings.ToLower(string(data))
		for _, n := range deleted {
			if namesID(text, strings.ToLower(n.ID)) {
				out = append(out, UnreadableMention{File: k.Rel(k.NodePath(ne.Path)), ID: n.ID})
			}
		}
	}
	return out, nil
}

// namesID reports whether text holds id as a whole id: not inside a
// longer one (practice-n9 is not named by practice-n90).
func namesID(text, id string) bool {
	idChar := func(c byte) bool {
		return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_'
	}
	for from := 0; ; {
		i := strings.Index(text[from:], id)
		if i < 0 {
			return false
		}
		i += from
		end := i + len(id)
		if (i == 0 || !idChar(text[i-1])) && (end == len(text) || !idChar(text[end])) {
			return true
		}
		from = i + 1
	}
}
