package codex

import (
	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput decodes a Codex hook payload (harnesses.md §2.1:
// session_id, transcript_path, cwd, hook_event_name, prompt on
// UserPromptSubmit, last_assistant_message on Stop; older builds said
// "event" for the event name). Unknown fields are ignored and a null
// counts as absent; anything but a JSON object is an error. A known field
// of another type is recorded in in.Mistyped, an error for the hooks that
// read it (harness.HookInput.Check). When the payload names no transcript
// (older builds; an --ephemeral session's null), the session's rollout
// file is looked up under $CODEX_HOME; an --ephemeral session has none,
// and is Ephemeral: capture has nothing to do and says nothing.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	fields, err := harness.DecodePayload(data, "hook payload")
	if err != nil {
		return in, err
	}
	// Older builds named the event "event".
	want := append([]harness.Field{{Key: "event", To: &in.HarnessEvent, Bad: &in.Mistyped.HarnessEvent}}, harness.ClaudeFields(&in)...)
	harness.StringFields(fields, want...)
	if in.TranscriptPath == "" && in.SessionID != "" {
		in.TranscriptPath = findRollout(in.SessionID)
	}
	// Current builds send transcript_path null for an --ephemeral session
	// (harnesses.md §2.1), which keeps no rollout; older builds sent no
	// transcript_path at all, and keep one.
	if raw, ok := fields["transcript_path"]; ok && string(raw) == "null" && in.TranscriptPath == "" {
		in.Ephemeral = true
	}
	return in, nil
}

// HookOutput prints context in the hookSpecificOutput envelope Codex
// shares with Claude Code, for SessionStart and UserPromptSubmit, the two
// events whose additionalContext reaches the model (harnesses.md §2.1).
// Other events have no channel.
func (*Adapter) HookOutput(event harness.Event, text string) ([]byte, bool) {
	return harness.ClaudeHookOutput(event, text)
}
