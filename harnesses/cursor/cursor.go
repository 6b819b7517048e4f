// Package cursor is kk's adapter for Cursor: the IDE's agent and the
// `agent` CLI (formerly `cursor-agent`), which share one project hook file.
//
// What the harness offers, and what kk does with it:
//
//   - Hooks live in .cursor/hooks.json, one flat list of {command, timeout}
//     per camelCase event. kk adds its entries (commands starting
//     "<kk> hook ") next to the user's: sessionStart runs session-start and
//     proposal-drain (which detaches itself, since Cursor holds the first
//     turn until sessionStart hooks end); stop, preCompact and sessionEnd
//     capture the session; sessionEnd also ticks lint.
//   - sessionStart may answer {"additional_context": "…"}. Cursor silently
//     dropped that field for a while (around May 2026), so kk also relies on
//     its block in AGENTS.md, which Cursor reads. beforeSubmitPrompt cannot
//     add context, so Cursor gets no prompt-time retrieval.
//   - The CLI sends "transcript_path": null. kk then looks for the
//     transcript under ~/.cursor/projects/<slug>/agent-transcripts/.
//   - Skills are SKILL.md folders under .cursor/skills/.
//   - Headless runs are `agent -p --output-format json`.
package cursor

import (
	"os"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

const (
	id        = "cursor"
	binary    = "agent"
	oldBinary = "cursor-agent" // the CLI's name before 2026
	hooksFile = ".cursor/hooks.json"
	skillsDir = ".cursor/skills"
)

// spec is what kk knows about Cursor.
var spec = harness.Spec{
	ID:          id,
	Name:        "Cursor",
	Binary:      binary,
	InstallHint: "install the Cursor CLI with `curl https://cursor.com/install -fsS | bash` (it provides the `agent` command), then run `agent login`",
	// Cursor exports CURSOR_AGENT=1 to the commands its agent runs; some
	// hosts also export CURSOR_VERSION. Cursor also sets Claude Code's
	// CLAUDE_PROJECT_DIR, which is why Claude Code is detected by
	// CLAUDECODE instead.
	Detect:       []harness.EnvMarker{{Name: "CURSOR_AGENT", Value: "1"}, {Name: "CURSOR_VERSION"}},
	Priority:     20,
	Drain:        true,
	PromptArgMax: harness.DefaultPromptArgMax,
	Capture:      harness.CaptureInline,
	Files:        harness.Paths{Config: []string{hooksFile}, Skills: skillsDir},
	// agent -p --model <id>; Cursor has no effort flag (a model id may
	// carry one, as gpt-5-high does).
	Model: harness.ModelFlags{Name: []string{"--model", "%s"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{".cursorrules", ".cursor/rules/*.mdc", ".cursor/rules/*.md"},
}

// Adapter is the Cursor adapter.
type Adapter struct {
	harness.Base
	// getenv reads the environment: HOME and CURSOR_TRANSCRIPT_PATH when
	// locating transcripts, PATH when looking for programs. Tests replace
	// it.
	getenv func(string) string
}

// New returns the adapter, reading the process environment.
func New() *Adapter { return &Adapter{Base: harness.Base{S: spec}, getenv: os.Getenv} }

var _ harness.Adapter = (*Adapter)(nil)

func (a *Adapter) env(key string) string {
	if a.getenv == nil {
		return os.Getenv(key)
	}
	return a.getenv(key)
}

// LaunchArgs implements harness.Adapter: `agent -p "<prompt>"` runs the
// prompt (a slash command such as /kk-curate) non-interactively.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := spec.ModelArgs(m)
	return append([]string{"-p", prompt}, margs...)
}

// versionTimeout bounds `<binary> --version` in doctor.
var versionTimeout = 5 * time.Second

// lookPath finds the first of names on the PATH of the adapter's
// environment (see harness.LookPath).
func (a *Adapter) lookPath(names ...string) (string, error) {
	return harness.LookPath(a.env, names...)
}
