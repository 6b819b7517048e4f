package gemini

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestParseHookInput(t *testing.T) {
	const sid = "3c9d2a1b-5e6f-4a7b-8c9d-0e1f2a3b4c5d"
	const tp = "/home/u/.gemini/tmp/5f1c0a7e/chats/session-2026-11-20T10-00-3c9d2a1b.jsonl"
	base := harness.HookInput{SessionID: sid, CWD: "/work/repo", TranscriptPath: tp}
	with := func(f func(*harness.HookInput)) harness.HookInput { in := base; f(&in); return in }
	cases := map[string]harness.HookInput{
		"SessionStart.json": with(func(in *harness.HookInput) { in.HarnessEvent = "SessionStart" }),
		"BeforeAgent.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.Prompt = "BeforeAgent", "How do retries work here?"
		}),
		"AfterAgent.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.Prompt, in.LastMessage = "AfterAgent", "How do retries work here?", "Retries use exponential backoff."
		}),
		"PreCompress.json": with(func(in *harness.HookInput) { in.HarnessEvent = "PreCompress" }),
		"SessionEnd.json":  with(func(in *harness.HookInput) { in.HarnessEvent = "SessionEnd" }),
		"drift.json": with(func(in *harness.HookInput) {
			in.HarnessEvent, in.CWD, in.LastMessage = "AfterAgent", "", "ok"
			in.Mistyped.CWD = `hook payload field "cwd" is an object, want a string`
			in.Mistyped.Prompt = `hook payload field "prompt" is an array, want a string`
		}),
	}
	for file, want := range cases {
		got, err := New().ParseHookInput(readFile(t, filepath.Join("testdata", "payloads", file)))
		if err != nil || got != want {
			t.Errorf("%s:\n got %+v (%v)\nwant %+v", file, got, err, want)
		}
	}
	for _, bad := range []string{"", "\n", "nope", "[]", "null", `{"session_id":`} {
		if _, err := New().ParseHookInput([]byte(bad)); err == nil {
			t.Errorf("payload %q accepted", bad)
		}
	}
}

func TestHookOutput(t *testing.T) {
	ctx := "# Project knowledge\n\nSee [ENTRY](.ai/kenkeep/ENTRY.md) & \"quotes\" <tags>.\n"
	for ev, file := range map[harness.Event]string{harness.SessionStart: "output.session-start.json", harness.PromptContext: "output.prompt-context.json"} {
		out, ok := New().HookOutput(ev, ctx)
		if !ok {
			t.Fatalf("%s: no channel", ev)
		}
		golden(t, file, out)
		var doc struct {
			HookSpecificOutput struct {
				HookEventName     string `json:"hookEventName"`
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		if err := json.Unmarshal(out, &doc); err != nil || doc.HookSpecificOutput.AdditionalContext != ctx {
			t.Errorf("%s: %s (%v)", ev, out, err)
		}
		if bytes.Count(out, []byte("\n")) != 1 {
			t.Errorf("%s: output is not one line", ev)
		}
	}
	for _, ev := range []harness.Event{harness.Capture, harness.ProposalDrain, harness.LintTick} {
		if _, ok := New().HookOutput(ev, "x"); ok {
			t.Errorf("%s has a context channel", ev)
		}
	}
}
