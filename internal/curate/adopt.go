package curate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// AdoptedLeaf is a note written by hand that Adopt made a leaf.
type AdoptedLeaf struct {
	From   string        `json:"from"` // the note, relative to the repository root
	Path   string        `json:"path"` // the leaf (the note renamed <id>.md when needed)
	ID     string        `json:"id"`
	Filled []node.Filled `json:"filled"`
}

// NotAdopted is a file Adopt left alone, and why.
type NotAdopted struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// AdoptResult says what Adopt did.
type AdoptResult struct {
	Adopted []AdoptedLeaf `json:"adopted"`
	Left    []NotAdopted  `json:"not_adopted"`
	Index   []string      `json:"index_changed"`
}

// AdoptError is a file named to Adopt that cannot be adopted; nothing was
// written.
type AdoptError struct{ Left []NotAdopted }

func (e *AdoptError) Error() string {
	parts := make([]string, len(e.Left))
	for i, l := range e.Left {
		parts[i] = l.Path + ": " + l.Reason
	}
	return "cannot adopt " + strings.Join(parts, "; ")
}

// Adopt turns notes written by hand under nodes/ into valid leaves (see
// node.Adopt for what it fills in), in one store transaction, which also
// brings the index files up to date. rels are paths relative to nodes/;
// with none, every file the tree skips is tried, and those that cannot be
// adopted are listed in the result's Left. A file named in rels that
// cannot be adopted is an *AdoptError, and nothing is written.
func Adopt(ctx context.Context, k *store.KB, rels []string, opts WriteOptions) (*AdoptResult, error) {
	res := &AdoptResult{Adopted: []AdoptedLeaf{}, Left: []NotAdopted{}, Index: []string{}}
	named := len(rels) > 0
	done, err := txn.Update(ctx, k, txn.Meta{Source: opts.Source, Command: opts.Command}, func(tx *txn.Tx) error {
		t, err := tx.Tree()
		if err != nil {
			return err
		}
		if !named {
			rels = t.SkippedPaths()
		}
		for _, rel := range rels {
			a, why, err := adoptOne(tx, t, rel, named)
			if err != nil {
				return err
			}
			if why != "" {
				res.Left = append(res.Left, NotAdopted{Path: repoPath(rel), Reason: why})
				continue
			}
			res.Adopted = append(res.Adopted, *a)
		}
		if named && len(res.Left) > 0 {
			return &AdoptError{Left: res.Left}
		}
		if err := readmitSharers(tx, t, res.Adopted); err != nil {
			return err
		}
		if opts.NoIndex {
			tx.SkipIndexFiles()
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		res.Index = done.Index.Changed
	}
	return res, nil
}

func repoPath(rel string) string { return path.Join(store.DirName, "nodes", rel) }

// adoptOne stages the adoption of the file at rel; why says why it cannot
// be adopted ("" when it is staged). named says the person named the file.
func adoptOne(tx *txn.Tx, t *store.Tree, rel string, named bool) (*AdoptedLeaf, string, error) {
	if !t.Skipped(rel) {
		switch _, err := os.Lstat(tx.KB().NodePath(rel)); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, "no such file", nil
		case err != nil:
			return nil, "", err
		case slices.ContainsFunc(t.Leaves, func(n *node.Node) bool { return n.Path == rel }):
			if why := originalOf(t, rel); why != "" {
				return nil, why, nil
			}
			return nil, "it is a valid leaf already; there is nothing to fill in", nil
		}
		return nil, "it is not a leaf file kk reads (kk reads the .md files under nodes/ other than index.md and log.md)", nil
	}
	if fi, err := os.Stat(tx.KB().NodePath(rel)); err == nil && fi.IsDir() {
		// a folder in a leaf's place (one named index.md): no note to fill in
		return nil, problemOf(t, rel), nil
	}
	if fi, err := os.Lstat(tx.KB().NodePath(rel)); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		// A second name for a note (ln -s practice-retry.md alias.md):
		// kk writes only regular files, and the note it leads to is the
		// note; adopting it would change that note through this name.
		target, _ := os.Readlink(tx.KB().NodePath(rel))
		return nil, fmt.Sprintf("it is a symbolic link to %s, and kk writes only regular files: if it is a second name for that note, remove it (git rm); to make it a note of its own, replace it with a copy (cp --remove-destination %s %s) and adopt that", target, target, path.Base(rel)), nil
	}
	src, err := tx.Adopt(rel)
	if err != nil {
		return nil, "", err
	}
	taken := func(id string) bool {
		if _, ok := tx.Resolve(id); ok {
			return true
		}
		p, ok := t.Claimed(id)
		return ok && p != rel
	}
	n, filled, err := node.Adopt(rel, src)
	if ae, ok := errors.AsType[*node.AdoptError](err); ok {
		if !strings.HasPrefix(ae.Msg, "it is a valid leaf already") {
			return nil, ae.Msg, nil
		}
		// A leaf that parses and is skipped all the same: another leaf
		// has its id (the problem says so), and it is a copy.
		if n, err = node.Parse(rel, src); err != nil {
			return nil, "", err
		}
		old, others := n.ID, taken
		// The id the copy shares is no id of its own, even when no other
		// leaf holds it (the file it shares it with is skipped too).
		taken = func(id string) bool { return store.IDKey(id) == store.IDKey(old) || others(id) }
		var why string
		if filled, why, err = adoptCopy(t, n, named, taken); why != "" || err != nil {
			return nil, why, err
		}
	} else if err != nil {
		return nil, "", err
	}
	derived := slices.ContainsFunc(filled, func(f node.Filled) bool { return f.Field == node.KeyID })
	if taken(n.ID) {
		if !derived {
			return nil, fmt.Sprintf("its kk_id %s is taken by another leaf; give it another id", n.ID), nil
		}
		id, err := node.UniqueID(taken, n.ID)
		if err != nil {
			return nil, err.Error(), nil
		}
		filled = n.SetID(id, filled)
	}
	if why := node.LongID(n.ID); why != "" {
		// Past the limit the id is no id a writer could give, and its
		// file name none the file system takes.
		if derived {
			return nil, "its title " + why + ": give it a shorter title, or a kk_id of its own", nil
		}
		return nil, "its kk_id " + why + ": give it a shorter one", nil
	}
	if n.Path != rel {
		if _, err := os.Lstat(tx.KB().NodePath(n.Path)); err == nil {
			return nil, fmt.Sprintf("it would be renamed %s, which exists", repoPath(n.Path)), nil
		}
	}
	if err := n.Validate(); err != nil {
		return nil, err.Error(), nil
	}
	tx.Put(n)
	if n.Path != rel {
		tx.RemoveFile("nodes/" + rel)
	}
	if filled == nil {
		filled = []node.Filled{}
	}
	return &AdoptedLeaf{From: repoPath(rel), Path: repoPath(n.Path), ID: n.ID, Filled: filled}, "", nil
}

