package claude

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// fakeClaude is a stand-in for the claude binary: it records its
// arguments, the recursion guard and its stdin next to itself, and prints
// what FAKE_MODE asks for, in the shapes of harnesses.md §1.4.
const fakeClaude = `#!/bin/sh
dir=$(dirname "$0")
if [ "$1" = "--version" ]; then echo "2.1.330 (Claude Code)"; exit 0; fi
printf '%s\n' "$@" > "$dir/args"
printf '%s' "$KK_INTERNAL" > "$dir/guard"
printf '%s' "$CLAUDECODE" > "$dir/claudecode"
cat > "$dir/stdin"
case "$FAKE_MODE" in
result) echo '{"type":"result","subtype":"success","is_error":false,"result":"the answer","session_id":"s1","total_cost_usd":0.01}' ;;
structured) echo '{"type":"result","subtype":"success","is_error":false,"result":"","structured_output":{"practice":[],"map":[{"title":"a <b>"}]}}' ;;
array) echo '[{"type":"system","subtype":"init"},{"type":"assistant","message":{}},{"type":"result","is_error":false,"result":"from the array"}]' ;;
stream)
  echo '{"type":"system","subtype":"init","session_id":"s1"}'
  echo '{"type":"assistant","message":{"role":"assistant","content":[{"type":"text","text":"thinking aloud"}]}}'
  echo '{"type":"result","is_error":false,"result":"first"}'
  echo '{"type":"result","is_error":false,"result":"last"}' ;;
error) echo '{"type":"result","subtype":"error_during_execution","is_error":true,"result":"Credit balance is too low"}' ;;
none) echo '{"type":"system","subtype":"init"}' ;;
fail) echo 'partial' ; echo 'Error: not logged in' >&2; exit 3 ;;
slow) exec sleep 10 ;;
esac
`

// installFake puts a fake binary named name on PATH and returns its
// folder.
var installFake = harnesstest.InstallFake

func TestHeadless(t *testing.T) {
	dir := installFake(t, "claude", fakeClaude)
	t.Setenv("CLAUDECODE", "1") // kk running inside Claude Code
	a := New()
	ctx := context.Background()
	for _, c := range []struct {
		mode, want string
	}{
		{"result", "the answer"},
		{"structured", `{"practice":[],"map":[{"title":"a <b>"}]}`},
		{"array", "from the array"},
		{"stream", "last"},
	} {
		t.Setenv("FAKE_MODE", c.mode)
		log := filepath.Join(t.TempDir(), "logs", "run.jsonl")
		got, err := a.Headless(ctx, harness.HeadlessRun{Prompt: "/kk-session-extract", LogFile: log, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatalf("%s: %v", c.mode, err)
		}
		if got != c.want {
			t.Errorf("%s: answer %q, want %q", c.mode, got, c.want)
		}
		if guard := read(t, filepath.Join(dir, "guard")); string(guard) != "1" {
			t.Errorf("%s: the child saw %s=%q", c.mode, harness.RecursionEnv, guard)
		}
		if cc := read(t, filepath.Join(dir, "claudecode")); len(cc) != 0 {
			t.Errorf("%s: the child saw CLAUDECODE=%q and would refuse to start", c.mode, cc)
		}
		if logged := read(t, log); !strings.Contains(string(logged), `"type":"result"`) {
			t.Errorf("%s: log file holds %q", c.mode, logged)
		}
	}
}

func TestHeadlessArgs(t *testing.T) {
	dir := installFake(t, "claude", fakeClaude)
	t.Setenv("FAKE_MODE", "result")
	run := harness.HeadlessRun{
		Prompt: "Extract the proposals.",
		Stdin:  strings.NewReader("[USER]: hi"),
		Schema: []byte("{\n  \"type\": \"object\"\n}"),
		Model:  harness.Model{Harness: "claude", Name: "haiku", Effort: "low"},
	}
	if _, err := New().Headless(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	want := "-p\nExtract the proposals.\n--output-format\njson\n--json-schema\n{\"type\":\"object\"}\n--model\nhaiku\n--effort\nlow\n"
	if got := string(read(t, filepath.Join(dir, "args"))); got != want {
		t.Errorf("args:\n%s\nwant\n%s", got, want)
	}
	if got := string(read(t, filepath.Join(dir, "stdin"))); got != "[USER]: hi" {
		t.Errorf("stdin %q", got)
	}

	// A model choice for another harness is ignored.
	run = harness.HeadlessRun{Prompt: "p", Model: harness.Model{Harness: "codex", Name: "gpt-5"}}
	if _, err := New().Headless(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, filepath.Join(dir, "args"))); got != "-p\np\n--output-format\njson\n" {
		t.Errorf("args with another harness's model: %q", got)
	}

	// A prompt too long for one argument goes through stdin.
	long := strings.Repeat("x", spec.PromptArgMax+1)
	run = harness.HeadlessRun{Prompt: long, Stdin: strings.NewReader("tail")}
	if _, err := New().Headless(context.Background(), run); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, filepath.Join(dir, "args"))); got != "-p\n--output-format\njson\n" {
		t.Errorf("args with a long prompt: %q", got)
	}
	if got := string(read(t, filepath.Join(dir, "stdin"))); got != long+"\n\ntail" {
		t.Errorf("stdin with a long prompt: %d bytes", len(got))
	}
}

func TestHeadlessFailures(t *testing.T) {
	installFake(t, "claude", fakeClaude)
	a := New()
	for _, c := range []struct {
		mode, msg string
	}{
		{mode: "error", msg: "claude reported an error: Credit balance is too low"},
		{mode: "none", msg: "claude printed no result object"},
		{mode: "fail", msg: "claude failed (exit code 3): Error: not logged in"},
		{mode: "slow", msg: "claude timed out after 300ms"},
	} {
		t.Setenv("FAKE_MODE", c.mode)
		_, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "p", Timeout: timeoutFor(c.mode)})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.mode, err, c.msg)
		}
	}
	t.Setenv("PATH", t.TempDir())
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "p"}); err == nil || !strings.Contains(err.Error(), "claude is not on PATH") {
		t.Errorf("missing binary: %v", err)
	}
}

func TestLaunchAndDetect(t *testing.T) {
	a := New()
	if got := a.LaunchArgs("/kk-curate", harness.Model{}); strings.Join(got, " ") != "-p /kk-curate" {
		t.Errorf("launch args %q", got)
	}
	env := map[string]string{"CLAUDECODE": "1"}
	if !a.Detect(func(k string) string { return env[k] }) {
		t.Error("CLAUDECODE=1 not detected")
	}
	env = map[string]string{"CLAUDE_PROJECT_DIR": "/x"}
	if a.Detect(func(k string) string { return env[k] }) {
		t.Error("CLAUDE_PROJECT_DIR alone detected as Claude Code")
	}
}

// timeoutFor is the run's timeout in a failure case: short for the case
// that tests it, long enough for the others that a loaded machine never
// turns their failure into a timeout.
func timeoutFor(mode string) time.Duration {
	if mode == "slow" {
		return 300 * time.Millisecond
	}
	return 30 * time.Second
}
