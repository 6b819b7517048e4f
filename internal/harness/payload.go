package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// DecodePayload parses a hook payload into its top-level fields. subject
// names the payload in errors ("hook payload", "copilot hook payload").
// Empty input, JSON that is not an object, and null are errors.
func DecodePayload(data []byte, subject string) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("%s is empty", subject)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("%s is not a JSON object: %w", subject, err)
	}
	if fields == nil {
		return nil, fmt.Errorf("%s is null, want a JSON object", subject)
	}
	return fields, nil
}

// StringField returns field key of a payload: "" when it is absent or
// null, an error naming the field when it holds anything but a string.
func StringField(fields map[string]json.RawMessage, key string) (string, error) {
	raw, ok := fields[key]
	if !ok || string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", fmt.Errorf("hook payload field %q is %s, want a string", key, jsonKind(raw))
	}
	return s, nil
}

// Field is a payload field, where its value goes, and where the error
// goes when the field holds another type than a string (nil: nowhere).
type Field struct {
	Key string
	To  *string
	Bad *string
}

// StringFields reads the string fields of a payload (see StringField)
// into their places, in order. A field that is absent, null or empty
// leaves its place as it is, so a later key backs an earlier one up. A
// field of another type is passed over like an absent one, and its error
// (the first for a place) goes to its Bad, unless another key filled the
// place: whether the error matters is for the hook that reads the place
// to say (HookInput.Check), so that a payload whose unused fields drift
// between harness releases still reads.
func StringFields(fields map[string]json.RawMessage, want ...Field) {
	for _, f := range want {
		v, err := StringField(fields, f.Key)
		if err != nil {
			if f.Bad != nil && *f.Bad == "" {
				*f.Bad = err.Error()
			}
			continue
		}
		if v != "" {
			*f.To = v
		}
	}
	for _, f := range want {
		if f.Bad != nil && *f.To != "" {
			*f.Bad = ""
		}
	}
}

// ReadString is FirstJSONString for one place of a HookInput: the first
// of keys whose value is a non-empty string goes to *to; when none is,
// the error of the first that held another type goes to *bad.
func ReadString(fields map[string]json.RawMessage, to, bad *string, keys ...string) {
	*to = FirstJSONString(fields, keys...)
	if *to != "" {
		return
	}
	for _, k := range keys {
		if _, err := StringField(fields, k); err != nil {
			*bad = err.Error()
			return
		}
	}
}

// ClaudeFields are the fields of a hook payload in the shape Claude Code
// defined and Codex shares (harnesses.md §1.1, §2.1): hook_event_name,
// session_id, cwd, transcript_path, prompt (UserPromptSubmit) and
// last_assistant_message (Stop), going into in (errors into
// in.Mistyped).
func ClaudeFields(in *HookInput) []Field {
	return []Field{
		{"hook_event_name", &in.HarnessEvent, &in.Mistyped.HarnessEvent},
		{"session_id", &in.SessionID, &in.Mistyped.SessionID},
		{"cwd", &in.CWD, &in.Mistyped.CWD},
		{"transcript_path", &in.TranscriptPath, &in.Mistyped.TranscriptPath},
		{"prompt", &in.Prompt, &in.Mistyped.Prompt},
		{"last_assistant_message", &in.LastMessage, &in.Mistyped.LastMessage},
	}
}

// Mistyped holds, for each place of a HookInput, the error of the payload
// field that should have filled it and held another JSON type than a
// string (`hook payload field "session_id" is a number, want a string`),
// or "" when none did. A field another key backed up is not recorded.
type Mistyped struct {
	HarnessEvent, SessionID, CWD, TranscriptPath, Prompt, LastMessage, Binary string
}

// Use is a set of the places of a HookInput that a hook reads.
type Use uint

const (
	UseEvent Use = 1 << iota
	UseSessionID
	UseCWD
	UseTranscriptPath
	UsePrompt
	UseLastMessage
	UseBinary
)

