package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/kk-project/kk/internal/githooks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/install"
)

type uninstallOpts struct {
	harnesses    string
	harnessesSet bool // --harnesses was given
	gitHooks     bool
}

func newUninstallCmd(app *App) *cobra.Command {
	var o uninstallOpts
	cmd := &cobra.Command{
		Use:   "uninstall [--harnesses <ids>] [--git-hooks]",
		Short: "Take kk out of coding agents and git hooks",
		Long: `Remove what kk init --harnesses added to each named harness: kk's hook
entries in its settings files (the user's own entries and keys stay, and a
file kk created goes when nothing else is left in it), the kk skills, and
any plugin or instruction file kk wrote. The harnesses are struck from
.ai/kenkeep/.state/installed-version; when none remains, kk's block in
AGENTS.md goes too (and the file, when kk created it).

--git-hooks removes kk's git hooks (post-applypatch, post-checkout,
post-commit, post-index-change, post-merge, post-rewrite) from the folder git runs hooks from, and from .git/hooks too
when core.hooksPath points elsewhere, and the definition of kk's merge
driver from the repository's git config (git then merges the generated
files as text again). A hook kk chained (kept as <name>.kk-chained) is moved
back into place unchanged; a hook that is not kk's is left alone. It
records kk.githooks false in the repository's git config, so that a later
write does not set them up again as it does in a clone that never had
them; kk init sets them up again.

The knowledge base itself is left alone.`,
		Example: `  kk uninstall --harnesses codex
  kk uninstall --git-hooks
  kk uninstall --harnesses claude,codex,cursor,opencode,copilot,gemini --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.harnessesSet = cmd.Flags().Changed("harnesses")
			if !o.harnessesSet && !o.gitHooks {
				return usagef("name the harnesses to remove kk from with --harnesses (such as --harnesses claude,codex), or give --git-hooks to remove kk's git hooks")
			}
			return runUninstall(cmd.Context(), app, o)
		},
	}
	cmd.Flags().StringVar(&o.harnesses, "harnesses", "", "remove kk from these coding agents (comma-separated harness ids)")
	cmd.Flags().BoolVar(&o.gitHooks, "git-hooks", false, "remove kk's git hooks and put back the hooks they chained")
	return cmd
}

func runUninstall(ctx context.Context, app *App, o uninstallOpts) error {
	var named []harness.Adapter
	if o.harnessesSet {
		var err error
		if named, err = app.harnesses().Parse(o.harnesses); err != nil {
			return usagef("--harnesses: %v", err)
		}
	}
	k, err := app.KB()
	if err != nil {
		return err
	}
	var res *install.Result
	if o.harnessesSet {
		if res, err = install.Uninstall(ctx, k, named, install.Options{Now: app.Now(), LockCommand: app.Command}); res == nil {
			return err
		}
	} else {
		res = &install.Result{Changes: []harness.Change{}, Harnesses: []string{}, Command: install.DefaultCommand, Warnings: []string{}}
		if inst, ierr := k.ReadInstalled(); ierr == nil {
			res.Harnesses = append(res.Harnesses, inst.Harnesses...)
			if inst.KKCommand != "" {
				res.Command = inst.KKCommand
			}
		}
	}
	if o.gitHooks && err == nil {
		gres, gerr := githooks.Uninstall(ctx, k)
		switch {
		case errors.Is(gerr, githooks.ErrNotWorkTree), errors.Is(gerr, gitx.ErrNoGit):
			res.Warnings = append(res.Warnings, fmt.Sprintf("no git hooks to remove: %v", gerr))
		case gerr != nil:
			err = fmt.Errorf("removing the git hooks: %w", gerr)
		}
		if gres != nil {
			for _, c := range gres.Changes {
				res.Changes = append(res.Changes, harness.Change{Path: c.Path, Action: c.Action})
			}
			res.Warnings = append(res.Warnings, gres.Warnings...)
		}
	}
	if app.JSON {
		if perr := app.printJSON(struct {
			*install.Result
			Unchanged bool `json:"unchanged"`
		}{res, len(res.Changes) == 0}); perr != nil {
			return perr
		}
		return err
	}
	for _, w := range res.Warnings {
		app.warnf("%s", w)
	}
	for _, c := range res.Changes {
		fmt.Fprintf(app.IO.Out, "%s\t%s\n", c.Action, c.Path)
	}
	if err != nil {
		return err
	}
	if len(res.Changes) == 0 {
		fmt.Fprintln(app.IO.Out, "kk: nothing to remove; nothing changed")
	}
	return nil
}
