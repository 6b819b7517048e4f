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

// handlerSpecs are kk's hooks in Claude Code, in file order.
//
// Capture is synchronous on Stop, PreCompact and SessionEnd: it writes one
// session log well inside a second, an async capture would be killed at
// the teardown of a `claude -p` run and at session exit (losing the last
// turn), and Stop fires every turn, so async captures of one session
// could overtake each other. Lint-tick is async: it never talks to the
// model and on its lint sessions it can take longer than a session start
// should. There is no proposal-drain: extraction runs inline in
// /kk-curate, because a headless `claude -p` per session log would bill
// the user's plan a second time.
var handlerSpecs = []harness.HookSpec{
	{On: "SessionStart", Event: harness.SessionStart},
	{On: "SessionStart", Event: harness.LintTick, Async: true},
	{On: "UserPromptSubmit", Event: harness.PromptContext},
	{On: "Stop", Event: harness.Capture},
	{On: "Stop", Event: harness.GraphHint},
	{On: "PreCompact", Event: harness.Capture},
	{On: "SessionEnd", Event: harness.Capture},
}

// hookTimeout (seconds) bounds each synchronous kk handler. kk keeps its
// own, shorter deadlines; this only guards against a hung process. On
// SessionEnd it also lifts Claude Code's 1.5 s shared budget, so the final
// capture of a long transcript is not cut off.
const hookTimeout = 30

// hookFile is kk's part of .claude/settings.json.
var hookFile = harness.HookFile{Path: settingsFile, Harness: id, Specs: handlerSpecs, Timeout: hookTimeout, Kenkeep: []string{".ai/kenkeep/hooks/claude/kk-", ".claude/hooks/kk-"}}

// layout is what kk installs into Claude Code. A kk command relative to
// the repository root (kk init --kk-command bin/kk) is anchored at the
// root: Claude Code sets CLAUDE_PROJECT_DIR to the project root for hooks,
// which may run in a subfolder (harnesses.md §1.5).
var layout = harness.HooksAndSkills{
	Hooks:     hookFile,
	SkillsDir: skillsDir,
	Root:      `"$CLAUDE_PROJECT_DIR"/`,
}
