package cursor

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseHookInput(t *testing.T) {
	home := t.TempDir()
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home})}
	// A transcript for the stop payload, where the CLI keeps it.
	flat := filepath.Join(home, ".cursor", "projects", "home-dev-shop", "agent-transcripts", "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b.jsonl")
	write(t, flat, []byte("{}\n"))
	for _, tc := range []struct {
		file string
		want harness.HookInput
	}{
		// No search for the transcript where no hook reads it.
		{"sessionStart.json", harness.HookInput{HarnessEvent: "sessionStart", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", CWD: "/home/dev/shop"}},
		{"stop.json", harness.HookInput{HarnessEvent: "stop", SessionID: "3F2A9C1E-7B4D-4E8A-9F10-2C3D4E5F6A7B", CWD: "/home/dev/shop", TranscriptPath: flat}},
		{"sessionEnd.json", harness.HookInput{HarnessEvent: "sessionEnd", SessionID: "conv-7781", CWD: "/home/dev/shop", TranscriptPath: "/home/dev/.cursor/projects/home-dev-shop/agent-transcripts/conv-7781/conv-7781.jsonl"}},
		{"beforeSubmitPrompt.json", harness.HookInput{HarnessEvent: "beforeSubmitPrompt", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", CWD: "/home/dev/shop", Prompt: "Where do we keep the payment retry rules?"}},
		// No workspace root: the transcript is found by searching every project.
		{"preCompact.json", harness.HookInput{HarnessEvent: "preCompact", SessionID: "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b", TranscriptPath: flat}},
	} {
		got, err := a.ParseHookInput(read(t, filepath.Join("testdata", "payloads", tc.file)))
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if got != tc.want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.file, got, tc.want)
		}
	}
	for _, bad := range []string{"", "  \n", "{", `[1]`} {
		if _, err := a.ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
	// workspace_roots of another type: the cwd is no one's, an error for
	// every hook (they all locate the knowledge base from it) naming the
	// field; cwd backs it up, and an unused field's type does not matter.
	got, err := a.ParseHookInput([]byte(`{"workspace_roots": "x", "conversation_id": "c1", "hook_event_name": "sessionStart"}`))
	if err != nil || got.SessionID != "c1" {
		t.Fatalf("%+v %v", got, err)
	}
	if err := got.Check(harness.UseCWD); err == nil || err.Error() != `hook payload field "workspace_roots" is a string, want an array of strings` {
		t.Errorf("workspace_roots of another type: %v", err)
	}
	got, err = a.ParseHookInput([]byte(`{"workspace_roots": ["/r"], "cwd": 5, "model": {"id": "m"}, "prompt": 7, "conversation_id": "c1", "hook_event_name": "sessionStart"}`))
	if err != nil || got.CWD != "/r" || got.Check(^harness.UsePrompt) != nil || got.Check(harness.UsePrompt) == nil {
		t.Errorf("unused cwd of another type: %+v %v", got, err)
	}
}

func TestHookOutput(t *testing.T) {
	out, ok := New().HookOutput(harness.SessionStart, "# Project knowledge\n\nSee <ENTRY.md> & \"nodes\".\n")
	if !ok {
		t.Fatal("no session-start output")
	}
	golden(t, "session-start-output.json", out)
	var v map[string]string
	if err := json.Unmarshal(out, &v); err != nil || v["additional_context"] == "" {
		t.Errorf("output %s: %v", out, err)
	}
	if out, ok := New().HookOutput(harness.PromptContext, "x"); ok || out != nil {
		t.Errorf("Cursor has no prompt-time context channel, got %q", out)
	}
}

// TestMultiRootWorkspace: a Cursor workspace of several folders sends
// them all in workspace_roots; kk took the first, and when the knowledge
// base was in another, the session got no context and captured nothing.
// The first root holding .ai/kenkeep is the session's; with none, the
// first root, as before.
func TestMultiRootWorkspace(t *testing.T) {
	docs, app := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(app, ".ai", "kenkeep"), 0o755); err != nil {
		t.Fatal(err)
	}
	a := New()
	payload := `{"conversation_id":"c1","hook_event_name":"sessionStart","workspace_roots":["","` + docs + `","` + app + `"]}`
	if got, err := a.ParseHookInput([]byte(payload)); err != nil || got.CWD != app {
		t.Errorf("the root with the knowledge base: %+v %v", got, err)
	}
	payload = `{"conversation_id":"c1","hook_event_name":"sessionStart","workspace_roots":["` + docs + `","` + t.TempDir() + `"]}`
	if got, err := a.ParseHookInput([]byte(payload)); err != nil || got.CWD != docs {
		t.Errorf("no root with a knowledge base: %+v %v", got, err)
	}
}

// TestTranscriptNotFound: Cursor's CLI sends "transcript_path": null;
// when kk finds no transcript either, capture said "the payload names no
// transcript_path", as if Cursor had left something out. The reason now
// says where kk looked, or that HOME is not set.
func TestTranscriptNotFound(t *testing.T) {
	home := t.TempDir()
	payload := []byte(`{"conversation_id":"3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b","hook_event_name":"stop","workspace_roots":["/home/dev/shop"],"transcript_path":null}`)
	a := &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{"HOME": home})}
	got, err := a.ParseHookInput(payload)
	if err != nil || got.TranscriptPath != "" ||
		got.NoTranscript != `Cursor sent no transcript_path, and no transcript of conversation "3f2a9c1e-7b4d-4e8a-9f10-2c3d4e5f6a7b" was found under `+filepath.Join(home, ".cursor", "projects", "*", "agent-transcripts") {
		t.Errorf("not found: %+v %v", got, err)
	}
	saved := accountHome
	defer func() { accountHome = saved }()
	accountHome = func() string { return "/home/acct" }
	a = &Adapter{Base: harness.Base{S: spec}, getenv: env(map[string]string{})}
	got, err = a.ParseHookInput(payload)
	if err != nil || !strings.Contains(got.NoTranscript, filepath.Join("/home/acct", ".cursor", "projects")) {
		t.Errorf("no HOME, the account's home: %+v %v", got, err)
	}
	accountHome = func() string { return "" }
	got, err = a.ParseHookInput(payload)
	if err != nil || !strings.Contains(got.NoTranscript, "HOME (or USERPROFILE) is not set") {
		t.Errorf("no HOME: %+v %v", got, err)
	}
	// sessionStart does not look, and has nothing to say.
	got, _ = a.ParseHookInput([]byte(`{"conversation_id":"c1","hook_event_name":"sessionStart"}`))
	if got.NoTranscript != "" {
		t.Errorf("sessionStart: %q", got.NoTranscript)
	}
}
