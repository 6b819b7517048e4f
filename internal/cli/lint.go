package cli

import (
	"context"
	"fmt"

	"github.com/kk-project/kk/internal/checks"
	"github.com/spf13/cobra"
)

// lintItemLines is how many problems of one rule lint lists without
// --verbose.
const lintItemLines = 10

type lintOpts struct {
	verbose bool
}

func newLintCmd(app *App) *cobra.Command {
	var o lintOpts
	cmd := &cobra.Command{
		Use: "lint",
		Example: `  kk lint
  kk lint --quiet               # counts only
  kk lint --json`,
		Short: "Check the knowledge tree for broken edges and links, naming, folder and tag problems",
		Long: `Check the knowledge tree and report every problem with the rule it breaks
and how to fix it. Lint reads only.

First it checks that nodes/ is a conforming OKF bundle (okf-conformance):
nodes/index.md declares okf_version '0.1' or '0.2' and nothing else, other
index.md files have no front matter, and every other document has a type.
If that fails, nothing else is reported. Then every leaf must be valid
(invalid-leaf, needs-migration for kenkeep v2 leaves), and the tree is
checked for dangling-edge, redirected-edge, slug-id-mismatch,
missing-folder-index, empty-folder, folder-case-collision (two folders whose
paths differ only in case, one folder on macOS and Windows, or in how their
accented letters are encoded, one folder on macOS: an error),
folder-name (a folder made by hand with a name a Windows clone cannot check
out, a device name such as aux, one ending with a dot or a space, one
holding : * ? " < > | or a control character, or one that is not UTF-8:
an error; or holding a space, which every link to it must escape),
tag-near-duplicate, tag-whitespace, empty-summary, missing-folder-summary,
orphan, stale-index and dead-link. A
*.md under nodes/ that is not a regular file (a FIFO, a device) is never
opened and is reported as irregular-file. A file under nodes/ whose name
does not end in .md (a note saved as note.txt, or with no extension) is
read by no command and is reported as stray-file, a finding: rename a note
to .md, move any other file out of nodes/ (dotfiles, index.md and the
files editors leave are not reported). A marker line of a generated
Related or Citations block left without its partner by a hand edit (the
end line deleted, or the start line) is reported as lone-marker, a
finding: kk reads the rest of the old block as the note's text and writes
its own block beside it. Text of a note that reads otherwise than it
shows (Unicode tag characters, which show as nothing and which a model
reads as the letters they shadow, outside a subdivision flag; in a title,
description or tag also a control or bidirectional control character),
which kk's writes refuse but a note that came by git may hold, is
reported as hidden-text, an error naming the field or the line. A leaf
that holds an id nodes/.redirects.json
retired (a note deleted or renamed, then restored by hand: git checkout,
git revert) is reported as retired-id, an error naming the ledger's entry:
give the note a new id with kk node rename, or remove the entry to make
the id its own again.
A file named as git mergetool names its temporaries beside a conflicted
note (<name>_BASE_<pid>.md, _LOCAL_, _REMOTE_, _BACKUP_) that kk skips (a
copy of the note, id and all, or empty) is reported as
merge-tool-leftover, an error saying to remove it, not as a copy to
adopt; the backup <name>.md.orig it keeps is a stray-file saying the
same.

dead-link is a markdown link from a leaf to a path under nodes/ where there
is no file, as a note moved by hand (git mv) leaves behind: it names the
line of the link and, when the leaf it named still exists (its id, the
link's file name, at another path, or a successor in nodes/.redirects.json),
where it is now; kk doctor --fix then relinks it. A link a person wrote is
an error; one of the generated Related block, rendered from the edges, a
finding (kk check fails on both).

Stdout gets one line per problem, "<level> <rule> <file>[:<line>]: <message>
(fix: <fix>)", errors and findings alike, the first 10 of each rule and then how
many more; --verbose lists them all, and --json prints every item. stderr
gets the totals. With --quiet, stdout gets one count line per rule with
problems instead ("<rule> <level> <n>", tab-separated). Exits 1 when any
error is found; findings alone exit 0.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runLint(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every problem, not only the first 10 of each rule")
	return cmd
}

func runLint(ctx context.Context, app *App, o lintOpts) error {
	k, err := app.KB()
	if err != nil {
		return err
	}
	app.skipsReported = true // the report names every leaf kk cannot read
	rep, err := checks.Lint(ctx, k)
	if err != nil {
		return err
	}
	if app.JSON {
		if err := app.printJSON(rep); err != nil {
			return err
		}
	} else {
		printLint(app, rep, o.verbose)
	}
	if rep.Errors > 0 {
		return &SilentError{Code: ExitFailure}
	}
	return nil
}

func printLint(app *App, rep *checks.LintReport, verbose bool) {
	type count struct {
		rule, level string
		n           int
	}
	var counts []count
	for _, it := range rep.Items {
		if len(counts) > 0 && counts[len(counts)-1].rule == it.Rule {
			counts[len(counts)-1].n++
			continue
		}
		counts = append(counts, count{rule: it.Rule, level: it.Level, n: 1})
	}
	if app.Quiet {
		for _, c := range counts {
			fmt.Fprintf(app.IO.Out, "%s\t%s\t%d\n", c.rule, c.level, c.n)
		}
		return
	}
	shown := map[string]int{}
	for _, it := range rep.Items {
		if shown[it.Rule]++; !verbose && shown[it.Rule] > lintItemLines {
			continue
		}
		file := it.File
		if it.Line > 0 {
			file = fmt.Sprintf("%s:%d", file, it.Line)
		}
		fmt.Fprintf(app.IO.Out, "%s %s %s: %s (fix: %s)\n", it.Level, it.Rule, file, it.Message, it.Fix)
	}
	for _, c := range counts {
		if more := c.n - lintItemLines; more > 0 && !verbose {
			fmt.Fprintf(app.IO.Out, "%s %s: %d more; --verbose lists them all\n", c.level, c.rule, more)
		}
	}
	if rep.Errors == 0 && rep.Findings == 0 {
		app.notef("lint found no problems")
		return
	}
	app.notef("lint found %d error(s) and %d finding(s)", rep.Errors, rep.Findings)
	if rep.ConformanceOnly {
		app.notef("lint checked only that every document under nodes/ is OKF: fix the error(s) above and run `kk lint` again to check the leaves, edges, folders and tags")
	}
}
