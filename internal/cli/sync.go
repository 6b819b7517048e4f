package cli

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

type syncOpts struct {
	branch string
}

func newSyncCmd(app *App) *cobra.Command {
	var o syncOpts
	cmd := &cobra.Command{
		Use: "sync",
		Example: `  kk sync
  kk sync --branch main`,
		Short: "Bring the branch's search index up to date with the tree",
		Long: `Bring the derived search index of a branch (.ai/kenkeep/.state/branches/
<branch>/index.db) up to date with the leaves under nodes/ and with the
files the extractors read, then print what the sync did.

The extractors (docs/extractors.md) read typed entities from markdown
documents in the configured docs folders (default docs/adr,
docs/requirements and docs/scenarios) and from symbol manifests (default
.ai/kenkeep/symbols.json and .ai/kenkeep/symbols.yaml); config.yaml's
extractors setting names others. Their entities and edges carry the file
they came from as provenance. A malformed file is listed as skipped and
its entities are left out; an extracted id that a leaf also has is left out
too (the tree wins) and listed as skipped.

The branch is the checked out one (the default branch outside a git work
tree) unless --branch names another. A branch without an index starts from
a copy of the default branch's index, so only what differs is read; after
that the two evolve independently. Leaves whose size and modification time
did not change are not read again. Leaves that cannot be parsed are left
out of the index and listed as skipped; they do not make the sync fail.

The index is derived: deleting .ai/kenkeep/.state/branches/ loses nothing.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := checkBranchFlag(cmd, o.branch); err != nil {
				return err
			}
			return runSync(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.branch, "branch", "", "sync this branch's index (default: the current branch)")
	return cmd
}

// checkBranchFlag refuses an empty or blank --branch.
func checkBranchFlag(cmd *cobra.Command, branch string) error {
	if cmd.Flags().Changed("branch") && strings.TrimSpace(branch) == "" {
		return usagef("--branch needs a branch name")
	}
	return nil
}

// indexBranch returns the branch an index command works on: the one named
// by --branch, else the current one.
func indexBranch(ctx context.Context, k *store.KB, flag string) (string, error) {
	if flag != "" {
		return flag, knownBranch(ctx, k, flag)
	}
	return index.CurrentBranch(ctx, k)
}

// knownBranch refuses a --branch that names no branch of the repository
// (a typo): an index made for it would hold the work tree's leaves under a
// name no checkout has, until kk gc deletes it. The current branch, unborn
// in a repository without commits, and every local branch are known.
// Outside a git work tree the index names are kk's own, and any is taken.
func knownBranch(ctx context.Context, k *store.KB, name string) error {
	if name == "" || gitx.NoRepository(k.Root) || !gitx.InWorkTree(ctx, k.Root) {
		return nil
	}
	if cur, err := index.CurrentBranch(ctx, k); err == nil && cur == name {
		return nil
	}
	branches, err := gitx.LocalBranches(ctx, k.Root)
	if err != nil {
		return err
	}
	if slices.Contains(branches, name) {
		return nil
	}
	return usagef("--branch %q: the repository has no branch of that name; `git branch` lists them", name)
}

func runSync(ctx context.Context, app *App, o syncOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	branch, err := indexBranch(ctx, k, o.branch)
	if err != nil {
		return err
	}
	st, err := index.Sync(ctx, k, branch)
	if err != nil {
		return err
	}
	embedded, embeddings, err := index.SyncEmbeddings(ctx, k, branch)
	if err != nil {
		return err
	}
	if st.Skipped == nil {
		st.Skipped = []index.Problem{}
	}
	if app.JSON {
		out := map[string]any{
			"branch":    branch,
			"leaves":    st.Leaves,
			"added":     st.Added,
			"updated":   st.Updated,
			"touched":   st.Touched,
			"removed":   st.Removed,
			"unchanged": st.Unchanged,
			"extracted": st.Extracted,
			"skipped":   st.Skipped,
		}
		if embeddings {
			out["embedded"] = embedded
		}
		return app.printJSON(out)
	}
	leafSkips := 0
	for _, p := range st.Skipped {
		if p.Extractor == "" {
			leafSkips++
		}
	}
	x := st.Extracted
	fmt.Fprintf(app.IO.Out, "synced index of branch %s: %d leaves (%d added, %d updated, %d touched, %d removed, %d unchanged, %d skipped)\n",
		branch, st.Leaves, st.Added, st.Updated, st.Touched, st.Removed, st.Unchanged, leafSkips)
	fmt.Fprintf(app.IO.Out, "extracted: %d entities, %d edges from %d files (%d added, %d updated, %d touched, %d removed, %d unchanged, %d skipped)\n",
		x.Entities, x.Edges, x.Sources, x.Added, x.Updated, x.Touched, x.Removed, x.Unchanged, len(st.Skipped)-leafSkips)
	if embeddings {
		fmt.Fprintf(app.IO.Out, "embeddings: %d node(s) embedded\n", embedded)
	}
	for _, p := range st.Skipped {
		if p.Extractor == "" {
			fmt.Fprintf(app.IO.Out, "skipped\t%s\t%s\n", p.Path, p.Msg)
		} else {
			fmt.Fprintf(app.IO.Out, "skipped\t%s\t%s: %s\n", p.Path, p.Extractor, p.Msg)
		}
	}
	return nil
}
