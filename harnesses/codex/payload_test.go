package codex

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/kk-project/kk/internal/harness"
)

const (
	sid        = "019a4b1c-7e2d-7f3a-9c4b-5d6e7f8a9b0c"
	rolloutRel = "sessions/2026/11/20/rollout-2026-11-20T10-00-00-" + sid + ".jsonl"
)

// The payload fixtures in testdata/payloads are written from the fields
// harnesses.md §2.1 lists for each Codex event (stop-old.json is the older
// shape with "event" and no transcript_path; stop-ephemeral.json is a
// --ephemeral session's, with a null transcript_path).
func TestParseHookInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	now = func() time.Time { return time.Date(2026, 11, 21, 0, 30, 0, 0, time.UTC) }
	defer func() { now = time.Now }()
	rollout := filepath.Join(home, filepath.FromSlash(rolloutRel))
	if err := os.MkdirAll(filepath.Dir(rollout), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rollout, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	transcript := "/home/dev/.codex/" + rolloutRel
	base := harness.HookInput{SessionID: sid, CWD: "/home/dev/app", TranscriptPath: transcript}
	with := func(f func(*harness.HookInput)) harness.HookInput { in := base; f(&in); return in }
	for file, want := range map[string]harness.HookInput{
		"session-start.json": with(func(in *harness.HookInput) { in.HarnessEvent = "SessionStart" }),
		"user-prompt-submit.json": with(func(in *harness.HookInput) {
			in.HarnessEvent = "UserPromptSubmit"
			in.Prompt = "How do we run the database migrations?"
		}),
		"stop.json":           with(func(in *harness.HookInput) { in.HarnessEvent = "Stop"; in.LastMessage = "Run `make migrate`." }),
		"pre-compact.json":    with(func(in *harness.HookInput) { in.HarnessEvent = "PreCompact" }),
		"stop-old.json":       with(func(in *harness.HookInput) { in.HarnessEvent = "Stop"; in.TranscriptPath = rollout }),
		"stop-ephemeral.json": with(func(in *harness.HookInput) { in.HarnessEvent = "Stop"; in.TranscriptPath = rollout }),
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
	// Without the rollout: an --ephemeral session (transcript_path null)
	// keeps none, and says so; an older build's payload does not.
	if err := os.Remove(rollout); err != nil {
		t.Fatal(err)
	}
	for file, ephemeral := range map[string]bool{"stop-ephemeral.json": true, "stop-old.json": false} {
		data, err := os.ReadFile(filepath.Join("testdata/payloads", file))
		if err != nil {
			t.Fatal(err)
		}
		got, err := New().ParseHookInput(data)
		if err != nil || got.Ephemeral != ephemeral || got.TranscriptPath != "" {
			t.Errorf("%s without a rollout: %+v %v, want Ephemeral %v", file, got, err, ephemeral)
		}
	}
}

func TestFindRollout(t *testing.T) {
	home := t.TempDir()
	t.Setenv("CODEX_HOME", home)
	now = func() time.Time { return time.Date(2026, 11, 21, 0, 30, 0, 0, time.UTC) }
	defer func() { now = time.Now }()
	write := func(rel, content string) string {
		p := filepath.Join(home, filepath.FromSlash(rel))
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
		return p
	}
	// Yesterday's folder, by file name.
	y := write(rolloutRel, "{}\n")
	if got := findRollout(sid); got != y {
		t.Errorf("by name: %q", got)
	}
	// Today's folder, by the session_meta line of a differently named file.
	other := "019a0000-0000-7000-8000-000000000001"
	m := write("sessions/2026/11/21/rollout-2026-11-21T00-10-00-renamed.jsonl", `{"timestamp":"x","type":"session_meta","payload":{"id":"`+other+`"}}`+"\n")
	if got := findRollout(other); got != m {
		t.Errorf("by session_meta: %q", got)
	}
	// The id in capitals names the same rollout, by name and by
	// session_meta (kenkeep's kk-capture test sends one).
	if got := findRollout(strings.ToUpper(sid)); got != y {
		t.Errorf("by name, in capitals: %q", got)
	}
	if got := findRollout(strings.ToUpper(other)); got != m {
		t.Errorf("by session_meta, in capitals: %q", got)
	}
	for _, id := range []string{"", "nope", "../x", "a*"} {
		if got := findRollout(id); got != "" {
			t.Errorf("%q: found %q", id, got)
		}
	}
}

func TestParseHookInputBad(t *testing.T) {
	t.Setenv("CODEX_HOME", t.TempDir())
	for _, c := range []struct{ in, msg string }{
		{"", "empty"},
		{"{\"session_id\": ", "not a JSON object"},
		{`"text"`, "not a JSON object"},
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
		{`{"session_id": ["a"], "hook_event_name": "Stop"}`, `"session_id" is an array`, harness.UseSessionID},
		{`{"stop_hook_active": true, "last_assistant_message": false, "hook_event_name": "Stop"}`, `"last_assistant_message" is a boolean`, harness.UseLastMessage},
	} {
		got, err := New().ParseHookInput([]byte(c.in))
		if err != nil {
			t.Errorf("%q: %v", c.in, err)
			continue
		}
		if err := got.Check(c.use); err == nil || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%q: Check %v, want one mentioning %q", c.in, err, c.msg)
		}
		if err := got.Check(^c.use); err != nil || got.HarnessEvent != "Stop" {
			t.Errorf("%q: %+v, Check of the other fields %v", c.in, got, err)
		}
	}
}

func TestHookOutput(t *testing.T) {
	a := New()
	out, ok := a.HookOutput(harness.SessionStart, "# Project knowledge\n\nUse <kk> & friends: \"quoted\".\n")
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
	out, _ = a.HookOutput(harness.SessionStart, strings.Repeat("line of context 😀\n", 1000))
	var v struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil {
		t.Fatal(err)
	}
	got := v.HookSpecificOutput.AdditionalContext
	if n := len(utf16.Encode([]rune(got))); n > contextLimit || !strings.HasSuffix(got, truncatedNote) {
		t.Fatalf("long context: %d UTF-16 units", n)
	}
}

// The shared context cap's limit and note, under the names the test above
// uses.
const (
	contextLimit  = harness.ContextLimit
	truncatedNote = harness.CutNote
)

// With HOME and CODEX_HOME unset, an older Codex's rollout is looked for
// under the account's home folder, as Codex itself keeps it there.
func TestCodexHomeWithoutHOME(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("CODEX_HOME", "")
	saved := accountHome
	defer func() { accountHome = saved }()
	accountHome = func() string { return "/home/acct" }
	if got := codexHome(); got != filepath.Join("/home/acct", ".codex") {
		t.Errorf("codexHome = %q", got)
	}
	accountHome = func() string { return "" }
	if got := codexHome(); got != "" {
		t.Errorf("no home at all: %q", got)
	}
}
