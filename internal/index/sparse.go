package index

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// CheckedOut returns an error naming what is missing when git's sparse
// checkout left files of the knowledge base out of the work tree (git
// tracks them with the skip-worktree bit): the leaves there are then only
// part of the knowledge base, and generated files made or checked from
// them would drop the others. Nil when every tracked file of the knowledge
// base is checked out, outside git, or when git cannot say.
func CheckedOut(ctx context.Context, k *store.KB) error {
	if gitx.NoRepository(k.Root) || gitx.NotSparse(k.Root) {
		return nil
	}
	// Listing the files reads git's whole index, which is large in the
	// monorepos that use sparse checkouts, and only they need it.
	if on, err := gitx.Read(ctx, k.Root, "config", "--bool", "core.sparseCheckout"); err != nil || strings.TrimSpace(string(on)) != "true" {
		return nil
	}
	out, err := gitx.Read(ctx, k.Dir, "ls-files", "-t", "-z", "--full-name", "--", ".")
	if err != nil {
		return nil // not a work tree, or git missing or refusing: nothing to tell
	}
	var left []string
	for _, e := range strings.Split(string(out), "\x00") {
		if p, ok := strings.CutPrefix(e, "S "); ok {
			left = append(left, p)
		}
	}
	if len(left) == 0 {
		return nil
	}
	names := strings.Join(left[:min(3, len(left))], ", ")
	if len(left) > 3 {
		names += fmt.Sprintf(", and %d more", len(left)-3)
	}
	dir := filepath.ToSlash(k.Rel(k.Dir))
	return fmt.Errorf("%s is only partly checked out: git's sparse checkout leaves out %d of its files (%s), so what is read from every leaf (the generated files, kk lint, kk check) cannot be checked or written here; run `git sparse-checkout add %s` first", dir, len(left), names, dir)
}
