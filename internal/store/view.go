package store

import "github.com/kk-project/kk/internal/node"

// TreeView is a tree read through lookups, never handed out whole: a
// Snapshot a long-running process keeps, or a view a one-shot process
// reads from the branch index's leaf state on demand (index.DB.
// TreeOrSnapshot), which decodes only the leaves asked for. A writer
// that looks leaves up and plans the index files of its change reads no
// more of the tree than the change reaches. Its leaves are the view's:
// readers get values (LeafView), Node a copy of their own, and Tree a
// whole tree of the caller's own.
type TreeView interface {
	// Leaves is the number of leaves.
	Leaves() int
	// Tree returns the tree as a tree of the caller's own.
	Tree() *Tree
	// Problems, Skipped and Claimed are Tree's.
	Problems() []error
	Skipped(rel string) bool
	Claimed(id string) (string, bool)
	// ByID returns the leaf with the given id (compared without regard
	// to case); LeafAt the leaf at rel (relative to nodes/).
	ByID(id string) (LeafView, bool)
	LeafAt(rel string) (LeafView, bool)
	// Hash returns the hash of the leaf file at rel (LeafSum).
	Hash(rel string) (string, bool)
	// IndexDirs returns the folders holding an index.md, a set of the
	// caller's own; Leftovers the temporary files of interrupted writes
	// (Tree.Leftovers), a list of the caller's own.
	IndexDirs() map[string]bool
	Leftovers() []string
	// RequireV3 is store.RequireV3 of the tree.
	RequireV3() error
	// Naming lists, in the tree's order, the paths of the leaves whose
	// relates_to or depends_on names an id keys holds (by IDKey).
	Naming(keys map[string]bool) []string
	// InDegrees returns, for each id of ids, how many leaves name it
	// (exactly so spelled) in relates_to, leaving out those no leaf
	// names: a map of the caller's own.
	InDegrees(ids map[string]bool) map[string]int
	// Folders lists the folders directly holding at least one leaf, in
	// no order; FolderLeaves the leaves directly in folder dir, and
	// TagLeaves the leaves carrying tag, each in the tree's order.
	Folders() []string
	FolderLeaves(dir string) []LeafView
	TagLeaves(tag string) []LeafView
}

var _ TreeView = (*Snapshot)(nil)

// ViewOf is leaf n as a TreeView hands it out: n becomes the view's,
// and no one may change it afterwards.
func ViewOf(n *node.Node) LeafView { return LeafView{n} }

// Naming lists the paths of the snapshot's leaves whose relates_to or
// depends_on names an id keys holds (see TreeView.Naming).
func (s *Snapshot) Naming(keys map[string]bool) []string {
	var out []string
	for _, n := range s.t.Leaves {
		if Names(n, keys) {
			out = append(out, n.Path)
		}
	}
	return out
}
