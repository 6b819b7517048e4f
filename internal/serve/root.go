package serve

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// URLFile is where a running kk serve records the URL it listens on,
// under .ai/kenkeep/.state/.
const URLFile = "serve.url"

// Announce records url in .state/serve.url, for clients and scripts that
// look for the running server; the returned function removes it again.
func Announce(k *store.KB, url string) (func(), error) {
	p := filepath.Join(k.StateDir(), URLFile)
	if err := atomicfile.Write(p, []byte(url+"\n"), 0o644); err != nil {
		return nil, err
	}
	return func() { _ = os.Remove(p) }, nil
}

// BootstrapSubject is the subject of the commit that creates a knowledge
// repository for kk serve.
const BootstrapSubject = "init: bootstrap knowledge base"

// Bootstrap makes root ready to serve: a folder that does not exist or is
// empty becomes a git repository with a knowledge base (kk init) and one
// commit; a git work tree without a knowledge base gets one, committed
// alone; a work tree with one is left as it is. A folder that holds
// anything and is not in a git work tree is refused. It returns the
// knowledge base.
func Bootstrap(ctx context.Context, root string, opts store.InitOptions) (*store.KB, error) {
	entries, err := os.ReadDir(root)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(root, 0o755); err != nil {
			return nil, err
		}
	case err != nil:
		return nil, err
	}
	k := store.New(root)
	if !gitx.InWorkTree(ctx, k.Root) {
		if len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty and not in a git repository; kk serve keeps its notes in git: give it an empty folder, a new one, or a git repository", k.Root)
		}
		if _, err := gitx.Run(ctx, k.Root, "init", "-q", "-b", "main"); err != nil {
			return nil, err
		}
	}
	if k.Initialized() {
		return k, nil
	}
	res, err := txn.Init(ctx, k, opts)
	if err != nil {
		return nil, err
	}
	top, err := gitx.TopLevel(ctx, k.Root)
	if err != nil {
		return nil, err
	}
	prefix := ""
	if rel := store.RelTo(top, k.Root); rel != "." {
		prefix = rel + "/"
	}
	paths := []string{prefix + store.DirName}
	for _, p := range res.Created {
		if p == ".kkignore" {
			paths = append(paths, prefix+p)
		}
	}
	if _, err := gitx.CommitPaths(ctx, top, Author, BootstrapSubject, paths); err != nil {
		return nil, fmt.Errorf("committing the new knowledge base: %w", err)
	}
	return k, nil
}

// Share is the --push-every tick, run by the worker between jobs: fetch
// origin, replay the local commits onto it (a local job's lines win where
// both changed the same ones), bring the generated index files in step
// with the merged tree (one commit when they change), and push. Each
// failure is logged and left for the next tick; no job is lost, since
// every job is already a local commit.
func (b *Backend) Share(ctx context.Context) {
	top, prefix, err := b.git(ctx)
	if err != nil {
		b.log.Warn("sharing with origin skipped", "error", err)
		return
	}
	if !gitx.HasRemote(ctx, top, "origin") {
		b.log.Debug("no origin remote; nothing to push")
		return
	}
	branch, err := gitx.CurrentBranch(ctx, top)
	if err != nil || branch == "" {
		b.log.Warn("sharing with origin skipped: no current branch", "error", err)
		return
	}
	defer b.changed()
	// The rebase and the index files regenerated after it are one
	// transaction: no job writes between them.
	pulled := false
	res, err := txn.Update(ctx, b.k, txn.Meta{Actor: "kk serve", Source: "http", Command: "kk serve (pull --rebase)"}, func(tx *txn.Tx) error {
		if err := tx.Outside(func() error { return gitx.PullRebase(ctx, top, "origin", branch, "theirs") }); err != nil {
			return err
		}
		pulled = true
		tx.Regenerate()
		return nil
	})
	if err != nil && !pulled {
		b.log.Warn("fetching and rebasing onto origin failed; retried at the next tick", "branch", branch, "error", err)
		return
	}
	if err != nil {
		b.log.Warn("regenerating the index files after the rebase failed", "error", err)
		return
	}
	if res.Changed() {
		var paths []string
		for _, rel := range append(append([]string{}, res.Written...), res.Removed...) {
			paths = append(paths, repoPath(prefix, rel))
		}
		if _, err := gitx.CommitPaths(ctx, top, Author, "index: regenerate after rebasing onto origin/"+branch, paths); err != nil {
			b.log.Warn("committing the regenerated index files failed", "error", err)
			return
		}
	}
	if err := gitx.Push(ctx, top, "origin", branch); err != nil {
		b.log.Warn("pushing to origin failed; retried at the next tick", "branch", branch, "error", err)
		return
	}
	b.log.Info("pushed to origin", "branch", branch)
}
