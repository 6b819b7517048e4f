// Package gemini is kk's adapter for Gemini CLI (`gemini`, npm package
// @google/gemini-cli).
//
// What the harness offers, and what kk does with it (google-gemini/gemini-cli
// docs/hooks/*.md, docs/cli/custom-commands.md, docs/cli/headless.md,
// schemas/settings.schema.json):
//
//   - Hooks live under "hooks" in .gemini/settings.json: event → groups
//     {matcher?, hooks: [{name, type: "command", command, timeout (ms)}]}.
//     kk merges its own entries (named kk-<event>, calling
//     `kk hook <event> --harness gemini`) into the user's file and leaves
//     every other key and hook as it was.
//   - SessionStart hooks inject context through
//     hookSpecificOutput.additionalContext (first turn of an interactive
//     session, prepended to the prompt of a headless one), and BeforeAgent
//     hooks add context to each prompt the same way: kk uses both.
//     AfterAgent (end of turn), PreCompress and SessionEnd capture.
//   - Skills become custom commands, .gemini/commands/<name>.toml, with a
//     description and a prompt (/kk-curate runs one, headless too), and
//     agent skills, .gemini/skills/<name>/SKILL.md, which Gemini CLI 0.61
//     lists to the model in its activate_skill tool (in a trusted folder).
//   - Transcripts are the JSON Lines chat recordings under
//     ~/.gemini/tmp/<project hash>/chats/ (older releases wrote one JSON
//     document); hooks receive the path.
//   - Headless runs are `gemini -p … --output-format json`.
package gemini

import (
	"github.com/kk-project/kk/internal/harness"
)

const (
	id           = "gemini"
	binary       = "gemini"
	settingsFile = ".gemini/settings.json"
	commandsDir  = ".gemini/commands"
	skillsDir    = ".gemini/skills"
	detectEnv    = "GEMINI_CLI"
	userDirRel   = ".gemini"
)

// spec is what kk knows about Gemini CLI.
var spec = harness.Spec{
	ID:          id,
	Name:        "Gemini CLI",
	Binary:      binary,
	InstallHint: "install Gemini CLI with `npm install -g @google/gemini-cli` (or `brew install gemini-cli`), then run `gemini` once to sign in",
	// Gemini CLI sets GEMINI_CLI=1 in the environment of the shell
	// commands it runs.
	Detect:       []harness.EnvMarker{{Name: detectEnv, Value: "1"}},
	Priority:     60,
	Drain:        true,
	PromptArgMax: harness.DefaultPromptArgMax,
	Capture:      harness.CaptureInline,
	Files:        harness.Paths{Config: []string{settingsFile}, Skills: skillsDir, Other: []string{commandsDir}},
	// gemini -p -m <model>; Gemini CLI has no effort flag (thinking is set
	// per model in settings.json).
	Model: harness.ModelFlags{Name: []string{"-m", "%s"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{"GEMINI.md", "~/.gemini/GEMINI.md"},
}

// Adapter is the Gemini CLI adapter.
type Adapter struct{ harness.Base }

// New returns the adapter.
func New() *Adapter { return &Adapter{harness.Base{S: spec}} }

var _ harness.Adapter = (*Adapter)(nil)

// LaunchArgs implements harness.Adapter: `gemini -p "<prompt>"` is Gemini
// CLI's headless mode; a prompt such as /kk-curate runs kk's custom
// command.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := spec.ModelArgs(m)
	return append([]string{"-p", prompt}, margs...)
}
