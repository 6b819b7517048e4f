// Package copilot is kk's adapter for the GitHub Copilot CLI (`copilot`,
// npm package @github/copilot).
//
// What the harness offers, and what kk does with it:
//
//   - Hooks live in every .github/hooks/*.json of the repository. kk owns
//     .github/hooks/kk.json entirely: sessionStart gives the model ENTRY.md
//     and drains the proposal queue; userPromptSubmitted adds the nodes
//     relevant to the prompt; agentStop, preCompact and sessionEnd capture
//     the session; sessionEnd also ticks lint.
//   - Since 1.0.102 (at least) Copilot takes {"additionalContext": …} from
//     sessionStart (sent to the model as a user message of its own, not
//     recorded in the transcript) and from userPromptSubmitted (appended
//     to the prompt in a <system_reminder> block). Older builds ignored
//     both; Copilot also reads AGENTS.md, where kk init keeps its block
//     pointing at ENTRY.md.
//   - Copilot writes a turn to its transcript only after its agentStop
//     and sessionEnd hooks have run, so capture is detached and waits for
//     the file to settle (Spec.Capture).
//   - Skills are SKILL.md folders under .github/skills/.
//   - Transcripts are ${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl.
//   - Headless runs are `copilot -p … --output-format json`.
package copilot

import (
	"github.com/kk-project/kk/internal/harness"
)

const (
	id         = "copilot"
	binary     = "copilot"
	hooksFile  = ".github/hooks/kk.json"
	skillsDir  = ".github/skills"
	detectEnv  = "COPILOT_CLI"
	homeEnv    = "COPILOT_HOME"
	userDirRel = ".copilot"
)

// spec is what kk knows about the Copilot CLI.
var spec = harness.Spec{
	ID:          id,
	Name:        "GitHub Copilot CLI",
	Binary:      binary,
	InstallHint: "install the GitHub Copilot CLI with `npm install -g @github/copilot` (or `brew install copilot-cli`), then run `copilot` once and sign in with /login",
	// Copilot sets COPILOT_CLI=1 in the environment of the commands it
	// runs (reported by users; GitHub does not document it), so this is
	// a hint behind the explicit --harness flag.
	Detect:       []harness.EnvMarker{{Name: detectEnv, Value: "1"}},
	Priority:     50,
	Drain:        true,
	PromptArgMax: harness.DefaultPromptArgMax,
	// Copilot writes a turn to events.jsonl only after its agentStop and
	// sessionEnd hooks have run (1.0.102): the capture waits for it.
	Capture: harness.CaptureSettled,
	Files:   harness.Paths{Config: []string{hooksFile}, Skills: skillsDir},
	// copilot -p --model <id> --reasoning-effort <level> (the effort flag
	// since 1.0.4).
	Model: harness.ModelFlags{Name: []string{"--model", "%s"}, Effort: []string{"--reasoning-effort", "%s"},
		Efforts: []string{"low", "medium", "high", "xhigh"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{".github/copilot-instructions.md", ".github/instructions/*.instructions.md", "~/.copilot/copilot-instructions.md"},
}

// Adapter is the Copilot CLI adapter.
type Adapter struct{ harness.Base }

// New returns the adapter.
func New() *Adapter { return &Adapter{harness.Base{S: spec}} }

var _ harness.Adapter = (*Adapter)(nil)

// LaunchArgs implements harness.Adapter: `copilot -p "<prompt>"` runs
// the prompt (a slash command such as /kk-curate) non-interactively.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := spec.ModelArgs(m)
	return append([]string{"-p", prompt}, margs...)
}
