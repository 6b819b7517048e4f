// Package harness is what kk knows about the coding agents it lives in
// (Claude Code, Codex CLI, Cursor, OpenCode, Copilot CLI, Gemini CLI): one
// Adapter per harness, registered in one Registry. Adapters live under
// harnesses/<id>/ and never reach into each other; what they share lives
// here and in internal/.
//
// An adapter is declared data plus a few pure functions: how to install kk
// into the harness's config files, how to read the harness's hook payloads
// and transcripts, how to print context back to it, and how to run it
// headless. The hook runtime (internal/hooks), kk init, the launchers and
// kk doctor do the work, calling the adapters.
package harness

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Event is a kk hook event. Each harness maps its own lifecycle events
// onto these in its hook configuration; kk never translates one harness's
// event names into another's.
type Event string

const (
	// SessionStart injects ENTRY.md (plus staleness and curation nudges).
	SessionStart Event = "session-start"
	// Capture turns the session transcript into a session log (fired at
	// the end of a turn, at session end and before compaction).
	Capture Event = "capture"
	// ProposalDrain extracts candidates from pending session logs in the
	// background through the harness's headless mode.
	ProposalDrain Event = "proposal-drain"
	// PromptContext adds the nodes most relevant to the user's prompt.
	PromptContext Event = "prompt-context"
	// LintTick runs lint every config.lintEveryNSessions sessions.
	LintTick Event = "lint-tick"
	// GraphHint runs at the end of a turn (the harness's Stop event): once
	// per session, when the session changed files that atoms of the
	// knowledge graph cover, it asks the agent to record what changed
	// (the atoms and molecules to update, and the tools that do it).
	GraphHint Event = "graph-hint"
)

// Events lists every hook event, in a fixed order.
var Events = []Event{SessionStart, Capture, ProposalDrain, PromptContext, LintTick, GraphHint}

// RecursionEnv is set on every child process kk starts; kk hooks do
// nothing when it is set, so a headless harness run kk started never
// re-enters kk's own hooks.
const RecursionEnv = "KK_INTERNAL"

// KenkeepRecursionEnv is the recursion guard of kenkeep, the tool kk
// succeeds: set to 1 on the headless runs kenkeep starts. kk sets it on
// its own children too, and its hooks stay out of a process tree that
// carries it, so neither tool's hooks run inside the other's headless
// runs in a repository where both are in use.
const KenkeepRecursionEnv = "KENKEEP_BUILDER_INTERNAL"

// Guarded reports whether the environment getenv reads is a process tree
// kk (RecursionEnv) or kenkeep (KenkeepRecursionEnv=1) started, where kk's
// hooks do nothing.
func Guarded(getenv func(string) string) bool {
	return getenv(RecursionEnv) != "" || getenv(KenkeepRecursionEnv) == "1"
}

// HookInput is a harness hook payload, normalised.
type HookInput struct {
	// HarnessEvent is the harness's own event name when the payload has
	// one (SessionStart, stop, sessionEnd, …).
	HarnessEvent   string
	SessionID      string
	CWD            string
	TranscriptPath string // empty when the harness sends none (Cursor's CLI)
	Prompt         string // the user's prompt, for prompt events
	// LastMessage is the final assistant text when the payload carries
	// it (Claude's Stop), which can be newer than the transcript file.
	LastMessage string
	// Binary is the harness's own executable when the payload names it
	// (kk's OpenCode plugin does), for commands kk runs against the
	// session (`opencode export`).
	Binary string
	// Ephemeral says the harness keeps no transcript of the session, and
	// said so: Codex run with --ephemeral writes no rollout and sends
	// "transcript_path": null. There is nothing to capture.
	Ephemeral bool
	// NoTranscript says why the adapter could not name the session's
	// transcript, when it could not for a reason of its own (Copilot
	// with no home folder to look in); capture reports it.
	NoTranscript string
	// Mistyped are the errors of the fields above whose payload field
	// held another JSON type; a hook refuses the payload only for the
	// places it reads (Check).
	Mistyped Mistyped
}

// Role of a transcript turn.
type Role string

const (
	User  Role = "user"
	Agent Role = "agent"
)

// Turn is one role-tagged piece of a transcript.
type Turn struct {
	Role Role
	Text string
}

// Read is a file the session read, for the usage ledger: through a read
// tool, or named in a shell or search command.
type Read struct {
	Path string // as the session wrote it (absolute or relative)
	Tool string // the tool or command that read it
}

// Transcript is a parsed session transcript.
type Transcript struct {
	Turns []Turn
	Reads []Read
}

// Paths are the locations an adapter owns in a repository, relative to its
// root, for .kkignore, doctor and uninstall.
type Paths struct {
	Config []string // hook and settings files kk edits (merged, never replaced)
	Skills string   // folder the skills are installed into
	Other  []string // other files kk writes (plugins, instruction files)
}

// InstallOptions are what Install and Uninstall need.
type InstallOptions struct {
	Root string // the repository root
	// Command is how hook commands invoke kk: "kk" when kk is on PATH
	// (the default, so a fresh clone needs nothing else), or the path
	// given with `kk init --kk-command`.
	Command string
	// Skills are the skill templates to install: name → SKILL.md content
	// (harness-neutral; the adapter renders them into its own format).
	Skills map[string][]byte
	// Prompts are the shipped prompts: file name → content.
	Prompts map[string][]byte
	Now     time.Time
}

// Change is one file an install or uninstall created, updated or removed,
// relative to the repository root.
type Change struct {
	Path   string `json:"path"`
	Action string `json:"action"` // created, updated, removed
}

