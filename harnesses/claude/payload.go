package claude

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput decodes a Claude Code hook payload (harnesses.md §1.1:
// session_id, transcript_path, cwd, hook_event_name, prompt on
// UserPromptSubmit, last_assistant_message on Stop). Unknown fields are
// ignored and a null counts as absent; a known field of another type, or
// anything but a JSON object, is an error.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	fields, err := decodePayload(data)
	if err != nil {
		return in, err
	}
	for _, f := range []struct {
		key string
		dst *string
	}{
		{"hook_event_name", &in.HarnessEvent},
		{"session_id", &in.SessionID},
		{"cwd", &in.CWD},
		{"transcript_path", &in.TranscriptPath},
		{"prompt", &in.Prompt},
		{"last_assistant_message", &in.LastMessage},
	} {
		if *f.dst, err = stringField(fields, f.key); err != nil {
			return in, err
		}
	}
	return in, nil
}

// decodePayload parses a hook payload into its top-level fields.
func decodePayload(data []byte) (map[string]json.RawMessage, error) {
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return nil, fmt.Errorf("empty hook payload")
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(data, &fields); err != nil {
		return nil, fmt.Errorf("hook payload is not a JSON object: %v", err)
	}
	if fields == nil {
		return nil, fmt.Errorf("hook payload is null, want a JSON object")
	}
	return fields, nil
}

// stringField returns field key of a payload: "" when absent or null.
func stringField(fields map[string]json.RawMessage, key string) (string, error) {
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

// jsonKind names the type of a raw JSON value.
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

// HookOutput prints context as Claude Code's hookSpecificOutput envelope
// for SessionStart and UserPromptSubmit, the two events whose
// additionalContext reaches the model. Other events have no channel.
func (*Adapter) HookOutput(event harness.Event, text string) ([]byte, bool) {
	var name string
	switch event {
	case harness.SessionStart:
		name = "SessionStart"
	case harness.PromptContext:
		name = "UserPromptSubmit"
	default:
		return nil, false
	}
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	out := struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{name, capContext(text)}}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(out); err != nil {
		return nil, false
	}
	return b.Bytes(), true
}

// contextLimit is the most additionalContext Claude Code passes to the
// model as is; longer text is spilled to a file and the model only sees a
// preview (harnesses.md §1.1). Claude Code counts JavaScript string
// length, that is UTF-16 code units.
const contextLimit = 10000

const truncatedNote = "\n\n[kk: the rest was cut to fit the harness's 10,000-character context limit; the full text is under .ai/kenkeep/]"

// capContext truncates text to contextLimit, at a line end where there is
// one in the last quarter, and says so.
func capContext(text string) string {
	if utf16Len(text) <= contextLimit {
		return text
	}
	budget := contextLimit - utf16Len(truncatedNote)
	cut, n := 0, 0
	for cut < len(text) {
		r, size := utf8.DecodeRuneInString(text[cut:])
		if n+utf16.RuneLen(r) > budget {
			break
		}
		n += utf16.RuneLen(r)
		cut += size
	}
	head := text[:cut]
	if nl := strings.LastIndexByte(head, '\n'); nl >= len(head)*3/4 {
		head = head[:nl]
	}
	return strings.TrimRight(head, "\n") + truncatedNote
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}