// Check returns the error of the first place in uses whose payload field
// held another type than a string (see Mistyped), or nil. A field of
// another type that the hook does not read is no error: harnesses change
// the types of fields between releases, and a capture must not be lost
// for a field it does not need.
func (in HookInput) Check(uses Use) error {
	m := in.Mistyped
	for _, p := range []struct {
		use Use
		err string
	}{
		{UseEvent, m.HarnessEvent}, {UseSessionID, m.SessionID}, {UseCWD, m.CWD}, {UseTranscriptPath, m.TranscriptPath},
		{UsePrompt, m.Prompt}, {UseLastMessage, m.LastMessage}, {UseBinary, m.Binary},
	} {
		if uses&p.use != 0 && p.err != "" {
			return errors.New(p.err)
		}
	}
	return nil
}

// jsonKind names the type of a raw JSON value that is not a string.
func jsonKind(raw json.RawMessage) string {
	switch raw[0] {
	case '{':
		return "an object"
	case '[':
		return "an array"
	case 't', 'f':
		return "a boolean"
	default:
		return "a number"
	}
}

// FirstJSONString returns the first of keys whose value in fields is a
// non-empty JSON string; values of another type are passed over, so a
// payload whose fields drift between releases still reads.
func FirstJSONString(fields map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		raw, ok := fields[k]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return s
		}
	}
	return ""
}

// RawJSON encodes v compactly without HTML escaping, so that the &, <
// and > of commands and context stay readable in the files kk writes.
func RawJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

// MustRawJSON is RawJSON for kk's own plain values, which always encode.
func MustRawJSON(v any) json.RawMessage {
	raw, err := RawJSON(v)
	if err != nil {
		panic(err) // a programming error: kk encodes only its own plain structs here
	}
	return raw
}

// AdditionalContext is the hook output that hands context to the model in
// the envelope Claude Code defined and Codex and Gemini CLI share:
// {"hookSpecificOutput": {"hookEventName": event, "additionalContext":
// context}} on one line, newline-terminated.
func AdditionalContext(event, context string) []byte {
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	return append(MustRawJSON(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{event, context}}), '\n')
}

// ContinueOutput is the end-of-turn output that makes a harness go on
// with reason as the agent's next prompt: {"decision": decision,
// "reason": reason} on one line, the reason capped at ContextLimit.
// Claude Code, Codex and Copilot CLI take decision "block" on their Stop
// (agentStop) event; Gemini CLI takes "deny" on AfterAgent.
func ContinueOutput(decision, reason string) []byte {
	return append(MustRawJSON(struct {
		Decision string `json:"decision"`
		Reason   string `json:"reason"`
	}{decision, CapContext(reason)}), '\n')
}

// ClaudeHookOutput is HookOutput for the harnesses whose hook events and
// output are Claude Code's (Claude Code, Codex): context capped at
// ContextLimit in the AdditionalContext envelope, at SessionStart and
// UserPromptSubmit, the two events whose additionalContext reaches the
// model, and the graph hint as Stop's block decision, whose reason the
// agent gets as its next prompt. Other events have no channel.
func ClaudeHookOutput(event Event, text string) ([]byte, bool) {
	var name string
	switch event {
	case SessionStart:
		name = "SessionStart"
	case PromptContext:
		name = "UserPromptSubmit"
	case GraphHint:
		return ContinueOutput("block", text), true
	default:
		return nil, false
	}
	return AdditionalContext(name, CapContext(text)), true
}

// UnmarshalLenient decodes data into v, tolerating the drift of a
// harness's formats between releases: a field whose JSON type is not the
// one v has for it is left alone and the rest still decodes (drifted
// reports it). ok is false when data is not JSON at all.
func UnmarshalLenient(data []byte, v any) (ok, drifted bool) {
	err := json.Unmarshal(data, v)
	if err == nil {
		return true, false
	}
	var typeErr *json.UnmarshalTypeError
	if errors.As(err, &typeErr) {
		return true, true
	}
	return false, false
}
