package opencode

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// fakeBinary writes an executable shell script named name into a new
// folder and returns the folder, for use as PATH.
var fakeBinary = harnesstest.Sh

// recordingOpencode is a fake `opencode` that records its arguments,
// working folder, the recursion guard and its stdin into out, then prints
// the file answer.
func recordingOpencode(t *testing.T, out, answer string) string {
	t.Helper()
	return fakeBinary(t, "opencode", harnesstest.Records(out)+"cat '"+answer+"'\n")
}

func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

var checksByName = harnesstest.ByName

func TestHeadless(t *testing.T) {
	for _, fixture := range []string{"run-format-json.jsonl", "run-bus-events.jsonl"} {
		t.Run(fixture, func(t *testing.T) {
			out := t.TempDir()
			a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingOpencode(t, out, abs(t, filepath.Join("testdata", fixture)))})}
			log := filepath.Join(out, "logs", "p.jsonl")
			got, err := a.Headless(context.Background(), harness.HeadlessRun{
				Prompt:  "Extract candidates.",
				Stdin:   strings.NewReader("[USER]: hi"),
				Model:   harness.Model{Name: "anthropic/claude-haiku-4-5", Effort: "high", Agent: "plan"},
				LogFile: log,
				Timeout: 10 * time.Second,
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != `{"practice":[],"map":[]}` {
				t.Errorf("answer %q", got)
			}
			if g := string(read(t, filepath.Join(out, "guard"))); g != "1" {
				t.Errorf("KK_INTERNAL in the child = %q, want 1", g)
			}
			if args := string(read(t, filepath.Join(out, "args"))); args != "run\n--format\njson\n--model\nanthropic/claude-haiku-4-5\n--variant\nhigh\n--agent\nplan\nExtract candidates.\n" {
				t.Errorf("args:\n%s", args)
			}
			if in := string(read(t, filepath.Join(out, "stdin"))); in != "[USER]: hi" {
				t.Errorf("stdin %q", in)
			}
			if l := read(t, log); string(l) != string(read(t, filepath.Join("testdata", fixture))) {
				t.Errorf("log file %q", l)
			}
		})
	}
}

func TestHeadlessLongPromptGoesOnStdin(t *testing.T) {
	out := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingOpencode(t, out, abs(t, filepath.Join("testdata", "run-format-json.jsonl")))})}
	long := strings.Repeat("x", spec.PromptArgMax+1)
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: long, Stdin: strings.NewReader("in")}); err != nil {
		t.Fatal(err)
	}
	if args := string(read(t, filepath.Join(out, "args"))); args != "run\n--format\njson\n" {
		t.Errorf("args:\n%s", args)
	}
	if in := string(read(t, filepath.Join(out, "stdin"))); in != long+"\n\nin" {
		t.Errorf("stdin has %d bytes", len(in))
	}
}

func TestHeadlessFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
		timeout            time.Duration
	}{
		{"exit", "echo 'provider not configured' >&2; exit 1", "exit code 1): provider not configured", 0},
		{"no answer", `printf '%s\n' '{"type":"step_start","part":{"messageID":"m"}}'`, "no answer", 0},
		{"error event", `printf '%s\n' '{"type":"error","error":{"name":"ProviderAuthError","data":{"message":"no API key"}}}'`, "ProviderAuthError: no API key", 0},
		{"timeout", "exec sleep 5", "timed out after 200ms", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "opencode", tc.script)})}
			_, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x", Timeout: tc.timeout})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir()})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "opencode-ai") {
		t.Errorf("missing binary: %v", err)
	}
}

func TestExportTranscript(t *testing.T) {
	out := t.TempDir()
	project := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingOpencode(t, out, abs(t, filepath.Join("testdata", "transcripts", "synthetic.json")))})}
	dst := filepath.Join(t.TempDir(), "export.json")
	payload := []byte(`{"session_id":"ses_3a9bX2kLmN8pQ4rS7tUvW1yZ0c","hook_event_name":"session.idle","cwd":"` + project + `"}`)
	in, err := a.ParseHookInput(payload)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.ExportTranscript(context.Background(), in, dst); err != nil {
		t.Fatal(err)
	}
	if args := string(read(t, filepath.Join(out, "args"))); args != "export\nses_3a9bX2kLmN8pQ4rS7tUvW1yZ0c\n" {
		t.Errorf("args:\n%s", args)
	}
	if g := string(read(t, filepath.Join(out, "guard"))); g != "1" {
		t.Errorf("KK_INTERNAL in the export = %q, want 1", g)
	}
	if cwd := strings.TrimSpace(string(read(t, filepath.Join(out, "cwd")))); cwd != project {
		t.Errorf("export ran in %s, want the project folder %s", cwd, project)
	}
	f, err := os.Open(dst)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	tr, err := a.ParseTranscript(f)
	if err != nil || len(tr.Turns) != 4 {
		t.Errorf("exported transcript: %d turns, %v", len(tr.Turns), err)
	}
}

func TestExportTranscriptFailures(t *testing.T) {
	ok := harness.HookInput{SessionID: "ses_1"}
	for _, tc := range []struct {
		name, script string
		in           harness.HookInput
		want         string
	}{
		{"exit", "echo 'Session not found' >&2; exit 1", ok, "Session not found"},
		{"empty", "exit 0", ok, "printed nothing"},
		{"no session", "exit 0", harness.HookInput{CWD: "/x"}, "names no session"},
		{"flag-like id", "exit 0", harness.HookInput{SessionID: "--help"}, "not one"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "opencode", tc.script)})}
			dst := filepath.Join(t.TempDir(), "export.json")
			err := a.ExportTranscript(context.Background(), tc.in, dst)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			if exists(dst) {
				t.Error("a failed export left its file")
			}
		})
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir()})}
	if err := a.ExportTranscript(context.Background(), ok, filepath.Join(t.TempDir(), "e.json")); err == nil || !strings.Contains(err.Error(), "opencode-ai") {
		t.Errorf("missing binary: %v", err)
	}
	// Not on PATH, but the plugin named the OpenCode it runs in.
	named := ok
	named.Binary = filepath.Join(fakeBinary(t, "opencode", `echo '{"info":{},"messages":[]}'`), "opencode")
	if err := a.ExportTranscript(context.Background(), named, filepath.Join(t.TempDir(), "e.json")); err != nil {
		t.Errorf("export with the plugin's OpenCode: %v", err)
	}
	old := exportTimeout
	exportTimeout = 200 * time.Millisecond
	defer func() { exportTimeout = old }()
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "opencode", "exec sleep 5")})}
	if err := a.ExportTranscript(context.Background(), ok, filepath.Join(t.TempDir(), "e.json")); err == nil || !strings.Contains(err.Error(), "did not finish") {
		t.Errorf("timeout: %v", err)
	}
}