// adoptCopy gives n, a valid leaf the tree skips because another leaf has
// its id, an id of its own (node.AdoptCopy), when it is a copy: the one
// leaf whose file is named for the id holds it (the original, which is
// never changed), or else the person named n's file. Its kk_version
// starts again at 1: a copy is a new note. why says why n is not adopted.
func adoptCopy(t *store.Tree, n *node.Node, named bool, taken func(string) bool) ([]node.Filled, string, error) {
	rel, old := n.Path, n.ID
	ne := problemErr(t, rel)
	if ne == nil || !errors.Is(ne, store.ErrSharedID) {
		return nil, "it is a valid leaf, but " + problemOf(t, rel) + "; adoption cannot fix that", nil
	}
	others := sharers(t, old, rel)
	whose := "also used by " + strings.Join(others, ", ")
	h, held := t.ByID(old)
	if held {
		whose = "held by " + h.Path
	}
	if held && !errors.Is(ne, store.ErrCopiedID) && !named {
		// Its id differs only in case from the one another leaf holds:
		// as likely a note of its own, written by hand, as a copy.
		return nil, fmt.Sprintf("its kk_id %s differs only in case from %s, which %s holds; if this file is a copy, name it to give it an id of its own: %s",
			old, h.ID, h.Path, store.AdoptCommand(rel)), nil
	}
	if !errors.Is(ne, store.ErrCopiedID) && !named {
		namedFor := 0
		for _, p := range append([]string{rel}, others...) {
			if strings.EqualFold(path.Base(p), old+".md") {
				namedFor++
			}
		}
		which := "there is none"
		if namedFor > 1 {
			which = fmt.Sprintf("there are %d", namedFor)
		}
		return nil, fmt.Sprintf("its kk_id %s is also used by %s, and kk cannot tell which is the copy (the original is the one file named %s.md, and %s): name the copy: %s",
			old, strings.Join(others, ", "), old, which, store.AdoptCommand(rel)), nil
	}
	filled, err := node.AdoptCopy(n, taken)
	if ae, ok := errors.AsType[*node.AdoptError](err); ok {
		return nil, ae.Msg, nil
	}
	if err != nil {
		return nil, "", err
	}
	filled[0].From += "; was " + old + ", " + whose
	if v, ok := n.Extra(txn.KeyVersion); ok && v != int64(1) {
		if err := n.SetExtra(txn.KeyVersion, int64(1)); err != nil {
			return nil, "", err
		}
		filled = append(filled, node.Filled{Field: txn.KeyVersion, Value: int64(1), From: fmt.Sprintf("a copy is a new note; was %v", v), Was: v})
	}
	return filled, "", nil
}

