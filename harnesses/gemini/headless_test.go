package gemini

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// fakeBinary puts a fake gemini (harnesstest.RecorderScript) first on
// PATH and returns the folder it reports into.
func fakeBinary(t *testing.T, out string) string {
	t.Helper()
	return harnesstest.Recorder(t, "gemini", out)
}

var fakeArgs = harnesstest.RecordedArgs

// The document `gemini -p … --output-format json` prints
// (docs/cli/headless.md, "Response Schema").
const jsonOutput = `{
  "response": "{\"practice\":[],\"map\":[]}",
  "stats": {
    "models": {"gemini-2.5-flash": {"api": {"totalRequests": 1, "totalErrors": 0, "totalLatencyMs": 900}, "tokens": {"prompt": 10, "candidates": 5, "total": 15, "cached": 0, "thoughts": 0, "tool": 0}}},
    "tools": {"totalCalls": 0, "totalSuccess": 0, "totalFail": 0, "totalDurationMs": 0, "totalDecisions": {"accept": 0, "reject": 0, "modify": 0, "auto_accept": 0}, "byName": {}},
    "files": {"totalLinesAdded": 0, "totalLinesRemoved": 0}
  }
}
`

func TestHeadless(t *testing.T) {
	dir := fakeBinary(t, jsonOutput)
	log := filepath.Join(t.TempDir(), "_logs", "proposal", "s.json")
	got, err := New().Headless(context.Background(), harness.HeadlessRun{
		Prompt:  "Extract candidates.",
		Stdin:   strings.NewReader("[USER]: hi"),
		Model:   harness.Model{Harness: "gemini", Name: "gemini-2.5-flash", Effort: "high"},
		LogFile: log,
		Timeout: 10 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"practice":[],"map":[]}` {
		t.Errorf("answer = %q", got)
	}
	if args := fakeArgs(t, dir); !slices.Equal(args, []string{"-p", "Extract candidates.", "--output-format", "json", "-m", "gemini-2.5-flash"}) {
		t.Errorf("args = %q", args)
	}
	if env := string(readFile(t, filepath.Join(dir, "env"))); env != "1" {
		t.Errorf("KK_INTERNAL in the child = %q, want 1", env)
	}
	if in := string(readFile(t, filepath.Join(dir, "stdin"))); in != "[USER]: hi" {
		t.Errorf("stdin = %q", in)
	}
	if l := string(readFile(t, log)); l != jsonOutput {
		t.Errorf("log = %q", l)
	}
}

func TestHeadlessVariants(t *testing.T) {
	ctx := context.Background()
	a := New()

	// A notice before the document, another harness's model setting.
	dir := fakeBinary(t, "Loaded cached credentials.\n"+jsonOutput)
	got, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p", Model: harness.Model{Harness: "codex", Name: "o4"}})
	if err != nil || got != `{"practice":[],"map":[]}` {
		t.Errorf("answer = %q, %v", got, err)
	}
	if slices.Contains(fakeArgs(t, dir), "-m") {
		t.Error("another harness's model was passed")
	}

	// Plain text from a build that prints text.
	fakeBinary(t, "just text\n")
	if got, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err != nil || got != "just text" {
		t.Errorf("plain text: %q, %v", got, err)
	}

	// A long prompt goes on stdin after the input, without -p.
	dir = fakeBinary(t, jsonOutput)
	prompt := strings.Repeat("line of transcript\n", 8000)
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: prompt, Stdin: strings.NewReader("input")}); err != nil {
		t.Fatal(err)
	}
	if slices.Contains(fakeArgs(t, dir), "-p") {
		t.Error("a long prompt was passed as an argument")
	}
	if in := string(readFile(t, filepath.Join(dir, "stdin"))); in != "input\n\n"+prompt {
		t.Errorf("stdin holds %d bytes", len(in))
	}
}

func TestHeadlessFailures(t *testing.T) {
	ctx := context.Background()
	a := New()

	fakeBinary(t, `{"response": null, "error": {"type": "AuthError", "message": "not signed in", "code": 41}}`)
	t.Setenv("FAKE_EXIT", "41")
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "exit code 41") || !strings.Contains(err.Error(), "AuthError: not signed in") {
		t.Errorf("JSON error: %v", err)
	}

	// 0.61 in a folder the user has not trusted: exit 55, nothing run.
	fakeBinary(t, "")
	t.Setenv("FAKE_EXIT", "55")
	t.Setenv("FAKE_ERR", "Gemini CLI is not running in a trusted directory.")
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); !errors.Is(err, harness.ErrNotReady) || !strings.Contains(err.Error(), "GEMINI_CLI_TRUST_WORKSPACE=true") {
		t.Errorf("untrusted folder: %v", err)
	}

	fakeBinary(t, "")
	t.Setenv("FAKE_EXIT", "1")
	t.Setenv("FAKE_ERR", "boom")
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "boom") {
		t.Errorf("stderr tail: %v", err)
	}

	fakeBinary(t, `{"response": "x", "error": {"type": "ApiError", "message": "quota"}}`)
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "quota") {
		t.Errorf("error with exit 0: %v", err)
	}

	fakeBinary(t, `{"response": "  ", "stats": {}}`)
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil {
		t.Error("an empty response was accepted")
	}

	fakeBinary(t, "")
	t.Setenv("FAKE_SLEEP", "5")
	start := time.Now()
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p", Timeout: 200 * time.Millisecond}); err == nil || !strings.Contains(err.Error(), "timed out after 200ms") {
		t.Errorf("timeout: %v", err)
	}
	if time.Since(start) > 4*time.Second {
		t.Errorf("timeout took %s", time.Since(start))
	}

	t.Setenv("PATH", t.TempDir())
	if _, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "@google/gemini-cli") {
		t.Errorf("missing binary: %v", err)
	}
}
