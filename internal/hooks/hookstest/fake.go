// Package hookstest is a fake harness adapter for tests of the hook
// runtime: a harness with a small, documented JSON payload, a JSONL
// transcript and a headless mode that runs a binary found on PATH. It
// stands in for the real adapters under harnesses/ so that the runtime can
// be tested on its own. Only tests import it.
//
// Payload (stdin of `kk hook <event> --harness fake`):
//
//	{"hook_event_name": "Stop", "session_id": "…", "cwd": "…",
//	 "transcript_path": "…", "prompt": "…", "last_assistant_message": "…"}
//
// Transcript, one JSON object a line:
//
//	{"role": "user", "text": "…"}
//	{"role": "assistant", "text": "…"}
//	{"tool": "Read", "path": "…"}
//
// Hook output: {"event": "<event>", "context": "<text>"} and a newline.
//
// Headless: runs Binary (default "fake-agent") with the arguments "-p",
// the prompt on its standard input, and returns its standard output.
package hookstest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// ID is the fake harness's id.
const ID = "fake"

// Adapter is the fake harness.
type Adapter struct {
	// AdapterID replaces the id "fake" (to stand in for a real harness,
	// such as "claude", where the runtime treats one differently).
	AdapterID string
	// Bin is the headless binary; empty means "fake-agent".
	Bin string
	// NoContext makes HookOutput report that the harness has no context
	// channel (as Copilot's CLI has none).
	NoContext bool
	// BlockParse, when not nil, makes ParseTranscript wait until it is
	// closed: a harness whose transcript never arrives, for deadline tests.
	BlockParse chan struct{}
	// Capture is the spec's capture mode (inline by default).
	Capture harness.CaptureMode
	// SettledWhen, when set, answers Settled: whether a transcript is
	// complete (a file ending with a line holding it, say). Unset, every
	// transcript has settled.
	SettledWhen func(data []byte) bool
}

// Settled implements harness.TranscriptSettler: SettledWhen on the file's
// content.
func (a *Adapter) Settled(path string) (bool, error) {
	data, err := os.ReadFile(path)
	if err != nil || a.SettledWhen == nil {
		return err == nil, nil
	}
	return a.SettledWhen(data), nil
}

var _ harness.Adapter = (*Adapter)(nil)

// Spec implements harness.Adapter: the fake's spec, with AdapterID and
// Bin when set. A fake standing in for Claude Code ("claude") does not
// drain, as Claude Code does not.
func (a *Adapter) Spec() harness.Spec {
	s := harness.Spec{
		ID:           ID,
		Name:         "Fake harness",
		Binary:       "fake-agent",
		InstallHint:  "the fake harness is a test double; write a fake-agent script on PATH",
		Detect:       []harness.EnvMarker{{Name: "KK_FAKE_HARNESS", Value: "1"}},
		Priority:     100,
		Drain:        true,
		PromptArgMax: harness.DefaultPromptArgMax,
		Capture:      a.Capture,
		Files:        harness.Paths{Config: []string{".fake/hooks.json"}},
	}
	if a.AdapterID != "" {
		s.ID = a.AdapterID
		s.Drain = a.AdapterID != "claude"
	}
	if a.Bin != "" {
		s.Binary = a.Bin
	}
	return s
}

func (a *Adapter) ID() string     { return a.Spec().ID }
func (a *Adapter) Name() string   { return a.Spec().Name }
func (a *Adapter) Binary() string { return a.Spec().Binary }
func (a *Adapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := a.Spec().ModelArgs(m)
	return append([]string{"-p", prompt}, margs...)
}
func (a *Adapter) InstallHint() string                    { return a.Spec().InstallHint }
func (a *Adapter) Detect(getenv func(string) string) bool { return a.Spec().Detected(getenv) }
func (a *Adapter) Paths() harness.Paths                   { return a.Spec().Files }

// Install writes nothing: the fake harness has no configuration files.
func (a *Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	return nil, nil
}

// Uninstall removes nothing, since Install wrote nothing.
func (a *Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	return nil, nil
}

// ParseHookInput decodes the fake payload, Claude Code's fields
// (harness.ClaudeFields); anything but one JSON object is an error, and a
// field of another type is recorded in Mistyped as the real adapters do.
func (a *Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	fields, err := harness.DecodePayload(data, "fake payload")
	if err != nil {
		return in, err
	}
	harness.StringFields(fields, harness.ClaudeFields(&in)...)
	return in, nil
}

// HookOutput wraps context in the fake harness's JSON envelope.
func (a *Adapter) HookOutput(event harness.Event, text string) ([]byte, bool) {
	if a.NoContext {
		return nil, false
	}
	out, err := json.Marshal(map[string]string{"event": string(event), "context": text})
	if err != nil {
		return nil, false
	}
	return append(out, '\n'), true
}

type line struct {
	Role string `json:"role"`
	Text string `json:"text"`
	Tool string `json:"tool"`
	Path string `json:"path"`
}

// ParseTranscript reads the fake JSONL transcript. A line that is not JSON
// is an error naming it.
func (a *Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	if a.BlockParse != nil {
		<-a.BlockParse
	}
	var t harness.Transcript
	br := bufio.NewReaderSize(r, 1<<16)
	for n := 1; ; n++ {
		raw, err := br.ReadBytes('\n')
		if len(bytes.TrimSpace(raw)) > 0 {
			var l line
			if jerr := json.Unmarshal(raw, &l); jerr != nil {
				return t, fmt.Errorf("transcript line %d: %w", n, jerr)
			}
			switch {
			case l.Path != "":
				t.Reads = append(t.Reads, harness.Read{Path: l.Path, Tool: l.Tool})
			case l.Role == "user":
				t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: l.Text})
			case l.Role == "assistant":
				t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: l.Text})
			}
		}
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return t, err
		}
	}
}

// Headless runs the fake agent binary with the prompt on its standard
// input. The child inherits kk's environment unchanged.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	if run.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, run.Timeout)
		defer cancel()
	}
	bin, err := exec.LookPath(a.Binary())
	if err != nil {
		return "", harness.NotReady(fmt.Errorf("%s not found: %w", a.Binary(), err))
	}
	cmd := exec.CommandContext(ctx, bin, "-p")
	cmd.Stdin = strings.NewReader(run.Prompt)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("%s failed: %v: %s", a.Binary(), err, strings.TrimSpace(errb.String()))
	}
	if run.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(run.LogFile), 0o755); err == nil {
			_ = os.WriteFile(run.LogFile, out.Bytes(), 0o644)
		}
	}
	return out.String(), nil
}

// Doctor has nothing to check.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check { return nil }
