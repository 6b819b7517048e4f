package store

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kk-project/kk/internal/node"
)

// ErrNeedsMigration is returned by writers when the tree still holds v2
// leaves: their folder summaries live in the old index.md files, which a
// rebuild would overwrite before `kk migrate okf-v3` could harvest them.
var ErrNeedsMigration = errors.New("the knowledge tree holds v2 leaves; run `kk migrate okf-v3` first")

func RequireV3(t *Tree) error {
	for _, n := range t.Leaves {
		if n.Format != node.SchemaVersion {
			return fmt.Errorf("%w (first one: %s)", ErrNeedsMigration, filepath.ToSlash(filepath.Join(DirName, "nodes", n.Path)))
		}
	}
	return nil
}
