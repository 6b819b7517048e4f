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
			a, why, err := adoptOne(tx, t, rel)
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
// be adopted ("" when it is staged).
func adoptOne(tx *txn.Tx, t *store.Tree, rel string) (*AdoptedLeaf, string, error) {
	if !t.Skipped(rel) {
		switch _, err := os.Lstat(tx.KB().NodePath(rel)); {
		case errors.Is(err, fs.ErrNotExist):
			return nil, "no such file", nil
		case err != nil:
			return nil, "", err
		case slices.ContainsFunc(t.Leaves, func(n *node.Node) bool { return n.Path == rel }):
			return nil, "it is a valid leaf already; there is nothing to fill in", nil
		}
		return nil, "it is not a leaf file kk reads (kk reads the .md files under nodes/ other than index.md and log.md)", nil
	}
	if fi, err := os.Stat(tx.KB().NodePath(rel)); err == nil && fi.IsDir() {
		// a folder in a leaf's place (one named index.md): no note to fill in
		return nil, problemOf(t, rel), nil
	}
	src, err := tx.Adopt(rel)
	if err != nil {
		return nil, "", err
	}
	n, filled, err := node.Adopt(rel, src)
	if ae, ok := errors.AsType[*node.AdoptError](err); ok {
		msg := ae.Msg
		if strings.HasPrefix(msg, "it is a valid leaf already") {
			// A leaf that parses and is skipped all the same: its id is
			// shared (the problem says so).
			msg = "it is a valid leaf, but " + problemOf(t, rel) + "; adoption cannot fix that"
		}
		return nil, msg, nil
	}
	if err != nil {
		return nil, "", err
	}
	derived := slices.ContainsFunc(filled, func(f node.Filled) bool { return f.Field == node.KeyID })
	taken := func(id string) bool {
		if _, ok := tx.Resolve(id); ok {
			return true
		}
		p, ok := t.Claimed(id)
		return ok && p != rel
	}
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

// problemOf says what is wrong with the skipped leaf at rel.
func problemOf(t *store.Tree, rel string) string {
	for _, p := range t.Problems {
		if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == rel {
			return ne.Detail()
		}
	}
	return "kk skips it"
}