// readmitSharers stages, as they are, the leaves the tree skipped because
// a copy adopted had their id and that the copy's new id leaves the leaf
// of that id (store.HolderOf: the only one left, say), so that the index
// files generated in the same change list them, as the next read of the
// tree does.
func readmitSharers(tx *txn.Tx, t *store.Tree, adopted []AdoptedLeaf) error {
	gone := map[string]bool{} // the adopted copies, relative to nodes/
	var olds []string         // the ids they had
	for _, a := range adopted {
		for _, f := range a.Filled {
			if old, ok := f.Was.(string); ok && f.Field == node.KeyID {
				gone[strings.TrimPrefix(a.From, repoPath("")+"/")] = true
				if !slices.ContainsFunc(olds, func(o string) bool { return store.IDKey(o) == store.IDKey(old) }) {
					olds = append(olds, old)
				}
			}
		}
	}
	for _, old := range olds {
		if _, held := t.ByID(old); held {
			continue // the original holds it, and is read already
		}
		var ids, types, paths []string
		for _, p := range sharers(t, old, "") {
			if gone[p] {
				continue
			}
			src, err := tx.Adopt(p)
			if err != nil {
				return err
			}
			n, err := node.Parse(p, src)
			if err != nil {
				return err
			}
			ids, types, paths = append(ids, n.ID), append(types, n.Type), append(paths, p)
		}
		if len(paths) == 0 {
			continue
		}
		if i, ok := store.HolderOf(ids, types, paths); ok {
			if err := tx.Readmit(paths[i]); err != nil {
				return err
			}
		}
	}
	return nil
}

// sharers lists the paths of the leaves other than the one at rel that
// have the id id (compared without regard to case): the one that holds it,
// and those the tree skips for it.
func sharers(t *store.Tree, id, rel string) []string {
	var out []string
	if h, ok := t.ByID(id); ok && h.Path != rel {
		out = append(out, h.Path)
	}
	for _, p := range t.Problems {
		ne, ok := errors.AsType[*node.Error](p)
		if ok && ne.Path != rel && errors.Is(ne, store.ErrSharedID) && store.IDKey(ne.ID) == store.IDKey(id) {
			out = append(out, ne.Path)
		}
	}
	return out
}

// originalOf says, when the leaf at rel holds an id that leaves the tree
// skips as its copies have, that it is their original, which adoption
// never changes, and which files to adopt instead; "" when no copy has its
// id.
func originalOf(t *store.Tree, rel string) string {
	n, ok := t.LeafAt(rel)
	if !ok {
		return ""
	}
	copies := sharers(t, n.ID, rel)
	if len(copies) == 0 {
		return ""
	}
	quoted := make([]string, len(copies))
	for i, c := range copies {
		quoted[i] = repoPath(c)
	}
	what := "the copy " + quoted[0] + " gets an id of its own"
	if len(copies) > 1 {
		what = "the copies " + strings.Join(quoted, ", ") + " get ids of their own"
	}
	return fmt.Sprintf("it is the original of %s (its file is named for the id), which keeps it: kk node adopt never changes it; %s: %s", n.ID, what, store.AdoptCommand(copies...))
}

// problemErr is the problem of the skipped leaf at rel, nil when the tree
// has none.
func problemErr(t *store.Tree, rel string) *node.Error {
	for _, p := range t.Problems {
		if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == rel {
			return ne
		}
	}
	return nil
}

// problemOf says what is wrong with the skipped leaf at rel.
func problemOf(t *store.Tree, rel string) string {
	if ne := problemErr(t, rel); ne != nil {
		return ne.Detail()
	}
	return "kk skips it"
}
