package cli

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/githooks"
)

// newGitMergeRedirectsCmd is the command git runs as kk's merge driver of
// nodes/.redirects.json (merge.kk-redirects.driver, which kk init and kk
// doctor --fix define): not one for people, so hidden.
func newGitMergeRedirectsCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "git-merge-redirects BASE OURS THEIRS",
		Hidden: true,
		Short:  "Merge nodes/.redirects.json for git (kk's merge driver)",
		Long: `Merge three versions of the ledger nodes/.redirects.json (the ids
kk rebalance move's split-leaf retired) entry by entry, and write the
result to OURS. Git runs it as the merge driver kk-redirects, which kk init
and kk doctor --fix define; two branches that each split a leaf then merge
without a conflict. Both sides changing one entry differently is an error,
and the driver's command falls back to git merge-file, which leaves
conflict markers.`,
		Example: `  git config merge.kk-redirects.driver 'kk git-merge-redirects %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B'`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return githooks.MergeRedirects(args[0], args[1], args[2])
		},
	}
}

// newGitMergeSummariesCmd is the command git runs as kk's merge driver of
// FOLDER_SUMMARIES.md (merge.kk-summaries.driver): hidden, as
// git-merge-redirects.
func newGitMergeSummariesCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "git-merge-summaries BASE OURS THEIRS",
		Hidden: true,
		Short:  "Merge FOLDER_SUMMARIES.md for git (kk's merge driver)",
		Long: `Merge three versions of FOLDER_SUMMARIES.md folder by folder and write
the file rendered from the result to OURS. Git runs it as the merge driver
kk-summaries, which kk init and kk doctor --fix define; two branches that
each summarized a folder then merge with both summaries. Both sides
changing one folder's summary differently is an error, and the driver's
command falls back to git merge-file, which leaves conflict markers in
that folder's line.`,
		Example: `  git config merge.kk-summaries.driver 'kk git-merge-summaries %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B'`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return githooks.MergeSummaries(args[0], args[1], args[2])
		},
	}
}

// newGitResolveVersionsCmd is the command kk's post-index-change hook runs
// when git stopped a merge, a rebase, a cherry-pick or a revert on
// conflicts: hidden, as the merge drivers.
func newGitResolveVersionsCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:    "git-resolve-versions",
		Hidden: true,
		Short:  "Resolve conflicts git left only in notes' kk_version (for kk's git hooks)",
		Long: `Resolve, in the notes git left unmerged, the conflicts that lie only in
kk_version, the counter kk keeps in each note's front matter: two people who
each changed a different part of one note with kk both bumped it, and git
stops on that line, which neither of them wrote. Such a note takes the
higher of the two versions and one more and is staged (git add); each is
printed as "path<TAB>version". A note with any other conflict is left as
git left it. kk's post-index-change hook runs it when git stops on
conflicts.`,
		Example: `  kk git-resolve-versions    # in a merge git stopped on a conflict in kk_version`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			k, err := app.findKB()
			if err != nil {
				return err
			}
			res, err := githooks.ResolveVersionConflicts(cmd.Context(), k)
			for _, r := range res {
				fmt.Fprintf(app.IO.Out, "%s\t%d\n", r.Path, r.Version)
			}
			return err
		},
	}
}

// newGitMergeGeneratedCmd is the command kk's merge driver of the
// generated files (merge.kk-generated.driver) runs: hidden, as
// git-merge-redirects.
func newGitMergeGeneratedCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:    "git-merge-generated BASE OURS THEIRS PATH",
		Hidden: true,
		Short:  "Bring a person's words in a generated file over a merge (kk's merge driver)",
		Long: `Keep, in OURS, what a person wrote in THEIRS of a file kk generates
(PATH, from the work tree's top folder): ENTRY.md's front-matter summary,
merged as git merges a line, and a note a person named index.md, which
replaces our generated index. Everything else in OURS is left as it is:
kk's git hooks regenerate the file after the merge. Git runs it from the
merge driver kk-generated, which kk init and kk doctor --fix define, and
which keeps OURS where kk is not found or fails. When both sides changed
the summary or the note differently, OURS stays and stderr says what
theirs held (a note is copied under .state/hand-edits/).`,
		Example: `  git config merge.kk-generated.driver 'kk git-merge-generated %O %A %B %P; true'`,
		Args:    cobra.ExactArgs(4),
		RunE: func(cmd *cobra.Command, args []string) error {
			note, err := githooks.MergeGenerated(args[0], args[1], args[2], args[3], app.Now())
			if note != "" {
				fmt.Fprintln(app.IO.Err, note)
			}
			return err
		},
	}
}

// newGitMergeInstalledCmd is the command git runs as kk's merge driver of
// .state/installed-version (merge.kk-installed.driver): hidden, as
// git-merge-redirects.
func newGitMergeInstalledCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "git-merge-installed BASE OURS THEIRS",
		Hidden: true,
		Short:  "Merge .state/installed-version for git (kk's merge driver)",
		Long: `Merge three versions of .state/installed-version, the record of the kk
that set the knowledge base up and the coding agents it is installed into,
and write the result to OURS: the harnesses as a set (one a side added is
in, one a side removed is out), installed_at and version the later of the
two. Git runs it as the merge driver kk-installed, which kk init and kk
doctor --fix define; two branches on which kk was installed into different
agents then merge with both. Both sides changing kk_command differently is
an error, and the driver's command falls back to git merge-file, which
leaves conflict markers.`,
		Example: `  git config merge.kk-installed.driver 'kk git-merge-installed %O %A %B || git merge-file -L ours -L base -L theirs %A %O %B'`,
		Args:    cobra.ExactArgs(3),
		RunE: func(cmd *cobra.Command, args []string) error {
			return githooks.MergeInstalled(args[0], args[1], args[2])
		},
	}
}
