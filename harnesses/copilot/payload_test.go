package copilot

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseHookInput(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	const sid = "b0ff98c0-8e01-4b73-bf92-9649b139931b"
	given := "/home/u/.copilot/session-state/" + sid + "/events.jsonl"
	derived := filepath.Join(home, ".copilot", "session-state", sid, "events.jsonl")
	cases := []struct {
		file string
		want harness.HookInput
	}{
		{"camel-sessionStart.json", harness.HookInput{HarnessEvent: "sessionStart", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"camel-agentStop.json", harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, CWD: "/work/repo/sub", TranscriptPath: given}},
		{"camel-preCompact.json", harness.HookInput{HarnessEvent: "preCompact", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"camel-sessionEnd.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"camel-userPromptSubmitted.json", harness.HookInput{HarnessEvent: "userPromptSubmitted", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived, Prompt: "where is the retry logic?"}},
		{"pascal-SessionStart.json", harness.HookInput{HarnessEvent: "SessionStart", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"pascal-Stop.json", harness.HookInput{HarnessEvent: "Stop", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"pascal-PreCompact.json", harness.HookInput{HarnessEvent: "PreCompact", SessionID: sid, CWD: "/work/repo", TranscriptPath: given}},
		{"pascal-SessionEnd.json", harness.HookInput{HarnessEvent: "SessionEnd", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived}},
		{"pascal-UserPromptSubmit.json", harness.HookInput{HarnessEvent: "UserPromptSubmit", SessionID: sid, CWD: "/work/repo", TranscriptPath: derived, Prompt: "where is the retry logic?"}},
		// Fields of the wrong type are skipped, not fatal.
		{"drift-types.json", harness.HookInput{HarnessEvent: "agentStop", SessionID: sid, TranscriptPath: derived,
			Mistyped: harness.Mistyped{CWD: `hook payload field "cwd" is an array, want a string`}}},
		// An id that is not safe in a path gives no derived transcript.
		{"drift-unsafe-id.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: "../../etc", CWD: "/work/repo",
			NoTranscript: `the payload names no transcript, and its session id "../../etc" cannot name a folder of Copilot's session-state (a UUID can)`}},
	}
	a := New()
	for _, c := range cases {
		got, err := a.ParseHookInput(readFile(t, filepath.Join("testdata", "payloads", c.file)))
		if err != nil {
			t.Errorf("%s: %v", c.file, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s:\n got %+v\nwant %+v", c.file, got, c.want)
		}
	}

	t.Setenv("COPILOT_HOME", "/srv/copilot")
	got, err := a.ParseHookInput(readFile(t, "testdata/payloads/camel-sessionEnd.json"))
	if err != nil || got.TranscriptPath != filepath.Join("/srv/copilot", "session-state", sid, "events.jsonl") {
		t.Errorf("COPILOT_HOME not used: %+v %v", got, err)
	}

	for _, bad := range []string{"", "  \n", "not json", "[1,2]", `"text"`, "null", `{"sessionId":`} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

// Copilot reads {"additionalContext": …} from sessionStart and
// userPromptSubmitted hooks (1.0.102), and agentStop's block decision
// (the graph hint); the other events have no channel.
func TestHookOutput(t *testing.T) {
	if out, ok := New().HookOutput(harness.GraphHint, "record <it>"); !ok || string(out) != `{"decision":"block","reason":"record <it>"}`+"\n" {
		t.Errorf("graph-hint: %v %q", ok, out)
	}
	for _, ev := range harness.Events {
		if ev == harness.GraphHint {
			continue
		}
		out, ok := New().HookOutput(ev, "# ENTRY <kk>")
		want := ev == harness.SessionStart || ev == harness.PromptContext
		if ok != want {
			t.Errorf("%s: channel %v, want %v", ev, ok, want)
		}
		if want && string(out) != `{"additionalContext":"# ENTRY <kk>"}`+"\n" {
			t.Errorf("%s: output %q", ev, out)
		}
	}
}

// TestTranscriptWithoutHOME: Copilot keeps a session's events under
// ${COPILOT_HOME:-~/.copilot}; with HOME unset (a hook run from a service,
// a container, `env -i`), kk named no transcript and capture said "the
// payload names no transcript_path", which Copilot's payloads never
// promised. kk finds the home folder as Copilot (Node's os.homedir) does:
// HOME, else the user database; and with neither, it says that HOME is
// not set and what to set.
func TestTranscriptWithoutHOME(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("COPILOT_HOME", "")
	const sid = "b0ff98c0-8e01-4b73-bf92-9649b139931b"
	saved := accountHome
	defer func() { accountHome = saved }()
	accountHome = func() string { return "/home/acct" }
	got, err := New().ParseHookInput(readFile(t, "testdata/payloads/camel-sessionEnd.json"))
	if err != nil || got.TranscriptPath != filepath.Join("/home/acct", ".copilot", "session-state", sid, "events.jsonl") || got.NoTranscript != "" {
		t.Errorf("the account's home: %+v %v", got, err)
	}
	accountHome = func() string { return "" }
	got, err = New().ParseHookInput(readFile(t, "testdata/payloads/camel-sessionEnd.json"))
	if err != nil || got.TranscriptPath != "" {
		t.Fatalf("no home at all: %+v %v", got, err)
	}
	for _, want := range []string{"HOME is not set", "COPILOT_HOME", "session-state"} {
		if !strings.Contains(got.NoTranscript, want) {
			t.Errorf("no home at all: %q lacks %q", got.NoTranscript, want)
		}
	}
	// A payload that names its transcript needs no home.
	got, err = New().ParseHookInput(readFile(t, "testdata/payloads/camel-agentStop.json"))
	if err != nil || got.TranscriptPath == "" || got.NoTranscript != "" {
		t.Errorf("agentStop: %+v %v", got, err)
	}
}
