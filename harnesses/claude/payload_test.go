package claude

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/kk-project/kk/internal/harness"
)

// The payload fixtures in testdata/payloads are written from the fields
// harnesses.md §1.1 lists for each event.
func TestParseHookInput(t *testing.T) {
	const (
		sid        = "6f1c3b2e-8d4a-4c1e-9b7f-2a5d8e0c4f11"
		transcript = "/home/dev/.claude/projects/-home-dev-app/6f1c3b2e-8d4a-4c1e-9b7f-2a5d8e0c4f11.jsonl"
	)
	base := harness.HookInput{SessionID: sid, CWD: "/home/dev/app", TranscriptPath: transcript}
	with := func(f func(*harness.HookInput)) harness.HookInput { in := base; f(&in); return in }
	for file, want := range map[string]harness.HookInput{
		"session-start.json": with(func(in *harness.HookInput) { in.HarnessEvent = "SessionStart" }),
		"user-prompt-submit.json": with(func(in *harness.HookInput) {
			in.HarnessEvent = "UserPromptSubmit"
			in.Prompt = "How do we run the database migrations?"
		}),
		"stop.json": with(func(in *harness.HookInput) {
			in.HarnessEvent = "Stop"
			in.LastMessage = "Migrations run with `make migrate`."
		}),
		"pre-compact.json": with(func(in *harness.HookInput) { in.HarnessEvent = "PreCompact" }),
		"session-end.json": with(func(in *harness.HookInput) { in.HarnessEvent = "SessionEnd" }),
	} {
		data, err := os.ReadFile(filepath.Join("testdata/payloads", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := New().ParseHookInput(data)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		if got != want {
			t.Errorf("%s:\ngot  %+v\nwant %+v", file, got, want)
		}
	}
}

func TestParseHookInputBad(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"", "empty"},
		{"  \n", "empty"},
		{"{\"session_id\": ", "not a JSON object"},
		{"[1]", "not a JSON object"},
		{"null", "null"},
	} {
		_, err := New().ParseHookInput([]byte(c.in))
		if err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want one mentioning %q", c.in, err, c.msg)
		}
	}
	// A known field of another type is an error for the hooks that read
	// it, and for them only; the rest of the payload reads.
	for _, c := range []struct {
		in, msg string
		use     harness.Use
	}{
		{`{"session_id": 42, "prompt": "p"}`, `"session_id" is a number`, harness.UseSessionID},
		{`{"prompt": {"text": "x"}, "session_id": "s"}`, `"prompt" is an object`, harness.UsePrompt},
	} {
		got, err := New().ParseHookInput([]byte(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if err := got.Check(c.use); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: Check %v, want one mentioning %q", c.in, err, c.msg)
		}
		if err := got.Check(^c.use); err != nil || got.SessionID+got.Prompt == "" {
			t.Errorf("%q: %+v, Check of the other fields %v", c.in, got, err)
		}
	}
	got, err := New().ParseHookInput([]byte(`{"session_id":"s","transcript_path":null,"future_field":{"a":1}}`))
	if err != nil || got.SessionID != "s" || got.TranscriptPath != "" {
		t.Errorf("null and unknown fields: %+v %v", got, err)
	}
}

func TestHookOutput(t *testing.T) {
	a := New()
	ctx := "# Project knowledge\n\nUse <kk> & friends: \"quoted\".\n"
	out, ok := a.HookOutput(harness.SessionStart, ctx)
	if !ok {
		t.Fatal("no session-start output")
	}
	golden(t, "output.session-start.json", out)
	out, ok = a.HookOutput(harness.PromptContext, "Relevant nodes:\n- [Migrations](.ai/kenkeep/nodes/db/migrations.md)\n")
	if !ok {
		t.Fatal("no prompt-context output")
	}
	golden(t, "output.prompt-context.json", out)
	for _, ev := range []harness.Event{harness.Capture, harness.ProposalDrain, harness.LintTick} {
		if _, ok := a.HookOutput(ev, "x"); ok {
			t.Errorf("%s has output", ev)
		}
	}
}

func TestHookOutputCapsContext(t *testing.T) {
	line := strings.Repeat("é😀x", 30) + "\n" // 30×(1+2+1) UTF-16 units + 1
	long := strings.Repeat(line, 200)
	out, ok := New().HookOutput(harness.SessionStart, long)
	if !ok {
		t.Fatal("no output")
	}
	var v struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	got := v.HookSpecificOutput.AdditionalContext
	if n := len(utf16.Encode([]rune(got))); n > contextLimit {
		t.Fatalf("context is %d UTF-16 units", n)
	}
	if !strings.HasSuffix(got, truncatedNote) {
		t.Fatal("no truncation note")
	}
	body := strings.TrimSuffix(got, truncatedNote)
	if !strings.HasPrefix(long, body) || !strings.HasSuffix(body, "x") {
		t.Fatalf("not cut at a line end: ...%q", body[len(body)-20:])
	}
	if short := capContext("short"); short != "short" {
		t.Fatalf("short text changed: %q", short)
	}
}

// The shared context cap, under the names the test above uses.
var capContext = harness.CapContext

const (
	contextLimit  = harness.ContextLimit
	truncatedNote = harness.CutNote
)
