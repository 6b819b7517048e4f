package harness

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
)

// Spec is what an adapter declares about its harness, as data: everything
// shared code needs to decide about a harness without naming it.
type Spec struct {
	// ID is the stable name used in --harnesses, installed-version and
	// the hook commands ("claude").
	ID string
	// Name is the display name ("Claude Code").
	Name string
	// Binary is the executable launchers and headless runs start.
	Binary string
	// InstallHint tells the user how to install Binary.
	InstallHint string
	// Detect are the environment markers of a process the harness started
	// (its tools, hooks or MCP servers); any one of them is enough.
	Detect []EnvMarker
	// Priority orders detection: the harness with the lowest value whose
	// markers are present wins (a harness whose markers other harnesses
	// also set, such as Claude Code's, must come before them).
	Priority int
	// Drain says whether proposal-drain extracts the pending session logs
	// in the background through the harness's headless mode. It is false
	// where extraction runs inside the user's own session instead
	// (Claude Code's /kk-curate), which a background run would bill twice.
	Drain bool
	// PromptArgMax is the longest prompt (in bytes) a headless run passes
	// as a command-line argument; a longer one goes on standard input.
	PromptArgMax int
	// Capture says how the capture hook gets the session's transcript.
	Capture CaptureMode
	// Files are the repository locations kk owns in the harness.
	Files Paths
	// Model is how the harness's headless command line takes a model
	// setting (ModelArgs).
	Model ModelFlags
	// Memory are the patterns of the harness's memory files (see
	// FindMemoryFiles).
	Memory []string
}

// EnvMarker is an environment variable a harness sets in the processes it
// starts: Name equal to Value, or set to anything non-empty when Value is
// "".
type EnvMarker struct {
	Name  string
	Value string
}

// present reports whether the marker is in the environment getenv reads.
func (m EnvMarker) present(getenv func(string) string) bool {
	v := getenv(m.Name)
	if m.Value == "" {
		return v != ""
	}
	return v == m.Value
}

// CaptureMode is how the capture hook gets a session's transcript.
type CaptureMode int

const (
	// CaptureInline reads the transcript file the payload names, within
	// the hook's deadline.
	CaptureInline CaptureMode = iota
	// CaptureDetached gets the transcript from the harness itself, which
	// takes seconds (OpenCode's `opencode export`): the hook starts a
	// detached capture with a deadline of its own and returns at once.
	CaptureDetached
	// CaptureSettled is for a harness that writes the turn to its
	// transcript only after its hooks ran (Copilot CLI): a detached
	// capture waits for the file to settle (see TranscriptSettler), then
	// reads it.
	CaptureSettled
)

func (m CaptureMode) String() string {
	switch m {
	case CaptureInline:
		return "inline"
	case CaptureDetached:
		return "detached"
	case CaptureSettled:
		return "settled"
	}
	return fmt.Sprintf("CaptureMode(%d)", int(m))
}

// PromptFitsArg reports whether a headless run may pass prompt as a
// command-line argument.
func (s Spec) PromptFitsArg(prompt string) bool { return len(prompt) <= s.PromptArgMax }

// Detected reports whether the process runs inside the harness: one of
// its markers is in the environment getenv reads.
func (s Spec) Detected(getenv func(string) string) bool {
	for _, m := range s.Detect {
		if m.present(getenv) {
			return true
		}
	}
	return false
}

// idShape is what an adapter id may look like.
var idShape = regexp.MustCompile(`^[a-z][a-z0-9-]*$`)

// Check reports what is wrong with a spec, or nil: every field a shared
// caller relies on is set, and the files are clean relative paths.
func (s Spec) Check() error {
	var bad []string
	if !idShape.MatchString(s.ID) {
		bad = append(bad, fmt.Sprintf("id %q is not lowercase letters, digits and hyphens", s.ID))
	}
	for _, f := range [...][2]string{{"name", s.Name}, {"binary", s.Binary}, {"install hint", s.InstallHint}} {
		if strings.TrimSpace(f[1]) == "" {
			bad = append(bad, "no "+f[0])
		}
	}
	for _, m := range s.Detect {
		if m.Name == "" {
			bad = append(bad, "a detection marker without a variable name")
		}
	}
	if s.Priority <= 0 {
		bad = append(bad, "no detection priority (a positive number)")
	}
	for _, f := range [...]struct {
		name string
		args []string
	}{{"model", s.Model.Name}, {"effort", s.Model.Effort}, {"agent", s.Model.Agent}} {
		if f.args != nil && !slices.ContainsFunc(f.args, func(a string) bool { return strings.Contains(a, "%s") }) {
			bad = append(bad, fmt.Sprintf("the %s flag %q has no %%s for the value", f.name, f.args))
		}
	}
	if s.Model.Efforts != nil && s.Model.Effort == nil {
		bad = append(bad, "effort levels without an effort flag")
	}
	if s.PromptArgMax <= 0 || s.PromptArgMax > 128<<10 {
		bad = append(bad, fmt.Sprintf("prompt argument limit %d is not in 1…128 KiB", s.PromptArgMax))
	}
	files := append(append([]string{}, s.Files.Config...), s.Files.Other...)
	if s.Files.Skills != "" {
		files = append(files, s.Files.Skills)
	}
	if len(s.Files.Config) == 0 {
		bad = append(bad, "no configuration file")
	}
	for _, f := range files {
		if f == "" || path.IsAbs(f) || path.Clean(f) != f || strings.HasPrefix(f, "../") || strings.Contains(f, `\`) {
			bad = append(bad, fmt.Sprintf("file %q is not a clean slash-separated path relative to the repository", f))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("harness spec %q: %s", s.ID, strings.Join(bad, "; "))
}

// Base gives an adapter the Adapter methods that read its Spec. Adapters
// embed it: harnesses/<id>/<id>.go declares the spec, and the methods
// come from here.
type Base struct {
	S Spec
}

// Spec implements Adapter.
func (b Base) Spec() Spec { return b.S }

// ID implements Adapter.
func (b Base) ID() string { return b.S.ID }

// Name implements Adapter.
func (b Base) Name() string { return b.S.Name }

// Binary implements Adapter.
func (b Base) Binary() string { return b.S.Binary }

// InstallHint implements Adapter.
func (b Base) InstallHint() string { return b.S.InstallHint }

// Detect implements Adapter.
func (b Base) Detect(getenv func(string) string) bool { return b.S.Detected(getenv) }

// Paths implements Adapter.
func (b Base) Paths() Paths { return b.S.Files }
