package codex

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

// fakeCodex is a stand-in for the codex binary: it records its arguments,
// the recursion guard, its stdin and the schema file it was given, and
// prints the JSONL events FAKE_MODE asks for (harnesses.md §2.4).
const fakeCodex = `#!/bin/sh
dir=$(dirname "$0")
if [ "$1" = "--version" ]; then echo "codex-cli 0.169.0"; exit 0; fi
printf '%s\n' "$@" > "$dir/args"
printf '%s' "$KK_INTERNAL" > "$dir/guard"
cat > "$dir/stdin"
rm -f "$dir/schema"
prev=""
for a in "$@"; do
  if [ "$prev" = "--output-schema" ]; then cat "$a" > "$dir/schema"; fi
  prev="$a"
done
case "$FAKE_MODE" in
answer)
  echo '{"type":"thread.started","thread_id":"019a"}'
  echo '{"type":"turn.started"}'
  echo '{"type":"item.completed","item":{"id":"item_0","type":"reasoning","text":"thinking"}}'
  echo '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"first"}}'
  echo '{"type":"item.started","item":{"id":"item_2","type":"command_execution","command":"ls"}}'
  echo '{"type":"item.completed","item":{"id":"item_3","type":"agent_message","text":"{\"practice\":[],\"map\":[]}"}}'
  echo '{"type":"turn.completed","usage":{"input_tokens":10,"output_tokens":5}}' ;;
retried)
  echo '{"type":"error","message":"stream disconnected, retrying"}'
  echo '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"after the retry"}}' ;;
failed)
  echo '{"type":"turn.started"}'
  echo '{"type":"turn.failed","error":{"message":"usage limit reached"}}' ;;
silent) echo '{"type":"turn.completed"}' ;;
fail) echo 'Error: not inside a trusted directory' >&2; exit 1 ;;
slow) exec sleep 10 ;;
esac
`

var installFake = harnesstest.InstallFake

func TestHeadless(t *testing.T) {
	dir := installFake(t, "codex", fakeCodex)
	t.Setenv("FAKE_MODE", "answer")
	log := filepath.Join(t.TempDir(), "proposal", "s1.jsonl")
	schema := []byte(`{"type":"object","additionalProperties":false}`)
	run := harness.HeadlessRun{
		Prompt:  "Extract the proposals.",
		Stdin:   strings.NewReader("[USER]: hi"),
		Schema:  schema,
		Model:   harness.Model{Harness: "codex", Name: "gpt-5-codex", Effort: "low"},
		LogFile: log,
		Timeout: 10 * time.Second,
	}
	got, err := New().Headless(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if got != `{"practice":[],"map":[]}` {
		t.Errorf("answer %q", got)
	}
	if g := string(read(t, filepath.Join(dir, "guard"))); g != "1" {
		t.Errorf("the child saw %s=%q", harness.RecursionEnv, g)
	}
	args := strings.Split(strings.TrimSuffix(string(read(t, filepath.Join(dir, "args"))), "\n"), "\n")
	if len(args) < 2 || args[len(args)-1] != "Extract the proposals." {
		t.Fatalf("args %q", args)
	}
	schemaFile := ""
	for i, a := range args {
		if a == "--output-schema" {
			schemaFile = args[i+1]
			args[i+1] = "<schema>"
		}
	}
	want := "exec --json --skip-git-repo-check --sandbox read-only --output-schema <schema> --model gpt-5-codex -c model_reasoning_effort=\"low\" Extract the proposals."
	if strings.Join(args, " ") != want {
		t.Errorf("args\n%s\nwant\n%s", strings.Join(args, " "), want)
	}
	if string(read(t, filepath.Join(dir, "schema"))) != string(schema) {
		t.Error("codex did not get the schema")
	}
	if _, err := os.Stat(schemaFile); !os.IsNotExist(err) {
		t.Errorf("schema file %s left behind", schemaFile)
	}
	if s := string(read(t, filepath.Join(dir, "stdin"))); s != "[USER]: hi" {
		t.Errorf("stdin %q", s)
	}
	if l := string(read(t, log)); !strings.Contains(l, `"type":"turn.completed"`) {
		t.Errorf("log holds %q", l)
	}

	// A long prompt goes through stdin, named by "-".
	long := strings.Repeat("y", spec.PromptArgMax+1)
	if _, err := New().Headless(context.Background(), harness.HeadlessRun{Prompt: long}); err != nil {
		t.Fatal(err)
	}
	if a := string(read(t, filepath.Join(dir, "args"))); a != "exec\n--json\n--skip-git-repo-check\n--sandbox\nread-only\n-\n" {
		t.Errorf("args with a long prompt: %q", a)
	}
	if s := read(t, filepath.Join(dir, "stdin")); string(s) != long {
		t.Errorf("stdin with a long prompt: %d bytes", len(s))
	}
}

func TestHeadlessFailures(t *testing.T) {
	installFake(t, "codex", fakeCodex)
	a := New()
	t.Setenv("FAKE_MODE", "retried")
	if got, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "p"}); err != nil || got != "after the retry" {
		t.Errorf("an error event followed by an answer: %q %v", got, err)
	}
	for _, c := range []struct {
		mode, msg string
		schema    []byte
	}{
		{mode: "failed", msg: "codex reported an error: usage limit reached"},
		{mode: "silent", msg: "codex printed no agent message"},
		{mode: "fail", msg: "codex failed (exit code 1): Error: not inside a trusted directory"},
		{mode: "slow", msg: "codex timed out after 300ms"},
		{mode: "answer", msg: "the answer schema is not valid JSON", schema: []byte("{")},
	} {
		t.Setenv("FAKE_MODE", c.mode)
		_, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "p", Schema: c.schema, Timeout: timeoutFor(c.mode)})
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: error %v, want %q", c.mode, err, c.msg)
		}
	}
}

func TestLaunchAndDetect(t *testing.T) {
	a := New()
	for prompt, want := range map[string]string{
		"/kk-curate":                "exec --sandbox workspace-write $kk-curate",
		"/kk-bootstrap --from docs": "exec --sandbox workspace-write $kk-bootstrap --from docs",
		"summarise the repo":        "exec --sandbox workspace-write summarise the repo",
		"//not a skill":             "exec --sandbox workspace-write //not a skill",
	} {
		if got := strings.Join(a.LaunchArgs(prompt, harness.Model{}), " "); got != want {
			t.Errorf("%q: %q, want %q", prompt, got, want)
		}
	}
	env := map[string]string{"CODEX_THREAD_ID": "019a"}
	if !a.Detect(func(k string) string { return env[k] }) {
		t.Error("CODEX_THREAD_ID not detected")
	}
	if a.Detect(func(string) string { return "" }) {
		t.Error("detected without CODEX_THREAD_ID")
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
