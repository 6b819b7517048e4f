package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/githooks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/install"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/store"
	"github.com/spf13/cobra"
)

type doctorOpts struct {
	harness string // --harness: check only this harness
	fix     bool   // --fix: repair what can be repaired, then check
	verbose bool   // --verbose: every detail line of a check
}

func newDoctorCmd(app *App) *cobra.Command {
	var o doctorOpts
	cmd := &cobra.Command{
		Use: "doctor",
		Example: `  kk doctor
  kk doctor --harness claude`,
		Short: "Check the health of the knowledge base",
		Long: `Check the knowledge base: git on PATH, the installed-version record and
whether it matches this kk, kk's lines in .ai/kenkeep/.gitignore, .kkignore,
config.yaml, the freshness and size of ENTRY.md, the validity of every leaf,
leftover kenkeep v2 leaves, kk_derived_from references, tags with stray
whitespace and blank folder summaries (hygiene, as kk lint reports them),
the writer lock, cache files older kk versions left under .state/, and
interrupted writes.

In a git work tree, that no ignore rule of git's (a .gitignore, the
person's core.excludesFile) matches the knowledge base's files, which would
leave every note out of every commit (git-ignored, an error; kk init warns
too); kk's merge driver for the generated files (named in
.ai/kenkeep/.gitattributes, defined in the repository's git config), and
kk's git hooks (post-applypatch, post-checkout, post-commit,
post-index-change, post-merge, post-rewrite): present in
the folder git runs hooks from, executable (git skips a hook without the
executable bit, an error) and up to date; and, when core.hooksPath moves
that folder, no kk hooks left behind in .git/hooks where git no longer
looks. In a repository git refuses to work in (one owned by another user:
"detected dubious ownership"), a warning that says so and gives git's fix
(git config --global --add safe.directory <folder>) instead.

Then, for each harness kk is installed into (as recorded in
.ai/kenkeep/.state/installed-version), or only the one --harness names, the
harness's own checks, named <harness>/<check>: kk's hooks and skills are in
place and up to date, the harness's program is on PATH, its hooks are
trusted or enabled where that can be seen, and the known limits of the
platform (which are warnings). Then kk's block in AGENTS.md. Last, when
kk's bash completion is set up (an installed completion file, or a kk
completion bash line in ~/.bashrc), that the bash-completion package is
installed (a warning when it is not).

Each check prints ok, warn or error (✓, ! and ✗ on a terminal) with a fix,
and the files or references behind it: the first 10, then how many more;
--verbose lists them all, and --json always does. Exits 1 when any check is
an error; warnings exit 0.

--fix first repairs what kk can repair by itself, saying what it did on
stderr, then checks: it adopts the notes written by hand under nodes/ (kk
node adopt), points the links to a note moved by hand (git mv) at its new
path (kk lint's dead-link: links a person wrote are rewritten in place, in
the form they had, and generated Related blocks rendered again; a link to a
note deleted outright is left for a person), removes the cache files older kk versions left under .state/
(the branch index holds what they held), and in a git work tree sets up
kk's merge driver for the
generated files (.ai/kenkeep/.gitattributes and the driver in the
repository's git config).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDoctor(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harness, "harness", "", "check only this harness (a harness id)")
	cmd.Flags().BoolVarP(&o.verbose, "verbose", "v", false, "list every file or reference behind a check, not only the first 10")
	cmd.Flags().BoolVar(&o.fix, "fix", false, "repair what kk can (adopt notes written by hand, relink links to notes moved by hand, remove cache files of older kk versions, set up the merge driver), then check")
	return cmd
}

func runDoctor(ctx context.Context, app *App, o doctorOpts) error {
	reg, err := app.harnessFlag(o.harness)
	if err != nil {
		return err
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	app.skipsReported = true // the report names every leaf kk cannot read
	if o.fix {
		if err := doctorFix(ctx, app, k); err != nil {
			return err
		}
	}
	rep, err := checks.Doctor(ctx, k, checks.DoctorOptions{Version: releaseVersion(), OllamaURL: checks.OllamaURL()})
	if err != nil {
		return err
	}
	for _, c := range githooks.Doctor(ctx, k) {
		rep.Add(c)
	}
	for _, c := range install.Doctor(ctx, k, reg, o.harness) {
		rep.Add(c)
	}
	if o.harness == "" {
		for _, c := range checks.CompletionDoctor(checks.CompletionEnv{Home: app.Getenv("HOME"), XDGDataHome: app.Getenv("XDG_DATA_HOME"), SystemRoot: "/"}) {
			rep.Add(c)
		}
	}
	if app.JSON {
		if err := app.printJSON(rep); err != nil {
			return err
		}
	} else {
		marks := map[string]string{checks.DoctorOK: "ok", checks.DoctorWarn: "warn", checks.DoctorError: "error"}
		if app.IO.OutTTY {
			c := app.stdoutStyle()
			marks = map[string]string{checks.DoctorOK: c.green("✓"), checks.DoctorWarn: c.yellow("!"), checks.DoctorError: c.red("✗")}
		}
		w := app.IO.Out
		for _, c := range rep.Checks {
			fmt.Fprintf(w, "%s %s: %s\n", marks[c.Level], c.Name, c.Message)
			details := c.Details
			if !o.verbose && len(details) > lintItemLines {
				details = details[:lintItemLines]
			}
			for _, d := range details {
				fmt.Fprintf(w, "    %s\n", d)
			}
			if more := len(c.Details) - len(details); more > 0 {
				fmt.Fprintf(w, "    %d more; --verbose lists them all\n", more)
			}
			if c.Level != checks.DoctorOK && c.Fix != "" {
				fmt.Fprintf(w, "    fix: %s\n", c.Fix)
			}
		}
		fmt.Fprintf(w, "%d ok, %d warning(s), %d error(s)\n", rep.OK, rep.Warnings, rep.Errors)
	}
	if rep.Errors > 0 {
		return &SilentError{Code: ExitFailure}
	}
	return nil
}

// relinkAll points the links to a leaf's old path (a note moved by hand)
// at its new one.
func relinkAll(ctx context.Context, app *App, k *store.KB) error {
	res, err := reorg.Relink(ctx, k, app.Command)
	if errors.Is(err, store.ErrNeedsMigration) {
		return nil // kk migrate okf-v3 first; the checks say so
	}
	if err != nil {
		return err
	}
	for _, l := range res.Links {
		app.notef("fixed: relinked %s:%d from %s to %s", l.File, l.Line, l.From, l.To)
	}
	return nil
}

// doctorFix repairs what kk doctor --fix repairs.
func doctorFix(ctx context.Context, app *App, k *store.KB) error {
	if err := adoptAll(ctx, app, k); err != nil {
		return err
	}
	if err := relinkAll(ctx, app, k); err != nil {
		return err
	}
	removed, err := index.RemoveObsoleteState(k)
	if err != nil {
		return err
	}
	if len(removed) > 0 {
		app.notef("fixed: removed %d cache file(s) of an older kk version under %s", len(removed), k.Rel(k.StateDir()))
	}
	if changed, err := k.WriteGitattributes(); err != nil {
		return err
	} else if changed {
		app.notef("fixed: %s sends the generated files to kk's merge driver", k.Rel(k.GitattributesPath()))
	}
	if !gitx.InWorkTree(ctx, k.Root) {
		return nil
	}
	changed, err := githooks.SetUpMergeDriver(ctx, k)
	if err != nil {
		return err
	}
	if changed {
		app.notef("fixed: the repository's git config defines kk's merge driver (merge.%s)", githooks.MergeDriver)
	}
	return nil
}
