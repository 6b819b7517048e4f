// Package codex is kk's adapter for the OpenAI Codex CLI (reference
// harnesses.md §2): hooks in .codex/hooks.json, skills in .agents/skills/,
// rollout JSONL transcripts under ~/.codex/sessions/, and `codex exec` for
// headless runs.
package codex

import (
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// Adapter is the Codex CLI harness.
type Adapter struct{}

// New returns the Codex CLI adapter.
func New() *Adapter { return &Adapter{} }

var _ harness.Adapter = (*Adapter)(nil)

const (
	id         = "codex"
	binary     = "codex"
	hooksFile  = ".codex/hooks.json"
	configFile = ".codex/config.toml"
	skillsDir  = ".agents/skills"
)

// ID implements harness.Adapter.
func (*Adapter) ID() string { return id }

// Name implements harness.Adapter.
func (*Adapter) Name() string { return "Codex CLI" }

// Binary implements harness.Adapter.
func (*Adapter) Binary() string { return binary }

// LaunchArgs runs prompt with `codex exec`. Codex names a skill with $name
// (harnesses.md §2.2), so a leading "/kk-curate" becomes "$kk-curate".
// The run needs the workspace-write sandbox: exec is read-only by default,
// and the skills write the knowledge tree through kk commands.
func (*Adapter) LaunchArgs(prompt string) []string {
	if rest, ok := strings.CutPrefix(prompt, "/"); ok && rest != "" && !strings.HasPrefix(rest, "/") {
		prompt = "$" + rest
	}
	return []string{"exec", "--sandbox", "workspace-write", prompt}
}

// InstallHint implements harness.Adapter.
func (*Adapter) InstallHint() string {
	return "install the Codex CLI with `npm install -g @openai/codex` (see https://developers.openai.com/codex), or pick another harness with --harness"
}

// Detect reports a process started by Codex: its shell-tool children see
// CODEX_THREAD_ID. Codex sets no marker in hooks or MCP servers, so the
// detection is best effort (harnesses.md §2.5).
func (*Adapter) Detect(getenv func(string) string) bool { return getenv("CODEX_THREAD_ID") != "" }

// Paths implements harness.Adapter.
func (*Adapter) Paths() harness.Paths {
	return harness.Paths{Config: []string{hooksFile}, Skills: skillsDir}
}
