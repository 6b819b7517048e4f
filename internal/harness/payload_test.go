package harness

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestDecodePayload(t *testing.T) {
	for _, c := range []struct{ in, msg string }{
		{"", "hook payload is empty"},
		{"  \n", "hook payload is empty"},
		{`{"session_id": `, "hook payload is not a JSON object: "},
		{"[1]", "hook payload is not a JSON object: "},
		{"null", "hook payload is null, want a JSON object"},
	} {
		_, err := DecodePayload([]byte(c.in), "hook payload")
		if err == nil || !strings.HasPrefix(err.Error(), c.msg) {
			t.Errorf("%q: error %v, want %q", c.in, err, c.msg)
		}
	}
	fields, err := DecodePayload([]byte(" {\"a\": 1}\n"), "hook payload")
	if err != nil || string(fields["a"]) != "1" {
		t.Errorf("object: %v %v", fields, err)
	}
}

func TestStringFields(t *testing.T) {
	fields, _ := DecodePayload([]byte(`{"event":"Stop","hook_event_name":"","session_id":"s","cwd":null,"prompt":"p","future":{"a":1}}`), "p")
	var in HookInput
	in.CWD = "kept"
	want := append([]Field{{"event", &in.HarnessEvent, &in.Mistyped.HarnessEvent}}, ClaudeFields(&in)...)
	StringFields(fields, want...)
	if in != (HookInput{HarnessEvent: "Stop", SessionID: "s", CWD: "kept", Prompt: "p"}) {
		t.Errorf("got %+v", in)
	}
	if err := in.Check(^Use(0)); err != nil {
		t.Errorf("Check: %v", err)
	}
	// A field of another type than a string is refused by name, by the
	// hooks that read it (Check with its place), and by them only: the
	// payload still reads, and so do its other fields.
	for raw, c := range map[string]struct {
		use Use
		msg string
	}{
		`{"session_id": 42, "prompt": "p", "transcript_path": "t"}`:                {UseSessionID, `hook payload field "session_id" is a number, want a string`},
		`{"prompt": {"text": "x"}, "session_id": "s", "transcript_path": "t"}`:     {UsePrompt, `hook payload field "prompt" is an object, want a string`},
		`{"cwd": ["x"], "session_id": "s", "prompt": "p", "transcript_path": "t"}`: {UseCWD, `hook payload field "cwd" is an array, want a string`},
		`{"transcript_path": true, "session_id": "s", "prompt": "p"}`:              {UseTranscriptPath, `hook payload field "transcript_path" is a boolean, want a string`},
	} {
		fields, _ := DecodePayload([]byte(raw), "p")
		var in HookInput
		StringFields(fields, ClaudeFields(&in)...)
		if err := in.Check(c.use); err == nil || err.Error() != c.msg {
			t.Errorf("%s: %v, want %q", raw, err, c.msg)
		}
		if err := in.Check(c.use | UseEvent | UseLastMessage); err == nil || err.Error() != c.msg {
			t.Errorf("%s among others: %v, want %q", raw, err, c.msg)
		}
		if err := in.Check(^c.use); err != nil {
			t.Errorf("%s: refused for a field the hook does not read: %v", raw, err)
		}
		for place, v := range map[Use]string{UseSessionID: in.SessionID, UsePrompt: in.Prompt, UseTranscriptPath: in.TranscriptPath} {
			want := map[Use]string{UseSessionID: "s", UsePrompt: "p", UseTranscriptPath: "t"}[place]
			if place == c.use {
				want = ""
			}
			if v != want {
				t.Errorf("%s: place %d read %q, want %q", raw, place, v, want)
			}
		}
	}
	// A field backed up by another key that was read is no error.
	fields, _ = DecodePayload([]byte(`{"event": 7, "hook_event_name": "Stop"}`), "p")
	in = HookInput{}
	StringFields(fields, append([]Field{{"event", &in.HarnessEvent, &in.Mistyped.HarnessEvent}}, ClaudeFields(&in)...)...)
	if err := in.Check(UseEvent); err != nil || in.HarnessEvent != "Stop" {
		t.Errorf("backed-up event: %q, %v", in.HarnessEvent, err)
	}
	// Without a place for the error, it is dropped.
	StringFields(fields, Field{"event", new(string), nil})
}

