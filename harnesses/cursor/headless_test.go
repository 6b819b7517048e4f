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

func TestHeadless(t *testing.T) {
	out := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": recordingAgent(t, out, okAnswer)})}
	log := filepath.Join(out, "logs", "proposal.jsonl")
	got, err := a.Headless(context.Background(), harness.HeadlessRun{
		Prompt:  "Extract candidates.",
		Model:   map[string]any{"name": "gpt-5", "effort": "low"},
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
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "agent", "exit 0")})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x", Model: map[string]any{"name": 3}}); err == nil {
		t.Error("a model name that is not a string was accepted")
	}
}

func TestHeadlessFindsOldBinaryName(t *testing.T) {
	out := t.TempDir()
	dir := t.TempDir()
	os.Rename(filepath.Join(recordingAgent(t, out, okAnswer), "agent"), filepath.Join(dir, "cursor-agent"))
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": dir})}
	if _, err := a.Headless(context.Background(), harness.HeadlessRun{Prompt: "x"}); err != nil {
		t.Fatal(err)
	}
}

var checksByName = harnesstest.ByName

func TestDoctor(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	bin := fakeBinary(t, "agent", "echo '2026.06.12-abc123'\n")
	if err := os.WriteFile(filepath.Join(bin, "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": bin, "HOME": home})}

	// Nothing installed.
	cs := checksByName(a.Doctor(context.Background(), root))
	if c := cs["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "missing") {
		t.Errorf("hooks: %+v", c)
	}
	if c := cs["binary"]; c.Level != levelOK || c.Message != "agent 2026.06.12-abc123" {
		t.Errorf("binary: %+v", c)
	}
	if c := cs["transcripts"]; c.Level != levelWarn || !strings.Contains(c.Message, "no transcript path") {
		t.Errorf("transcripts: %+v", c)
	}

	// Installed with the shipped skills, transcripts present.
	if _, err := a.Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: shippedSkills()}); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(home, ".cursor", "projects", slug(root), "agent-transcripts"), 0o755); err != nil {
		t.Fatal(err)
	}
	all := a.Doctor(context.Background(), root)
	for _, c := range all {
		if c.Level != levelOK {
			t.Errorf("%s: %s %s (fix: %s)", c.Name, c.Level, c.Message, c.Fix)
		}
	}
	cs = checksByName(all)
	for _, name := range []string{"binary", "hooks", "kk-command", "skills", "context", "transcripts", "limits"} {
		if _, ok := cs[name]; !ok {
			t.Errorf("no %s check", name)
		}
	}

	// Out of date: an entry timeout changed by hand, a skill edited.
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, []byte(strings.Replace(string(read(t, hooksPath)), `"timeout": 30`, `"timeout": 99`, 1)))
	write(t, filepath.Join(root, ".cursor", "skills", "kk-add", "SKILL.md"), []byte("edited\n"))
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "older set") {
		t.Errorf("hooks: %+v", c)
	}
	if c := cs["skills"]; c.Level != levelWarn || !strings.Contains(c.Message, "kk-add") {
		t.Errorf("skills: %+v", c)
	}

	// The hook command is not on PATH; the agent binary is missing.
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": t.TempDir(), "HOME": home})}
	cs = checksByName(a.Doctor(context.Background(), root))
	if c := cs["kk-command"]; c.Level != levelWarn || !strings.Contains(c.Message, `"kk"`) {
		t.Errorf("kk-command: %+v", c)
	}
	if c := cs["binary"]; c.Level != levelWarn || c.Fix == "" {
		t.Errorf("binary: %+v", c)
	}

	// A broken file is an error; kenkeep's hooks are reported.
	write(t, hooksPath, []byte("{"))
	if c := checksByName(a.Doctor(context.Background(), root))["hooks"]; c.Level != levelErr {
		t.Errorf("broken hooks file: %+v", c)
	}
	write(t, hooksPath, []byte(`{"version":1,"hooks":{"stop":[{"command":"node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs"}]}}`))
	if c := checksByName(a.Doctor(context.Background(), root))["hooks"]; c.Level != levelWarn || !strings.Contains(c.Message, "kenkeep") {
		t.Errorf("kenkeep hooks: %+v", c)
	}
}

func TestDoctorBinaryTimeout(t *testing.T) {
	old := versionTimeout
	versionTimeout = 200 * time.Millisecond
	defer func() { versionTimeout = old }()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"PATH": fakeBinary(t, "agent", "exec sleep 5\n")})}
	c := a.checkBinary(context.Background())
	if c.Level != levelWarn || !strings.Contains(c.Message, "did not answer") {
		t.Errorf("%+v", c)
	}
}
