package index

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// RemovedLeaf says where the leaf of id went when a person removed its
// file by hand (rm or git rm, committed or not): "<file> is deleted in
// the work tree", or "<file> was removed in commit <hash>", the file
// relative to the root; "" when git knows of no such file (outside git
// included). kk check and kk lint say it of an edge to the id, with
// `kk node delete <id>`, which finishes the deletion.
func RemovedLeaf(ctx context.Context, k *store.KB, id string) string {
	nodes := filepath.ToSlash(k.Rel(k.NodesDir()))
	name := store.IDKey(id) + ".md"
	if f := gitx.DeletedSinceHead(ctx, k.Root, nodes, name); f != "" {
		return f + " is deleted in the work tree"
	}
	if commit, f, _ := gitx.RemovedFile(ctx, k.Root, nodes, name); commit != "" {
		return fmt.Sprintf("%s was removed in commit %.12s", f, commit)
	}
	return ""
}
