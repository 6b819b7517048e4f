package copilot

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// fakeBinary puts a fake copilot (harnesstest.RecorderScript) first on
// PATH and returns the folder it reports into.
func fakeBinary(t *testing.T, out string) string {
	t.Helper()
	return harnesstest.Recorder(t, "copilot", out)
}

var fakeArgs = harnesstest.RecordedArgs

// A JSONL event stream as `copilot -p … --output-format json` prints it
// (harnesses.md §5.4; event names from the Copilot session-event schema).
const eventStream = `{"type":"user.message","data":{"content":"extract"}}
{"type":"assistant.turn_start","data":{"turnId":"0"}}
{"type":"assistant.message_delta","data":{"messageId":"m1","deltaContent":"{\"pra"}}
{"type":"assistant.message","data":{"messageId":"m0","content":"Let me think.","toolRequests":[]}}
{"type":"assistant.message","data":{"messageId":"m1","content":"{\"practice\":[],\"map\":[]}","toolRequests":[]}}
{"type":"assistant.turn_end","data":{"turnId":"0"}}
{"type":"result","data":{"exitCode":0,"sessionDurationMs":1200}}
`

func TestHeadless(t *testing.T) {
	dir := fakeBinary(t, eventStream)
	log := filepath.Join(t.TempDir(), "_logs", "proposal", "s.jsonl")
	got, err := New().Headless(context.Background(), harness.HeadlessRun{
		Prompt:  "Extract candidates.",
		Stdin:   strings.NewReader("[USER]: hi"),
		Model:   harness.Model{Harness: "copilot", Name: "claude-haiku-4.5", Effort: "high"},
		LogFile: log,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"practice":[],"map":[]}` {
		t.Errorf("answer = %q", got)
	}
	want := []string{"-p", "Extract candidates.\n\n--- input ---\n[USER]: hi", "--output-format", "json", "--no-ask-user", "--disable-builtin-mcps", "--model", "claude-haiku-4.5", "--reasoning-effort", "high"}
	if args := fakeArgs(t, dir); !slices.Equal(args, want) {
		t.Errorf("args = %q\nwant %q", args, want)
	}
	if env := string(readFile(t, filepath.Join(dir, "env"))); env != "1" {
		t.Errorf("KK_INTERNAL in the child = %q, want 1", env)
	}
	if l := string(readFile(t, log)); l != eventStream {
		t.Errorf("log file = %q", l)
	}
}

func TestHeadlessOtherHarnessModelAndPlainText(t *testing.T) {
	dir := fakeBinary(t, "  plain answer from an older build\n")
	got, err := New().Headless(context.Background(), harness.HeadlessRun{
		Prompt: "p",
		Model:  harness.Model{Harness: "claude", Name: "haiku"},
	})
	if err != nil || got != "plain answer from an older build" {
		t.Fatalf("answer = %q, %v", got, err)
	}
	if args := fakeArgs(t, dir); slices.Contains(args, "--model") {
		t.Errorf("another harness's model was passed: %q", args)
	}
}

func TestHeadlessLongPromptGoesToStdin(t *testing.T) {
	dir := fakeBinary(t, eventStream)
	prompt := strings.Repeat("transcript line\n", 10000) // 160 KB, over one argument's limit
	if _, err := New().Headless(context.Background(), harness.HeadlessRun{Prompt: prompt}); err != nil {
		t.Fatal(err)
	}
	if args := fakeArgs(t, dir); slices.Contains(args, "-p") {
		t.Errorf("a long prompt was passed as an argument")
	}
	if in := string(readFile(t, filepath.Join(dir, "stdin"))); in != prompt {
		t.Errorf("stdin holds %d bytes, want %d", len(in), len(prompt))
	}
}

func TestHeadlessFailures(t *testing.T) {
	a := New()
	ctx := context.Background()

	fakeBinary(t, "")
	t.Setenv("FAKE_EXIT", "3")
	t.Setenv("FAKE_ERR", "Error: not authenticated")
	_, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"})
	if err == nil || !strings.Contains(err.Error(), "exit code 3") || !strings.Contains(err.Error(), "not authenticated") {
		t.Errorf("non-zero exit: %v", err)
	}

	fakeBinary(t, "")
	t.Setenv("FAKE_SLEEP", "5")
	start := time.Now()
	_, err = a.Headless(ctx, harness.HeadlessRun{Prompt: "p", Timeout: 200 * time.Millisecond})
	if err == nil || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Errorf("timeout: %v", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("timeout took %s", time.Since(start))
	}

	fakeBinary(t, `{"type":"assistant.turn_start","data":{}}`+"\n")
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "no assistant message") {
		t.Errorf("no answer: %v", err)
	}

	fakeBinary(t, `{"type":"assistant.message","data":{"content":"x"}}`+"\n"+`{"type":"result","data":{"exitCode":1}}`+"\n")
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "exit code 1") {
		t.Errorf("failed result event: %v", err)
	}

	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: " "}); err == nil {
		t.Error("an empty prompt was accepted")
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "npm install -g @github/copilot") {
		t.Errorf("missing binary: %v", err)
	}
}
