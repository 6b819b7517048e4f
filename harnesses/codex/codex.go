// Package codex is kk's adapter for the OpenAI Codex CLI (reference
// harnesses.md §2): hooks in .codex/hooks.json, skills in .agents/skills/,
// rollout JSONL transcripts under ~/.codex/sessions/, and `codex exec` for
// headless runs.
package codex

import (
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// spec is what kk knows about the Codex CLI.
var spec = harness.Spec{
	ID:          id,
	Name:        "Codex CLI",
	Binary:      binary,
	InstallHint: "install the Codex CLI with `npm install -g @openai/codex` (see https://developers.openai.com/codex), or pick another harness with --harness",
	// Codex's shell-tool children see CODEX_THREAD_ID; Codex sets no
	// marker in hooks or MCP servers, so detection is best effort
	// (harnesses.md §2.5).
	Detect:       []harness.EnvMarker{{Name: "CODEX_THREAD_ID"}},
	Priority:     40,
	Drain:        true,
	PromptArgMax: harness.DefaultPromptArgMax,
	Capture:      harness.CaptureInline,
	Files:        harness.Paths{Config: []string{hooksFile}, Skills: skillsDir},
	// codex exec -m <model> -c model_reasoning_effort="<level>"
	// (harnesses.md §2.4).
	Model: harness.ModelFlags{Name: []string{"--model", "%s"}, Effort: []string{"-c", `model_reasoning_effort="%s"`},
		Efforts: []string{"minimal", "low", "medium", "high", "xhigh"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{"AGENTS.md", "AGENTS.override.md", "~/.codex/AGENTS.md"},
}

// Adapter is the Codex CLI harness.
type Adapter struct{ harness.Base }

// New returns the Codex CLI adapter.
func New() *Adapter { return &Adapter{harness.Base{S: spec}} }

var _ harness.Adapter = (*Adapter)(nil)

const (
	id         = "codex"
	binary     = "codex"
	hooksFile  = ".codex/hooks.json"
	configFile = ".codex/config.toml"
	skillsDir  = ".agents/skills"
)

// LaunchArgs runs prompt with `codex exec`. Codex names a skill with $name
// (harnesses.md §2.2), so a leading "/kk-curate" becomes "$kk-curate".
// The run needs the workspace-write sandbox: exec is read-only by default,
// and the skills write the knowledge tree through kk commands.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	if rest, ok := strings.CutPrefix(prompt, "/"); ok && rest != "" && !strings.HasPrefix(rest, "/") {
		prompt = "$" + rest
	}
	margs, _ := spec.ModelArgs(m)
	return append(append([]string{"exec", "--sandbox", "workspace-write"}, margs...), prompt)
}
