package opencode

import (
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// payload is what kk's plugin sends on a hook's stdin: OpenCode's session
// id (ses_…), the OpenCode event and the project folder, and the OpenCode
// executable the plugin runs in (opencode_bin). A field of another type
// than a string is passed over and recorded in in.Mistyped, an error only
// for the hooks that read it (harness.HookInput.Check).
func parsePayload(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	m, err := harness.DecodePayload(data, "OpenCode hook payload")
	if err != nil {
		return in, err
	}
	harness.StringFields(m,
		harness.Field{Key: "session_id", To: &in.SessionID, Bad: &in.Mistyped.SessionID},
		harness.Field{Key: "hook_event_name", To: &in.HarnessEvent, Bad: &in.Mistyped.HarnessEvent},
		harness.Field{Key: "cwd", To: &in.CWD, Bad: &in.Mistyped.CWD},
		harness.Field{Key: "transcript_path", To: &in.TranscriptPath, Bad: &in.Mistyped.TranscriptPath},
		harness.Field{Key: "opencode_bin", To: &in.Binary, Bad: &in.Mistyped.Binary},
	)
	in.SessionID = strings.TrimSpace(in.SessionID)
	return in, nil
}

// ParseHookInput implements harness.Adapter. The session id is OpenCode's
// own (ses_…): `opencode export` needs it as it is, and the hook runtime
// turns it into a UUID for the session log. OpenCode keeps no transcript
// file: TranscriptPath is empty, and the capture hook gets the transcript
// through ExportTranscript.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	return parsePayload(data)
}

// HookOutput implements harness.Adapter. OpenCode reads nothing a hook
// prints: ok is always false. Session-start context goes through
// WriteContext instead.
func (*Adapter) HookOutput(harness.Event, string) ([]byte, bool) { return nil, false }
