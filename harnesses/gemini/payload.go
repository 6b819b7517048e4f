package gemini

import (
	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput implements harness.Adapter. Every Gemini CLI hook gets
// {session_id, transcript_path, cwd, hook_event_name, timestamp} plus the
// event's own fields (docs/hooks/reference.md): BeforeAgent and
// AfterAgent carry prompt, AfterAgent also prompt_response. camelCase
// spellings are accepted too, and a field of an unexpected type is
// passed over and recorded in in.Mistyped, an error only for the hooks
// that read it (harness.HookInput.Check), so a payload that drifts
// between releases still parses.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	m, err := harness.DecodePayload(data, "gemini hook payload")
	if err != nil {
		return in, err
	}
	harness.ReadString(m, &in.HarnessEvent, &in.Mistyped.HarnessEvent, "hook_event_name", "hookEventName")
	harness.ReadString(m, &in.SessionID, &in.Mistyped.SessionID, "session_id", "sessionId")
	harness.ReadString(m, &in.CWD, &in.Mistyped.CWD, "cwd")
	harness.ReadString(m, &in.TranscriptPath, &in.Mistyped.TranscriptPath, "transcript_path", "transcriptPath")
	harness.ReadString(m, &in.Prompt, &in.Mistyped.Prompt, "prompt")
	harness.ReadString(m, &in.LastMessage, &in.Mistyped.LastMessage, "prompt_response", "promptResponse")
	return in, nil
}

// contextEvents are the Gemini events whose hooks can add context, by kk
// event.
var contextEvents = map[harness.Event]string{
	harness.SessionStart:  "SessionStart",
	harness.PromptContext: "BeforeAgent",
}

// HookOutput implements harness.Adapter:
// {"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}} on one
// line, the context capped at harness.ContextLimit. At SessionStart Gemini
// CLI makes the context the first turn of an interactive session (or
// prepends it to a headless prompt); at BeforeAgent it appends it to the
// prompt of that turn. Gemini CLI shows < and > in the context as &lt;
// and &gt;.
func (*Adapter) HookOutput(ev harness.Event, context string) ([]byte, bool) {
	if ev == harness.GraphHint {
		// AfterAgent's {"decision":"deny","reason":…} rejects the turn's
		// answer and sends the reason to the agent as a new prompt
		// (docs/hooks/reference.md).
		return harness.ContinueOutput("deny", context), true
	}
	name, ok := contextEvents[ev]
	if !ok {
		return nil, false
	}
	// Gemini CLI documents no limit for additionalContext (harnesses.md
	// §6): the context is cut as for Claude Code, whose envelope it shares
	// (CapContext), which keeps a large ENTRY.md from filling the first
	// turn and says where the rest is.
	return harness.AdditionalContext(name, harness.CapContext(context)), true
}
