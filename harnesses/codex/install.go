package codex

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// Install merges kk's hooks into .codex/hooks.json and writes the skills
// into .agents/skills/. The user's hooks and keys keep their order and
// bytes; kk's handlers are recognised by their command and replaced, so an
// upgrade updates them and a second run changes nothing. .codex/config.toml
// is never touched: hooks in its [hooks] table load alongside hooks.json,
// and kk doctor points that out. Codex runs new or changed hooks only once
// the user trusts them in /hooks; kk doctor says so too.
func (*Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	rendered, err := renderSkills(opts.Skills)
	if err != nil {
		return nil, err
	}
	kk := hookPrefix(command(opts))
	order, want := wantHooks(kk)
	var changes []harness.Change
	action, err := harness.EditJSONFile(filepath.Join(opts.Root, hooksFile), func(doc *harness.Object) error {
		if err := editHooks(doc, ownedBy(kk), order, want); err != nil {
			return fmt.Errorf("%s: %w; fix the file, then run kk again", hooksFile, err)
		}
		return nil
	}, false)
	if err != nil {
		return nil, err
	}
	if action != "" {
		changes = append(changes, harness.Change{Path: hooksFile, Action: action})
	}
	skillChanges, err := installSkills(opts.Root, skillsDir, rendered)
	return append(changes, skillChanges...), err
}

// Uninstall removes kk's handlers from .codex/hooks.json (the file
// itself, and .codex/, only when nothing else is left in them) and kk's
// skill folders.
func (*Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	kk := hookPrefix(command(opts))
	p := filepath.Join(opts.Root, hooksFile)
	var changes []harness.Change
	action, err := harness.EditJSONFile(p, func(doc *harness.Object) error {
		if err := editHooks(doc, ownedBy(kk), nil, nil); err != nil {
			return fmt.Errorf("%s: %w; fix the file, then run kk again", hooksFile, err)
		}
		return nil
	}, hasKeys(p))
	if err != nil {
		return nil, err
	}
	if action != "" {
		changes = append(changes, harness.Change{Path: hooksFile, Action: action})
	}
	skillChanges, err := uninstallSkills(opts.Root, skillsDir, opts.Skills)
	removeEmptyDirs(opts.Root, ".codex")
	return append(changes, skillChanges...), err
}

// hasKeys reports whether the JSON object in p has any key. A hooks
// file is removed on uninstall only when it had keys and kk's removal
// emptied it, so a file that only ever held kk's hooks goes and a user's
// own empty file stays.
func hasKeys(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	o, err := harness.ParseObject(data)
	return err == nil && o.Len() > 0
}

// hookPrefix is the kk command as the hook's shell reads it. A command
// relative to the repository root (kk init --kk-command bin/kk) is anchored
// at the root: Codex runs hooks in the session's folder, which may be below
// the repository root, and sets no project-root variable (harnesses.md §2.1,
// §2.5), so the root comes from git.
func hookPrefix(kk string) string {
	if filepath.IsAbs(kk) || !strings.Contains(kk, "/") {
		return shellQuote(kk)
	}
	return `"$(git rev-parse --show-toplevel)"/` + shellQuote(strings.TrimPrefix(kk, "./"))
}

// command is the kk command hooks run.
func command(opts harness.InstallOptions) string {
	if opts.Command == "" {
		return "kk"
	}
	return opts.Command
}
