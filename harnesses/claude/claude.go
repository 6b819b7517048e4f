// Package claude is kk's adapter for Claude Code (reference harnesses.md
// §1): hooks in .claude/settings.json, skills in .claude/skills/, JSONL
// transcripts under ~/.claude/projects/, and `claude -p` for headless runs.
package claude

import (
	"github.com/kk-project/kk/internal/harness"
)

// Adapter is the Claude Code harness.
type Adapter struct{}

// New returns the Claude Code adapter.
func New() *Adapter { return &Adapter{} }

const (
	id           = "claude"
	binary       = "claude"
	settingsFile = ".claude/settings.json"
	localFile    = ".claude/settings.local.json"
	skillsDir    = ".claude/skills"
)

// ID implements harness.Adapter.
func (*Adapter) ID() string { return id }

// Name implements harness.Adapter.
func (*Adapter) Name() string { return "Claude Code" }

// Binary implements harness.Adapter.
func (*Adapter) Binary() string { return binary }

// LaunchArgs runs prompt (a slash command such as "/kk-curate") in print
// mode; Claude Code expands a skill named at the start of a -p prompt.
func (*Adapter) LaunchArgs(prompt string) []string { return []string{"-p", prompt} }

// InstallHint implements harness.Adapter.
func (*Adapter) InstallHint() string {
	return "install Claude Code with `npm install -g @anthropic-ai/claude-code` (see https://code.claude.com/docs), or pick another harness with --harness"
}

// Detect reports a process started by Claude Code: it sets CLAUDECODE=1 in
// every child (tools, hooks, MCP servers, IDE terminals). CLAUDE_PROJECT_DIR
// is no evidence, because Cursor sets it too.
func (*Adapter) Detect(getenv func(string) string) bool { return getenv("CLAUDECODE") == "1" }

// Paths implements harness.Adapter.
func (*Adapter) Paths() harness.Paths {
	return harness.Paths{Config: []string{settingsFile}, Skills: skillsDir}
}

var _ harness.Adapter = (*Adapter)(nil)
