// Package setup is kk init's use case: the knowledge base's scaffold and
// first transaction (txn.Init), kk's installs into the coding agents
// (internal/install) and kk's git hooks (internal/githooks), gathered
// into one account of the files created, updated and removed.
package setup

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/githooks"
	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/install"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Options are what kk init does.
type Options struct {
	// Root is the repository folder; it must exist.
	Root string
	// Upgrade refreshes the generated scaffolding, everything kk installed
	// into the recorded harnesses, and the git hooks.
	Upgrade bool
	// Registry is kk's harness registry; Harnesses are the harnesses to
	// install into (none: only with Upgrade, the recorded ones).
	Registry  *harness.Registry
	Harnesses []harness.Adapter
	// KKCommand is the command the hooks run kk with ("": kk on PATH).
	KKCommand string
	// GitHooks installs kk's git hooks and merge driver.
	GitHooks bool
	// Version is kk's version, recorded in installed-version; Now the
	// clock; Command the command recorded in the lock and the audit log.
	Version string
	Now     func() time.Time
	Command string
	// Path is the PATH the hooks will find kk on, for the check that
	// they can.
	Path string
}

// Result is what kk init did (kk init --json).
type Result struct {
	Root      string   `json:"root"`
	Created   []string `json:"created"`
	Updated   []string `json:"updated"`
	Removed   []string `json:"removed"`
	Warnings  []string `json:"warnings"`
	Unchanged bool     `json:"unchanged"`
	Harnesses []string `json:"harnesses"`
	KKCommand string   `json:"kk_command"`
	// GitHooks is the folder holding kk's git hooks; empty when they were
	// not installed (--no-git-hooks, or not a git work tree).
	GitHooks string `json:"git_hooks"`
	// GitHooksNote tells what the git hooks init installed do, or why
	// none were installed when that is no failure (not a git work tree,
	// no git).
	GitHooksNote string `json:"-"`

	seen map[string]bool // the files listed (add)
}

// Init sets up the knowledge base under o.Root and installs what o asks
// for. A failure of an install after the knowledge base is set up returns
// the Result so far with the error; any other failure returns no Result.
func Init(ctx context.Context, o Options) (*Result, error) {
	now := o.Now
	if now == nil {
		now = time.Now
	}
	k := store.New(o.Root)
	k.Now = now
	res, err := txn.Init(ctx, k, store.InitOptions{Upgrade: o.Upgrade, Version: o.Version, Now: now(), Command: o.Command})
	if err != nil {
		return nil, err
	}
	out := &Result{Root: k.Root, Created: []string{}, Updated: []string{}, Removed: []string{}, Warnings: res.Warnings}
	for _, f := range res.Created {
		out.add("created", f)
	}
	for _, f := range res.Updated {
		out.add("updated", f)
	}
	var partial error
	if len(o.Harnesses) > 0 || o.Upgrade {
		ires, err := install.Install(ctx, k, o.Registry, o.Harnesses, install.Options{Command: o.KKCommand, Upgrade: o.Upgrade, Now: now(), LockCommand: o.Command})
		if ires == nil {
			return nil, err
		}
		partial = err
		out.addInstall(ires, o.Path)
	} else {
		out.Harnesses, out.KKCommand = []string{}, install.DefaultCommand
		if inst, err := k.ReadInstalled(); err == nil {
			out.Harnesses = append(out.Harnesses, inst.Harnesses...)
			if inst.KKCommand != "" {
				out.KKCommand = inst.KKCommand
			}
		}
	}
	if o.GitHooks {
		if err := out.addGitHooks(ctx, k, o.Upgrade || o.KKCommand != ""); err != nil && partial == nil {
			partial = err
		}
	} else if err := githooks.TurnOff(ctx, k); err != nil && partial == nil {
		// Kept off: a later write does not set them up (SetUpClone).
		partial = fmt.Errorf("recording --no-git-hooks in the repository's git config: %w", err)
	}
	out.Unchanged = len(out.Created)+len(out.Updated)+len(out.Removed) == 0
	return out, partial
}

// add lists a file init touched, once, under the first thing that
// happened to it: a file one step created and a later step filled in (a
// harness's settings file that gets the MCP server too) was created.
func (out *Result) add(action, path string) {
	if out.seen == nil {
		out.seen = map[string]bool{}
	}
	if out.seen[path] {
		return
	}
	out.seen[path] = true
	switch action {
	case "created":
		out.Created = append(out.Created, path)
	case "removed":
		out.Removed = append(out.Removed, path)
	default:
		out.Updated = append(out.Updated, path)
	}
}

// addInstall adds the changes of kk's installs into the harnesses.
func (out *Result) addInstall(ires *install.Result, path string) {
	for _, c := range ires.Changes {
		out.add(c.Action, c.Path)
	}
	out.Harnesses, out.KKCommand = ires.Harnesses, ires.Command
	out.Warnings = append(out.Warnings, ires.Warnings...)
	if len(ires.Harnesses) > 0 {
		if w := checkKKCommand(path, out.Root, ires.Command); w != "" {
			out.Warnings = append(out.Warnings, w)
		}
	}
}

// addGitHooks installs kk's git hooks and adds their changes; it returns
// an error only for a failure that is not the absence of git or of a work
// tree (which GitHooksNote explains).
func (out *Result) addGitHooks(ctx context.Context, k *store.KB, upgrade bool) error {
	gres, err := githooks.Install(ctx, k, githooks.Options{Upgrade: upgrade})
	switch {
	case errors.Is(err, githooks.ErrNotWorkTree):
		out.GitHooksNote = "kk: not in a git work tree, so no git hooks were installed; run `kk init` again after `git init` to add them"
	case errors.Is(err, gitx.ErrNoGit):
		out.GitHooksNote = "kk: git is not on PATH, so no git hooks were installed"
	}
	if gres != nil {
		out.GitHooks = gres.Dir
		for _, c := range gres.Changes {
			out.add(c.Action, c.Path)
			if c.Action == "created" {
				out.GitHooksNote = "kk: git hooks " + andList(githooks.Names) + " in " + gres.Dir + " keep the generated files right after a merge, a rebase or a cherry-pick (with kk's merge driver) and the search index in step with the branch checked out (a kk sync in the background); kk init --no-git-hooks leaves them out, kk uninstall --git-hooks takes them out"
			}
		}
		out.Warnings = append(out.Warnings, gres.Warnings...)
	}
	if err != nil && out.GitHooksNote == "" {
		return fmt.Errorf("installing the git hooks: %w", err)
	}
	return nil
}

// checkKKCommand returns a warning when the command the hooks run kk with
// cannot be found now on path: the hooks would then fail in every
// session.
func checkKKCommand(path, root, command string) string {
	prog := strings.Fields(command)[0]
	if !filepath.IsAbs(prog) && strings.ContainsRune(filepath.ToSlash(prog), '/') {
		prog = filepath.Join(root, prog) // hooks run from the repository root
	}
	_, err := install.LookPath(path, prog)
	switch {
	case err == nil:
		return ""
	case command == install.DefaultCommand && errors.Is(err, install.ErrNotOnPath):
		return "kk is not on PATH, so the hooks just written (`kk hook …`) will fail until it is; put kk on PATH, or run `kk init --upgrade --kk-command <path to kk>`"
	}
	return fmt.Sprintf("the hooks run %q, which cannot be found now (%v); they will fail until it exists", command, err)
}

// andList joins words as prose: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}
