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

// handlerSpecs are kk's hooks in Codex, in file order (harnesses.md §2.1).
// Codex skips async handlers, so every handler is synchronous: the
// proposal-drain hook starts a detached drain and returns at once, and
// lint-tick only lints every lintEveryNSessions sessions, within kk's hook
// deadline. Codex starts the handlers of one event together. Stop (every
// turn), PreCompact and SessionEnd capture the session. SessionEnd exists
// since 0.145 (fired by `codex exec` too, with transcript_path); Codex
// caps its handlers at 3 s, and older builds (0.141, 0.143 checked) pass
// over the unknown event and run the rest.
var handlerSpecs = []harness.HookSpec{
	{On: "SessionStart", Event: harness.SessionStart},
	{On: "SessionStart", Event: harness.ProposalDrain},
	{On: "SessionStart", Event: harness.LintTick},
	{On: "UserPromptSubmit", Event: harness.PromptContext},
	{On: "Stop", Event: harness.Capture},
	{On: "Stop", Event: harness.GraphHint},
	{On: "PreCompact", Event: harness.Capture},
	{On: "SessionEnd", Event: harness.Capture, Timeout: sessionEndTimeout},
}

// sessionEndTimeout (seconds) is Codex's cap on SessionEnd handlers; a
// longer timeout is clamped with a warning on every run.
const sessionEndTimeout = 3

// hookTimeout (seconds) bounds each kk handler; Codex's default is 600.
// kk keeps its own, shorter deadlines; this only guards against a hung
// process. The key is "timeout" (openai/codex#35382).
const hookTimeout = 30

// hookFile is kk's part of .codex/hooks.json.
var hookFile = harness.HookFile{Path: hooksFile, Harness: id, Specs: handlerSpecs, Timeout: hookTimeout, Kenkeep: []string{".ai/kenkeep/hooks/codex/kk-", ".codex/hooks/kk-"}}

// layout is what kk installs into Codex. A kk command relative to the
// repository root (kk init --kk-command bin/kk) is anchored at the root:
// Codex runs hooks in the session's folder, which may be below the
// repository root, and sets no project-root variable (harnesses.md §2.1,
// §2.5), so the root comes from git.
var layout = harness.HooksAndSkills{
	Hooks:     hookFile,
	SkillsDir: skillsDir,
	Root:      `"$(git rev-parse --show-toplevel)"/`,
	Prune:     []string{".codex"},
}
