package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/setup"
	"github.com/kk-project/kk/internal/store"
)

type initOpts struct {
	upgrade      bool
	harnesses    string
	harnessesSet bool // --harnesses was given (an empty value is an error)
	kkCommand    string
	noGitHooks   bool
}

func newInitCmd(app *App) *cobra.Command {
	var o initOpts
	cmd := &cobra.Command{
		Use:   "init",
		Short: "Create the knowledge base in this repository and install kk into coding agents",
		Long: `Create .ai/kenkeep/ with its settings, .gitignore block, README, generated
index files, folder summaries and installed-version record, and a .kkignore
at the repository root.

--harnesses installs kk into coding agents (a comma-separated list of
claude, codex, cursor, opencode, copilot, gemini): each harness gets kk's
hooks merged into its own settings files, the kk skills in its skill or
command format, and AGENTS.md gets a block between kenkeep's marker lines
<!-- >>> kenkeep:kk-index >>> --> and <!-- <<< kenkeep:kk-index <<< -->
telling every agent where the knowledge base is (a block kenkeep wrote,
or older kk between <!-- kk:start --> and <!-- kk:end -->, is replaced in
place). Text outside the block and the user's own settings are kept. The harnesses are
recorded in .ai/kenkeep/.state/installed-version, added to those already
there.

The hooks run "kk hook <event> --harness <id>", finding kk on PATH, so a
fresh clone needs only kk installed. --kk-command sets another command
(an absolute path, or one relative to the repository root); it is
recorded and used again by later runs, and changing it rewrites the hooks
of every installed harness.

A second run changes nothing. Existing settings, folder summaries, leaves and
.kkignore are never overwritten. --upgrade refreshes the generated
scaffolding (README, .gitignore block, installed version) of an existing
knowledge base and everything kk installed into the recorded harnesses,
and leaves user content alone.

In a git work tree, init also sets up merges of the generated files
(.ai/kenkeep/.gitattributes sends ENTRY.md, GRAPH.md and every index.md to
kk's merge driver, which the repository's git config defines) and installs
the git hooks post-applypatch, post-checkout, post-commit, post-index-change,
post-merge and post-rewrite into the folder git runs hooks from (core.hooksPath, else
.git/hooks), and says why: after a merge, a rebase, a cherry-pick or git am they
regenerate the generated files of each commit made from its own leaves, so
that merges never conflict on them (and those of the work tree once git
applied an autostash), and after a branch checkout or a merge they run "kk sync"
in the background, so the search index follows the branch. A hook already
there is kept as <name>.kk-chained and still runs first. git clone copies
neither, so in a teammate's clone the first kk command that writes sets
them up the same way, and says so. --no-git-hooks leaves the hooks and
the driver out, and records that in the repository's git config
(kk.githooks false), so that no later write sets them up; "kk uninstall
--git-hooks" removes them, puts the earlier hooks back and records the
same. Outside a git work tree they are skipped with a note.

It lists each file it created, updated or removed once. The record in
.ai/kenkeep/.state/installed-version (committed, in kenkeep's format) names
the kk release that set the knowledge base up and the day; a development
build records no version, so no build's stamp is committed.

The repository is --root, KK_ROOT, else the knowledge base the working
directory is in, else the top of the git work tree it is in (run from a
sub-folder, init sets up the repository; --root . sets up the sub-folder),
else the working directory.`,
		Example: `  kk init
  kk init --harnesses claude,codex
  kk init --upgrade
  kk init --no-git-hooks
  kk init --harnesses cursor --kk-command /opt/kk/bin/kk`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.harnessesSet = cmd.Flags().Changed("harnesses")
			if cmd.Flags().Changed("kk-command") && o.kkCommand == "" {
				return usagef("--kk-command needs a command, such as /usr/local/bin/kk")
			}
			return runInit(cmd.Context(), app, o)
		},
	}
	cmd.Flags().BoolVarP(&o.upgrade, "upgrade", "u", false, "refresh generated scaffolding and everything kk installed into the recorded harnesses")
	cmd.Flags().StringVar(&o.harnesses, "harnesses", "", "install kk into these coding agents (comma-separated harness ids)")
	cmd.Flags().StringVar(&o.kkCommand, "kk-command", "", "command the hooks run kk with (default: kk, found on PATH)")
	cmd.Flags().BoolVar(&o.noGitHooks, "no-git-hooks", false, "do not install kk's git hooks and merge driver")
	return cmd
}

