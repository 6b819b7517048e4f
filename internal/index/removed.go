package index

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// Removed says where the leaves of ids that no leaf holds went when a
// person removed or renamed their files by hand, asking git once
// (gitx.Removals) on the first question, whatever the number of ids:
// kk check and kk lint say it of the edges to such ids.
type Removed struct {
	k    *store.KB
	once sync.Once
	by   map[string]gitx.Removal
}

// NewRemoved returns the lookup of the knowledge base k's removed leaves.
func NewRemoved(k *store.KB) *Removed { return &Removed{k: k} }

// Leaf says what became of the file named for id: how is "<file> is
// deleted in the work tree", "<file> was removed in commit <hash>", or
// the same with "renamed to <file>", the files relative to the root, and
// renamedTo the path (relative to nodes/) git paired it with as a rename;
// both "" when git knows of no such file (outside git included).
func (r *Removed) Leaf(ctx context.Context, id string) (how, renamedTo string) {
	nodes := filepath.ToSlash(r.k.Rel(r.k.NodesDir()))
	r.once.Do(func() { r.by = gitx.Removals(ctx, r.k.Root, nodes) })
	rm, ok := r.by[store.IDKey(id)+".md"]
	if !ok {
		return "", ""
	}
	verb, where := "deleted", " in the work tree"
	if rm.Commit != "" {
		verb, where = "removed", fmt.Sprintf(" in commit %.12s", rm.Commit)
	}
	if rm.RenamedTo != "" {
		verb = "renamed to " + rm.RenamedTo
		renamedTo, _ = strings.CutPrefix(rm.RenamedTo, nodes+"/")
	}
	if rm.Commit != "" {
		return fmt.Sprintf("%s was %s%s", rm.File, verb, where), renamedTo
	}
	return fmt.Sprintf("%s is %s%s", rm.File, verb, where), renamedTo
}
