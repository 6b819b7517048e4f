package cursor

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

// recordingAgent is a fake `agent` that records its arguments, the
// recursion guard and its stdin into out, then prints answer.
func recordingAgent(t *testing.T, out, answer string) string {
	t.Helper()
	return fakeBinary(t, "agent", harnesstest.Records(out)+"printf '%s\\n' '"+answer+"'\n")
}

const okAnswer = `{"type":"result","subtype":"success","is_error":false,"duration_ms":812,"duration_api_ms":790,"result":"{\"practice\":[],\"map\":[]}","session_id":"5a1f","request_id":"r1"}`

var checksByName = harnesstest.ByName

func TestHeadless(t *testing.T) {
	out := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingAgent(t, out, okAnswer)})}
	log := filepath.Join(out, "logs", "proposal.jsonl")
	got, err := a.Headless(context.Background(), harness.HeadlessRun{
		Prompt:  "Extract candidates.",
		Model:   harness.Model{Name: "gpt-5", Effort: "low"},
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
	if args := string(read(t, filepath.Join(out, "args"))); args != "-p\n--output-format\njson\n--model\ngpt-5\nExtract candidates.\n" {
		t.Errorf("args:\n%s", args)
	}
	if l := string(read(t, log)); l != okAnswer+"\n" {
		t.Errorf("log file %q", l)
	}
}

func TestHeadlessInputGoesOnStdin(t *testing.T) {
	out := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingAgent(t, out, okAnswer)})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "Extract.", Stdin: strings.NewReader("[USER]: hi")}); err != nil {
		t.Fatal(err)
	}
	if args := string(read(t, filepath.Join(out, "args"))); args != "-p\n--output-format\njson\n-\n" {
		t.Errorf("args:\n%s", args)
	}
	if in := string(read(t, filepath.Join(out, "stdin"))); in != "Extract.\n\n[USER]: hi" {
		t.Errorf("stdin %q", in)
	}
	long := strings.Repeat("x", spec.PromptArgMax+1)
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: long}); err != nil {
		t.Fatal(err)
	}
	if in := string(read(t, filepath.Join(out, "stdin"))); in != long {
		t.Errorf("a long prompt did not go on stdin (%d bytes)", len(in))
	}
}

func TestHeadlessFailures(t *testing.T) {
	for _, tc := range []struct {
		name, script, want string
		timeout            time.Duration
	}{
		{"exit", "echo 'not logged in' >&2; exit 3", "exit code 3): not logged in", 0},
		{"no result", "echo 'hello'", "no result line", 0},
		{"is_error", `printf '%s\n' '{"type":"result","subtype":"error","is_error":true,"result":"quota exceeded"}'`, "quota exceeded", 0},
		{"timeout", "exec sleep 5", "timed out after 200ms", 200 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "agent", tc.script)})}
			_, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x", Timeout: tc.timeout})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir()})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "cursor.com/install") {
		t.Errorf("missing binary: %v", err)
	}
}

func TestHeadlessFindsOldBinaryName(t *testing.T) {
	out := t.TempDir()
	dir := t.TempDir()
	if err := os.Rename(filepath.Join(recordingAgent(t, out, okAnswer), "agent"), filepath.Join(dir, "cursor-agent")); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": dir})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
}
