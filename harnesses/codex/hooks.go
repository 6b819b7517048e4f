package codex

import (
	"github.com/kk-project/kk/internal/harness"
)

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
var hookFile = harness.HookFile{Path: hooksFile, Harness: id, Specs: handlerSpecs, Timeout: hookTimeout}

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
