package codex

import (
	"context"

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
	return layout.Install(opts)
}

// Uninstall removes kk's handlers from .codex/hooks.json (the file
// itself, and .codex/, only when nothing else is left in them) and kk's
// skill folders.
func (*Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	return layout.Uninstall(opts)
}