func TestReadString(t *testing.T) {
	fields, _ := DecodePayload([]byte(`{"sessionId": 5, "session_id": "s", "cwd": {"a": 1}, "prompt": ""}`), "p")
	var to, bad string
	ReadString(fields, &to, &bad, "sessionId", "session_id")
	if to != "s" || bad != "" {
		t.Errorf("backed up: %q %q", to, bad)
	}
	ReadString(fields, &to, &bad, "cwd", "prompt", "missing")
	if to != "" || bad != `hook payload field "cwd" is an object, want a string` {
		t.Errorf("mistyped: %q %q", to, bad)
	}
}

func TestFirstJSONString(t *testing.T) {
	fields, _ := DecodePayload([]byte(`{"sessionId": 5, "session_id": "s", "cwd": ""}`), "p")
	if got := FirstJSONString(fields, "sessionId", "session_id"); got != "s" {
		t.Errorf("got %q", got)
	}
	if got := FirstJSONString(fields, "cwd", "missing"); got != "" {
		t.Errorf("empty and missing: %q", got)
	}
}

func TestRawJSON(t *testing.T) {
	raw, err := RawJSON(struct {
		Command string `json:"command"`
	}{"a && b <c>"})
	if err != nil || string(raw) != `{"command":"a && b <c>"}` {
		t.Errorf("RawJSON = %s, %v", raw, err)
	}
	if _, err := RawJSON(func() {}); err == nil {
		t.Error("a func encoded")
	}
	if got := string(MustRawJSON([]int{1, 2})); got != "[1,2]" {
		t.Errorf("MustRawJSON = %s", got)
	}
	defer func() {
		if recover() == nil {
			t.Error("MustRawJSON of a func did not panic")
		}
	}()
	MustRawJSON(make(chan int))
}

func TestAdditionalContext(t *testing.T) {
	got := string(AdditionalContext("SessionStart", "read <ENTRY.md> & go"))
	want := `{"hookSpecificOutput":{"hookEventName":"SessionStart","additionalContext":"read <ENTRY.md> & go"}}` + "\n"
	if got != want {
		t.Errorf("got %s", got)
	}
}

func TestClaudeHookOutput(t *testing.T) {
	for ev, name := range map[Event]string{SessionStart: "SessionStart", PromptContext: "UserPromptSubmit"} {
		out, ok := ClaudeHookOutput(ev, "ctx")
		if !ok || string(out) != string(AdditionalContext(name, "ctx")) {
			t.Errorf("%s: %s %v", ev, out, ok)
		}
	}
	for _, ev := range []Event{Capture, ProposalDrain, LintTick} {
		if _, ok := ClaudeHookOutput(ev, "x"); ok {
			t.Errorf("%s has output", ev)
		}
	}
	out, _ := ClaudeHookOutput(SessionStart, strings.Repeat("line of context\n", 1000))
	var v struct {
		HookSpecificOutput struct {
			AdditionalContext string `json:"additionalContext"`
		} `json:"hookSpecificOutput"`
	}
	if err := json.Unmarshal(out, &v); err != nil || !strings.HasSuffix(v.HookSpecificOutput.AdditionalContext, CutNote) {
		t.Errorf("long context not capped: %v", err)
	}
}

func TestUnmarshalLenient(t *testing.T) {
	type line struct {
		Type string `json:"type"`
		N    int    `json:"n"`
	}
	for _, c := range []struct {
		in          string
		ok, drifted bool
		want        line
	}{
		{`{"type":"a","n":1}`, true, false, line{"a", 1}},
		{`{"type":"a","n":"one"}`, true, true, line{"a", 0}},
		{`{"type":"a","n":`, false, false, line{}},
		{`not json`, false, false, line{}},
	} {
		var l line
		ok, drifted := UnmarshalLenient([]byte(c.in), &l)
		if ok != c.ok || drifted != c.drifted || (ok && l != c.want) {
			t.Errorf("%s: ok %v drifted %v %+v", c.in, ok, drifted, l)
		}
	}
}