func runInit(ctx context.Context, app *App, o initOpts) error {
	var named []harness.Adapter
	if o.harnessesSet {
		var err error
		if named, err = app.harnesses().Parse(o.harnesses); err != nil {
			return usagef("--harnesses: %v", err)
		}
	}
	if o.kkCommand != "" {
		if strings.TrimSpace(o.kkCommand) == "" || strings.ContainsAny(o.kkCommand, "\n\r") {
			return usagef("--kk-command %q: give the command on one line, such as /usr/local/bin/kk", o.kkCommand)
		}
		// The command is written into every harness's hook settings and
		// printed by kk doctor: no control character, no text that reads
		// otherwise than it runs.
		if msg := node.LineProblem(o.kkCommand); msg != "" {
			return fmt.Errorf("--kk-command %q: %s", o.kkCommand, msg)
		}
		if !o.harnessesSet && !o.upgrade {
			return usagef("--kk-command sets the command of harness hooks; give it with --harnesses or --upgrade")
		}
	}
	root := app.Root
	if root == "" {
		wd, err := app.Getwd()
		if err != nil {
			return err
		}
		root = initRoot(ctx, wd)
		if root != wd {
			app.notef("setting up %s, the top of this repository (kk init --root . sets up this folder instead)", root)
		}
	}
	if fi, err := os.Stat(root); err != nil || !fi.IsDir() {
		return fmt.Errorf("--root %s is not an existing folder", root)
	}
	// A bare repository or a .git folder has no work tree: notes put there
	// would never be committed, and git's own files would sit beside them.
	if gitx.InGitDir(ctx, root) {
		return fmt.Errorf("%s is inside a git repository's own folder (a bare repository, or .git), which has no work tree for %s; run kk init in a clone or work tree of the repository", root, store.DirName)
	}
	out, installErr := setup.Init(ctx, setup.Options{Root: root, Upgrade: o.upgrade, Registry: app.harnesses(), Harnesses: named,
		KKCommand: o.kkCommand, GitHooks: !o.noGitHooks, Version: releaseVersion(), Now: app.Now, Command: app.Command, Path: app.Getenv("PATH")})
	if out == nil {
		return installErr
	}
	// An ignore rule of git's that matches the knowledge base (.ai/ in a
	// .gitignore): every note would stay out of every commit.
	if msg, fix, ok := checks.GitIgnored(ctx, store.New(root)); ok && msg != "" {
		out.Warnings = append(out.Warnings, msg+"; "+fix)
	}
	if app.JSON {
		if err := app.printJSON(out); err != nil {
			return err
		}
		return installErr
	}
	for _, w := range out.Warnings {
		app.warnf("%s", w)
	}
	if out.GitHooksNote != "" && !app.Quiet {
		fmt.Fprintln(app.IO.Err, out.GitHooksNote)
	}
	if out.Unchanged && installErr == nil {
		fmt.Fprintf(app.IO.Out, "kk: knowledge base at %s is up to date; nothing changed\n", store.DirName)
		return nil
	}
	for _, l := range []struct {
		action string
		files  []string
	}{{"created", out.Created}, {"updated", out.Updated}, {"removed", out.Removed}} {
		for _, f := range l.files {
			fmt.Fprintf(app.IO.Out, "%s\t%s\n", l.action, f)
		}
	}
	if installErr != nil {
		return installErr
	}
	switch {
	case app.Quiet:
	case len(named) > 0:
		fmt.Fprintln(app.IO.Err, "Next: commit .ai/kenkeep, .kkignore, AGENTS.md and the harness files listed above; `kk doctor` checks each harness (some ask you to trust new hooks once).")
	case !o.upgrade:
		fmt.Fprintln(app.IO.Err, "Next: write knowledge with `kk node write`, then commit .ai/kenkeep and .kkignore.")
	}
	return nil
}

// initRoot is the folder kk init sets up when neither --root nor KK_ROOT
// names one: the knowledge base wd is in, else the top of the git work
// tree wd is in, else wd itself. Run from a sub-folder of a repository,
// init sets up the repository, not the sub-folder.
func initRoot(ctx context.Context, wd string) string {
	top, err := gitx.TopLevel(ctx, wd)
	if err != nil {
		top = ""
	}
	real := func(p string) string {
		if r, err := filepath.EvalSymlinks(p); err == nil {
			return r
		}
		return p
	}
	if k, err := store.Find(wd); err == nil {
		if r := real(k.Root); top == "" || r == top || strings.HasPrefix(r, top+string(filepath.Separator)) {
			return k.Root
		}
	}
	if top == "" || real(wd) == top {
		return wd // not in a work tree, or at its top (as the user wrote it)
	}
	return top
}

// releaseVersion is the kk release this binary is, as init records it in
// installed-version, or "" for a development build (a checkout, a
// pseudo-version): the committed record names no build.
func releaseVersion() string {
	v := currentVersion().Version
	if v == "" || v == "dev" || pseudoVersion.MatchString(v) || strings.Contains(v, "+") || strings.Contains(v, "devel") {
		return ""
	}
	return v
}