// Check is one doctor finding about a harness.
type Check struct {
	Name    string `json:"name"`
	Level   string `json:"level"` // ok, warn, error
	Message string `json:"message"`
	Fix     string `json:"fix,omitempty"`
}

// HeadlessRun describes one headless run of the harness.
type HeadlessRun struct {
	Prompt  string
	Stdin   io.Reader
	Schema  []byte // JSON Schema the answer must match, for harnesses that can enforce one
	Model   Model  // the model setting; what the harness cannot honour is left out
	LogFile string // where the harness's machine output is copied
	Timeout time.Duration
}

// Adapter is one harness. Every adapter has the same shape
// (harnesses/<id>/): <id>.go declares its Spec and embeds Base, which
// gives ID, Name, Binary, InstallHint, Detect and Paths from it;
// install.go, payload.go, transcript.go, headless.go, doctor.go and
// mcp.go hold the rest.
type Adapter interface {
	// Spec is what the adapter declares about its harness.
	Spec() Spec
	// ID is Spec().ID, the stable name used in --harnesses and
	// installed-version.
	ID() string
	// Name is Spec().Name, the display name ("Claude Code").
	Name() string
	// Binary is Spec().Binary, the executable launchers and headless runs
	// start.
	Binary() string
	// LaunchArgs returns the arguments that run prompt (a slash command
	// such as "/kk-curate") headless with the model setting m (what the
	// harness cannot honour of it is left out: Spec().ModelArgs).
	LaunchArgs(prompt string, m Model) []string
	// InstallHint is Spec().InstallHint.
	InstallHint() string
	// Detect reports whether the current process runs inside this harness
	// (Spec().Detected).
	Detect(getenv func(string) string) bool
	// Paths are the repository locations the adapter owns (Spec().Files).
	Paths() Paths
	// Install writes kk's hooks, skills and instructions into the
	// harness's files under opts.Root, merging with what is there. A
	// second run changes nothing.
	Install(ctx context.Context, opts InstallOptions) ([]Change, error)
	// Uninstall removes exactly what Install added.
	Uninstall(ctx context.Context, opts InstallOptions) ([]Change, error)
	// ParseHookInput decodes a hook payload from the harness's stdin.
	ParseHookInput(data []byte) (HookInput, error)
	// HookOutput renders context for the harness to show the model at
	// event (SessionStart or PromptContext), or, at GraphHint, a request
	// that the agent go on for one more turn with the text as its prompt
	// (the end-of-turn event's block, retry or follow-up output), in the
	// harness's own format; ok is false when the harness has no channel
	// for it at that event.
	HookOutput(event Event, context string) (out []byte, ok bool)
	// ParseTranscript reads a transcript in the harness's format.
	ParseTranscript(r io.Reader) (Transcript, error)
	// Headless runs the harness non-interactively and returns its final
	// answer text.
	Headless(ctx context.Context, run HeadlessRun) (string, error)
	// Doctor checks the installation under root.
	Doctor(ctx context.Context, root string) []Check
}

// Registry holds the adapters by id.
type Registry struct {
	adapters map[string]Adapter
}

// NewRegistry returns a registry of the given adapters. Ids must be
// unique, and each spec must pass Spec.Check.
func NewRegistry(adapters ...Adapter) (*Registry, error) {
	r := &Registry{adapters: map[string]Adapter{}}
	for _, a := range adapters {
		if err := a.Spec().Check(); err != nil {
			return nil, err
		}
		if _, dup := r.adapters[a.ID()]; dup {
			return nil, fmt.Errorf("harness %q registered twice", a.ID())
		}
		r.adapters[a.ID()] = a
	}
	return r, nil
}

// IDs returns the registered ids, sorted.
func (r *Registry) IDs() []string {
	ids := make([]string, 0, len(r.adapters))
	for id := range r.adapters {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// Get returns the adapter with the given id.
func (r *Registry) Get(id string) (Adapter, error) {
	if a, ok := r.adapters[id]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("unknown harness %q; known harnesses: %s", id, strings.Join(r.IDs(), ", "))
}

// Parse turns a comma-separated --harnesses value into adapters, in the
// order given, without duplicates.
func (r *Registry) Parse(list string) ([]Adapter, error) {
	var out []Adapter
	seen := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		id = strings.TrimSpace(id)
		if id == "" || seen[id] {
			continue
		}
		a, err := r.Get(id)
		if err != nil {
			return nil, err
		}
		seen[id] = true
		out = append(out, a)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no harness named; give one or more of %s", strings.Join(r.IDs(), ", "))
	}
	return out, nil
}

// ByPriority returns the adapters in detection order (Spec().Priority,
// then id).
func (r *Registry) ByPriority() []Adapter {
	out := make([]Adapter, 0, len(r.adapters))
	for _, id := range r.IDs() {
		out = append(out, r.adapters[id])
	}
	slices.SortStableFunc(out, func(a, b Adapter) int { return a.Spec().Priority - b.Spec().Priority })
	return out
}

// Resolve picks the harness for a launcher: the flag, else the harness
// whose environment markers are present, else config's cliDefaultHarness,
// else claude.
func (r *Registry) Resolve(flag string, getenv func(string) string, configDefault string) (Adapter, error) {
	if flag != "" {
		return r.Get(flag)
	}
	for _, a := range r.ByPriority() {
		if a.Detect(getenv) {
			return a, nil
		}
	}
	if configDefault != "" {
		a, err := r.Get(configDefault)
		if err != nil {
			return nil, fmt.Errorf("config cliDefaultHarness: %w", err)
		}
		return a, nil
	}
	return r.Get("claude")
}
