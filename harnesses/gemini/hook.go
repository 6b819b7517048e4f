package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput implements harness.Adapter. Every Gemini CLI hook gets
// {session_id, transcript_path, cwd, hook_event_name, timestamp} plus the
// event's own fields (docs/hooks/reference.md): BeforeAgent and
// AfterAgent carry prompt, AfterAgent also prompt_response. Fields of an
// unexpected type are ignored rather than rejected, and camelCase
// spellings are accepted too, so a payload that drifts between releases
// still parses.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	if len(bytes.TrimSpace(data)) == 0 {
		return in, errors.New("gemini hook payload is empty")
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return in, fmt.Errorf("gemini hook payload (%d bytes) is not JSON: %w", len(data), err)
	}
	if m == nil {
		return in, fmt.Errorf("gemini hook payload is null, not a JSON object")
	}
	in.HarnessEvent = firstString(m, "hook_event_name", "hookEventName")
	in.SessionID = firstString(m, "session_id", "sessionId")
	in.CWD = firstString(m, "cwd")
	in.TranscriptPath = firstString(m, "transcript_path", "transcriptPath")
	in.Prompt = firstString(m, "prompt")
	in.LastMessage = firstString(m, "prompt_response", "promptResponse")
	return in, nil
}

// firstString returns the first of keys whose value is a non-empty JSON
// string.
func firstString(m map[string]json.RawMessage, keys ...string) string {
	for _, k := range keys {
		raw, ok := m[k]
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

// contextEvents are the Gemini events whose hooks can add context, by kk
// event.
var contextEvents = map[harness.Event]string{
	harness.SessionStart:  "SessionStart",
	harness.PromptContext: "BeforeAgent",
}

// HookOutput implements harness.Adapter:
// {"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}} on one
// line. At SessionStart Gemini CLI makes the context the first turn of an
// interactive session (or prepends it to a headless prompt); at
// BeforeAgent it appends it to the prompt of that turn. Gemini CLI shows
// < and > in the context as &lt; and &gt;.
func (*Adapter) HookOutput(ev harness.Event, context string) ([]byte, bool) {
	name, ok := contextEvents[ev]
	if !ok {
		return nil, false
	}
	type specific struct {
		HookEventName     string `json:"hookEventName"`
		AdditionalContext string `json:"additionalContext"`
	}
	raw, err := rawJSON(struct {
		HookSpecificOutput specific `json:"hookSpecificOutput"`
	}{specific{name, context}})
	if err != nil {
		return nil, false
	}
	return append(raw, '\n'), true
}
