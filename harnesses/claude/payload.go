package claude

import (
	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput decodes a Claude Code hook payload (harnesses.md §1.1:
// session_id, transcript_path, cwd, hook_event_name, prompt on
// UserPromptSubmit, last_assistant_message on Stop). Unknown fields are
// ignored and a null counts as absent; anything but a JSON object is an
// error. A known field of another type is recorded in in.Mistyped, an
// error for the hooks that read it (harness.HookInput.Check).
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	fields, err := harness.DecodePayload(data, "hook payload")
	if err != nil {
		return in, err
	}
	harness.StringFields(fields, harness.ClaudeFields(&in)...)
	return in, nil
}

// HookOutput prints context as Claude Code's hookSpecificOutput envelope
// for SessionStart and UserPromptSubmit, the two events whose
// additionalContext reaches the model. Other events have no channel.
func (*Adapter) HookOutput(event harness.Event, text string) ([]byte, bool) {
	return harness.ClaudeHookOutput(event, text)
}
