package claude

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// Install merges kk's hooks into .claude/settings.json and writes the
// skills into .claude/skills/. The user's settings keep their keys, order
// and bytes; kk's handlers are recognised by their command and replaced,
// so an upgrade updates them and a second run changes nothing.
func (*Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	rendered, err := renderSkills(opts.Skills)
	if err != nil {
		return nil, err
	}
	kk := hookPrefix(command(opts))
	order, want := wantHooks(kk)
	var changes []harness.Change
	action, err := harness.EditJSONFile(filepath.Join(opts.Root, settingsFile), func(doc *harness.Object) error {
		if err := editHooks(doc, ownedBy(kk), order, want); err != nil {
			return fmt.Errorf("%s: %w; fix the file, then run kk again", settingsFile, err)
		}
		return nil
	}, false)
	if err != nil {
		return nil, err
	}
	if action != "" {
		changes = append(changes, harness.Change{Path: settingsFile, Action: action})
	}
	skillChanges, err := installSkills(opts.Root, skillsDir, rendered)
	return append(changes, skillChanges...), err
}

// Uninstall removes kk's handlers from .claude/settings.json (the file
// itself only when nothing else is left in it) and kk's skill folders.
func (*Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	kk := hookPrefix(command(opts))
	p := filepath.Join(opts.Root, settingsFile)
	var changes []harness.Change
	action, err := harness.EditJSONFile(p, func(doc *harness.Object) error {
		if err := editHooks(doc, ownedBy(kk), nil, nil); err != nil {
			return fmt.Errorf("%s: %w; fix the file, then run kk again", settingsFile, err)
		}
		return nil
	}, hasKeys(p))
	if err != nil {
		return nil, err
	}
	if action != "" {
		changes = append(changes, harness.Change{Path: settingsFile, Action: action})
	}
	skillChanges, err := uninstallSkills(opts.Root, skillsDir, opts.Skills)
	return append(changes, skillChanges...), err
}

// hasKeys reports whether the JSON object in p has any key. A settings
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
// at the root: Claude Code sets CLAUDE_PROJECT_DIR to the project root for
// hooks, which may run in a subfolder (harnesses.md §1.5).
func hookPrefix(kk string) string {
	if filepath.IsAbs(kk) || !strings.Contains(kk, "/") {
		return shellQuote(kk)
	}
	return `"$CLAUDE_PROJECT_DIR"/` + shellQuote(strings.TrimPrefix(kk, "./"))
}

// command is the kk command hooks run.
func command(opts harness.InstallOptions) string {
	if opts.Command == "" {
		return "kk"
	}
	return opts.Command
}
