// Package opencode is kk's adapter for OpenCode (`opencode`, npm package
// opencode-ai).
//
// What the harness offers, and what kk does with it:
//
//   - OpenCode has no hook configuration. kk writes a JS plugin,
//     .opencode/plugins/kk.mjs, and lists it under "plugin" in
//     .opencode/opencode.json (OpenCode loads a plugin only when a config
//     lists it). The plugin runs `kk hook <event> --harness opencode`,
//     detached, with a JSON payload on stdin: session.created runs
//     session-start, proposal-drain and lint-tick; session.idle (the end
//     of every turn: OpenCode has no session-end event) and
//     experimental.session.compacting run capture.
//   - OpenCode cannot take context from a hook's output. session-start
//     writes the context into .ai/kenkeep/.state/opencode-context.md (see
//     WriteContext), which opencode.json lists under "instructions".
//     The file sits in kk's state folder, which .ai/kenkeep/.gitignore
//     already keeps out of git, so no per-session text is committed and no
//     ignore rule has to be added anywhere else.
//   - OpenCode keeps no transcript file kk can read: capture runs
//     `opencode export <session>` into a file (see ExportTranscript; the
//     export's stdout is cut short when piped).
//   - Skills are SKILL.md folders under .opencode/skills/.
//   - Headless runs are `opencode run --format json`.
package opencode

import (
	"os"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

const (
	id          = "opencode"
	binary      = "opencode"
	configFile  = ".opencode/opencode.json"
	pluginFile  = ".opencode/plugins/kk.mjs"
	skillsDir   = ".opencode/skills"
	contextFile = ".ai/kenkeep/.state/opencode-context.md"

	// pluginEntry is the plugin's path in configFile's "plugin" list,
	// relative to configFile.
	pluginEntry = "./plugins/kk.mjs"
	// schemaURL is the "$schema" of a configFile kk creates.
	schemaURL = "https://opencode.ai/config.json"
)

// spec is what kk knows about OpenCode.
var spec = harness.Spec{
	ID:          id,
	Name:        "OpenCode",
	Binary:      binary,
	InstallHint: "install OpenCode with `npm install -g opencode-ai` (or `curl -fsSL https://opencode.ai/install | bash`), then run `opencode auth login`",
	// OpenCode sets OPENCODE=1 in its own environment, which its tools and
	// plugins inherit.
	Detect:       []harness.EnvMarker{{Name: "OPENCODE", Value: "1"}},
	Priority:     30,
	Drain:        true,
	PromptArgMax: harness.DefaultPromptArgMax,
	// The transcript comes from `opencode export`, which takes seconds
	// (3 s idle, over 5 s under load on 1.18.33).
	Capture: harness.CaptureDetached,
	Files:   harness.Paths{Config: []string{configFile}, Skills: skillsDir, Other: []string{pluginFile, contextFile}},
	// opencode run --model <provider/model> --variant <effort> --agent
	// <name>: a variant is the provider's reasoning level (high, max, …).
	Model: harness.ModelFlags{Name: []string{"--model", "%s"}, Effort: []string{"--variant", "%s"}, Agent: []string{"--agent", "%s"}},
	// The files the harness reads as its memory of the project and of
	// the user (FindMemoryFiles).
	Memory: []string{"AGENTS.md", "~/.config/opencode/AGENTS.md"},
}

// Adapter is the OpenCode adapter.
type Adapter struct {
	harness.Base
	// getenv reads the environment (PATH when looking for programs).
	// Tests replace it.
	getenv func(string) string
}

// New returns the adapter, reading the process environment.
func New() *Adapter { return &Adapter{Base: harness.Base{S: spec}, getenv: os.Getenv} }

var (
	_ harness.Adapter    = (*Adapter)(nil)
	_ ContextWriter      = (*Adapter)(nil)
	_ TranscriptExporter = (*Adapter)(nil)
)

func (a *Adapter) env(key string) string {
	if a.getenv == nil {
		return os.Getenv(key)
	}
	return a.getenv(key)
}

// versionTimeout bounds `opencode --version` in doctor.
var versionTimeout = 5 * time.Second

// lookPath finds the first of names on the PATH of the adapter's
// environment (see harness.LookPath).
func (a *Adapter) lookPath(names ...string) (string, error) {
	return harness.LookPath(a.env, names...)
}

// LaunchArgs implements harness.Adapter: `opencode run "<prompt>"` runs the
// prompt (a slash command such as /kk-curate) non-interactively.
func (*Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := spec.ModelArgs(m)
	return append(append([]string{"run"}, margs...), prompt)
}
