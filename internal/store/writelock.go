package store

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"

	"github.com/kk-project/kk/internal/node"
)

// WithLock runs fn while holding the writer lock.
func (k *KB) WithLock(ctx context.Context, cmd string, fn func() error) error {
	if err := k.CheckContained(); err != nil {
		return err
	}
	l, err := k.WriterLock().Acquire(ctx, k.WriterWait(), cmd)
	if err != nil {
		return err
	}
	defer func() { _ = l.Release() }()
	return fn()
}

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
