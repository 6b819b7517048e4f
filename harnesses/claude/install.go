package claude

import (
	"context"

	"github.com/kk-project/kk/internal/harness"
)

// Install merges kk's hooks into .claude/settings.json and writes the
// skills into .claude/skills/. The user's settings keep their keys, order
// and bytes; kk's handlers are recognised by their command and replaced,
// so an upgrade updates them and a second run changes nothing.
func (*Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	return layout.Install(opts)
}

// Uninstall removes kk's handlers from .claude/settings.json (the file
// itself only when nothing else is left in it) and kk's skill folders.
func (*Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	return layout.Uninstall(opts)
}
