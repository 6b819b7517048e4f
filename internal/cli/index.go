package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/githooks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
	"github.com/spf13/cobra"
)

func newIndexCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "index",
		Short: "Regenerate or check the generated ENTRY.md, GRAPH.md and index.md files",
	}
	cmd.AddCommand(newIndexRebuildCmd(app))
	return cmd
}

type indexRebuildOpts struct {
	check   bool
	stage   bool
	verbose bool
	commits []string
}

func newIndexRebuildCmd(app *App) *cobra.Command {
	var o indexRebuildOpts
	cmd := &cobra.Command{
		Use: "rebuild",
		Example: `  kk index rebuild
  kk index rebuild --check      # in CI: exit 1 when a generated file is stale`,
		Short: "Regenerate every index.md, ENTRY.md and GRAPH.md from the leaves",
		Long: `Regenerate nodes/**/index.md, nodes/index.md, ENTRY.md and GRAPH.md from the
leaves under nodes/, carrying the folder summaries of FOLDER_SUMMARIES.md.

The output is a pure function of the leaves and the summaries: two runs give
the same bytes, and a run with nothing to change writes no file. An index.md
left in a folder that no longer holds leaves is removed.

It lists the files it wrote (the first 10; --verbose lists them all, --json
always does) and says how many on stderr. A leaf kk cannot read (a note
written by hand, a leaf with a conflict) is left out of the generated files
with a warning naming its problems; --check writes nothing, lists the files
that differ and the leaves it cannot read, and exits 1 when there is any
(use it in CI). It also lists ("hidden") each file of the knowledge base
that changed while git is told to pass over it (git update-index
--skip-worktree or --assume-unchanged): no commit takes the change, so
clones get the old file. --stage runs git add on the files it wrote, and
on every generated file git still holds in conflict (a folder's index.md
one side of a merge deleted and the other changed: git calls no merge
driver for that) or that differs from what is staged.

--commits RANGE regenerates the files of each commit of a git range
instead ("main..HEAD", "HEAD^!"), each from that commit's own leaves read
from git, and makes again each commit whose files lag (author, dates and
message kept) with the commits after it; HEAD, the range's newest commit,
moves to the result. kk's git hooks run it after a merge, a rebase or a
cherry-pick, whose merge driver kept one side of a generated file, so that
every commit's generated files match its leaves. A link of a leaf that
leads to where a leaf was before it moved (one side moved it, the other
linked a leaf to it) is brought up to date in the same commit: a
generated Related block is rendered again from the edges, a link a person
typed is pointed at where the leaf is, in its own form, and named.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.check && o.stage {
				return usagef("--check and --stage exclude each other")
			}
			if len(o.commits) > 0 && (o.check || o.stage) {
				return usagef("--commits excludes --check and --stage")
			}
			return runIndexRebuild(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVar(&o.check, "check", false, "write nothing; exit 1 if any generated file is out of date")
	cmd.Flags().BoolVar(&o.stage, "stage", false, "git add the files written")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every file written or stale, not only the first 10")
	cmd.Flags().StringArrayVar(&o.commits, "commits", nil, "regenerate the files of each commit of this git range up to HEAD, rewriting those that lag (repeatable)")
	return cmd
}

func runIndexRebuild(ctx context.Context, app *App, o indexRebuildOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	if len(o.commits) > 0 {
		return runRegenerateCommits(ctx, app, k, o.commits)
	}
	if o.check {
		app.skipsReported = true // the check lists them
	} else if err := index.CheckedOut(ctx, k); err != nil {
		// Generated files written from part of the leaves would drop
		// the others (Check refuses the same way).
		return err
	}
	res, err := txn.Rebuild(ctx, k, txn.Meta{Source: "cli", Command: app.Command}, txn.RebuildOptions{Check: o.check, Stage: o.stage})
	if err != nil {
		return err
	}
	stale := len(res.Changed)+len(res.Removed) > 0
	unreadable := o.check && len(res.Skipped) > 0
	// Files git is told to pass over (skip-worktree, assume-unchanged)
	// that changed: kk keeps them up to date here, but no commit takes
	// the change, so every clone gets the old ones.
	var hidden []map[string]string
	if o.check {
		for _, h := range gitx.HiddenChanges(ctx, k.Dir) {
			hidden = append(hidden, map[string]string{"path": k.Rel(filepath.Join(k.Dir, filepath.FromSlash(h.Path))), "flag": h.Flag})
		}
	}
	if app.JSON {
		out := map[string]any{"check": o.check, "up_to_date": !o.check || !stale && !unreadable && len(hidden) == 0, "result": res}
		if len(hidden) > 0 {
			out["hidden"] = hidden
		}
		if err := app.printJSON(out); err != nil {
			return err
		}
	} else {
		verb, removed := "wrote", "removed"
		if o.check {
			verb, removed = "stale", "stale"
		}
		var lines [][2]string
		for _, f := range res.Changed {
			lines = append(lines, [2]string{verb, f})
		}
		for _, f := range res.Removed {
			lines = append(lines, [2]string{removed, f})
		}
		shown, more := capList(lines, o.verbose)
		for _, l := range shown {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", l[0], l[1])
		}
		unlisted := ""
		if more > 0 {
			unlisted = fmt.Sprintf("; %d more not listed (--verbose lists them all)", more)
		}
		if o.check {
			for _, s := range res.Skipped {
				for _, p := range s.Problems {
					fmt.Fprintf(app.IO.Out, "unreadable\t%s\t%s\n", s.Path, p)
				}
			}
		}
		for _, h := range hidden {
			fmt.Fprintf(app.IO.Out, "hidden\t%s\tgit passes over its changes (%s): kk keeps it up to date here, but no commit takes them; run `git update-index --no-%s -- %s` and commit it\n", h["path"], h["flag"], h["flag"], h["path"])
		}
		if len(hidden) > 0 {
			fmt.Fprintf(app.IO.Err, "kk: git is told to pass over the changes of %d file(s) of the knowledge base (git update-index --skip-worktree or --assume-unchanged), so the commits hold old copies\n", len(hidden))
		}
		if unreadable {
			fmt.Fprintf(app.IO.Err, "kk: %d leaf file(s) cannot be read and are left out of the generated files; fix them (`kk lint` explains, `kk node adopt` fills in a note written by hand)\n", len(res.Skipped))
		}
		switch {
		case o.check && stale && githooks.RebaseWaits(ctx, k):
			fmt.Fprintf(app.IO.Err, "kk: %d generated file(s) are out of date%s\n", len(lines), unlisted)
			fmt.Fprintf(app.IO.Err, "kk: a rebase is in progress: kk's post-rewrite hook regenerates the generated files of the rebased commits when it ends (until then kk's merge driver keeps one side of them); run `git rebase --continue`, and check the commits once the rebase is done\n")
		case o.check && stale:
			fmt.Fprintf(app.IO.Err, "kk: %d generated file(s) are out of date%s; run `kk index rebuild` and commit the result\n", len(lines), unlisted)
		case o.check && !unreadable && len(hidden) == 0:
			app.notef("index is up to date (%d node(s), %d folder(s))", res.NodeCount, res.Folders)
		case o.check:
			// the leaves it cannot read are listed and counted above
		case !stale:
			app.notef("generated index/graph already match nodes/, nothing to do (%d node(s))", res.NodeCount)
		default:
			app.notef("regenerated %d file(s) from %d node(s)%s", len(lines), res.NodeCount, unlisted)
		}
		if len(res.Unmerged) > 0 {
			app.notef("git still marks %s as in conflict: kk generated the files again from the merged notes; run `kk index rebuild --stage` to mark them resolved, then `%s`", listSome(res.Unmerged), concludeCommand(ctx, k.Root))
		}
		if len(res.MissingSummaries) > 0 && !o.check {
			app.warnf("%d folder(s) have no summary in FOLDER_SUMMARIES.md: %s", len(res.MissingSummaries), listSome(res.MissingSummaries))
		}
	}
	if o.check && (stale || unreadable || len(hidden) > 0) {
		return &SilentError{Code: ExitFailure}
	}
	return nil
}

// concludeCommand is the git command that concludes the operation
// stopped on conflicts in dir's repository: a rebase, a cherry-pick, a
// revert, else a merge (git commit).
func concludeCommand(ctx context.Context, dir string) string {
	out, err := gitx.Read(ctx, dir, "rev-parse", "--absolute-git-dir")
	if err != nil {
		return "git commit"
	}
	gitDir := strings.TrimSpace(string(out))
	for _, c := range []struct{ file, cmd string }{{"rebase-merge", "git rebase --continue"}, {"rebase-apply", "git rebase --continue"},
		{"CHERRY_PICK_HEAD", "git cherry-pick --continue"}, {"REVERT_HEAD", "git revert --continue"}} {
		if _, err := os.Stat(filepath.Join(gitDir, c.file)); err == nil {
			return c.cmd
		}
	}
	return "git commit"
}

// listSome joins the first five items and says how many more there are.
func listSome(items []string) string {
	const n = 5
	if len(items) <= n {
		return strings.Join(items, ", ")
	}
	return fmt.Sprintf("%s and %d more", strings.Join(items[:n], ", "), len(items)-n)
}

func runRegenerateCommits(ctx context.Context, app *App, k *store.KB, revs []string) error {
	app.skipsReported = true // the leaves of past commits are not the work tree's
	res, err := githooks.RegenerateCommits(ctx, k, revs, app.Command)
	if err != nil {
		return err
	}
	if app.JSON {
		return app.printJSON(res)
	}
	for _, c := range res.Commits {
		fmt.Fprintf(app.IO.Out, "rewrote\t%s\t%s\t%s\n", c.Old, c.New, strings.Join(c.Files, " "))
	}
	if len(res.Commits) > 0 {
		app.notef("regenerated the index files of %d commit(s); HEAD is now %s", len(res.Commits), res.Head)
		// A merge that leaves notes out (two branches that each added
		// one with the same id) says so now, not at the next search.
		if len(res.Skipped) > 0 {
			app.warnf("HEAD holds %d leaf file(s) kk cannot read, left out of its generated files (`kk lint` explains; `kk node adopt <file>` gives a copied note an id of its own):", len(res.Skipped))
			for _, sl := range res.Skipped {
				fmt.Fprintf(app.IO.Err, "  %s: %s\n", sl.File, sl.Problem)
			}
		}
	}
	// Links a person typed are theirs: each one changed is named.
	for _, l := range res.Relinked {
		app.notef("%s:%d: relinked %s to %s, where the note is since it moved", l.File, l.Line, l.Target, l.To)
	}
	return nil
}
