// Package claude is kk's adapter for Claude Code (reference harnesses.md
// §1): hooks in .claude/settings.json, skills in .claude/skills/, JSONL
// transcripts under ~/.claude/projects/, and `claude -p` for headless runs.
package claude

import (
	"github.com/kk-project/kk/internal/harness"
)

// spec is what kk knows about Claude Code.
var spec = harness.Spec{
	ID:          id,
	Name:        "Claude Code",
	Binary:      binary,
	InstallHint: "install Claude Code with `npm install -g @anthropic-ai/claude-code` (see https://code.claude.com/docs), or pick another harness with --harness",
	// Claude Code sets CLAUDECODE=1 in every child (tools, hooks, MCP
	// servers, IDE terminals). CLAUDE_PROJECT_DIR is no evidence: Cursor
	// sets it too. Other harnesses' terminals may carry CLAUDECODE, so
	// Claude Code is tried first.
	Detect:   []harness.EnvMarker{{Name: "CLAUDECODE", Value: "1"}},
	Priority: 10,
	// /kk-curate extracts pending logs inside the session the user already
	// pays for; a background `claude -p` per log would bill the plan twice.
	Drain:        false,
	PromptArgMax: harness.DefaultPromptArgMax,
	Capture:      harness.CaptureInline,
	Files:        harness.Paths{Config: []string{settingsFile}, Skills: skillsDir},
	// claude -p --model <alias|id> --effort low|medium|high|xhigh|max
	// (harnesses.md §1.4).
	Model: harness.ModelFlags{Name: []string{"--model", "%s"}, Effort: []string{"--effort", "%s"},
		Efforts: []string{"low", "medium", "high", "xhigh", "max"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{"CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", "~/.claude/CLAUDE.md", "~/.claude/projects/{root-slug}/memory/*.md"},
}

// Adapter is the Claude Code harness.
type Adapter struct{ harness.Base }

// New returns the Claude Code adapter.
func New() *Adapter { return &Adapter{harness.Base{S: spec}} }

const (
	id           = "claude"
	binary       = "claude"
	settingsFile = ".claude/settings.json"
	localFile    = ".claude/settings.local.json"
	skillsDir    = ".claude/skills"
)

// LaunchArgs runs prompt (a slash command such as "/kk-curate") in print
// mode; Claude Code expands a skill named at the start of a -p prompt.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := spec.ModelArgs(m)
	return append([]string{"-p", prompt}, margs...)
}

var _ harness.Adapter = (*Adapter)(nil)
