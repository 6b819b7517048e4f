package opencode

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// payload is what kk's plugin sends on a hook's stdin: OpenCode's session
// id (ses_…), the OpenCode event and the project folder.
type payload struct {
	SessionID      string `json:"session_id"`
	HookEventName  string `json:"hook_event_name"`
	CWD            string `json:"cwd"`
	TranscriptPath string `json:"transcript_path"`
	// OpenCodeBin is the OpenCode executable the plugin runs in.
	OpenCodeBin string `json:"opencode_bin"`
}

func parsePayload(data []byte) (payload, error) {
	var p payload
	if _, err := harness.DecodePayload(data, "OpenCode hook payload"); err != nil {
		return p, err
	}
	if err := json.Unmarshal(data, &p); err != nil {
		return p, fmt.Errorf("OpenCode hook payload: %w", err)
	}
	return p, nil
}

// ParseHookInput implements harness.Adapter. The session id is OpenCode's
// own (ses_…): `opencode export` needs it as it is, and the hook runtime
// turns it into a UUID for the session log. OpenCode keeps no transcript
// file: TranscriptPath is empty, and the capture hook gets the transcript
// through ExportTranscript.
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	p, err := parsePayload(data)
	if err != nil {
		return harness.HookInput{}, err
	}
	return harness.HookInput{
		HarnessEvent:   p.HookEventName,
		SessionID:      strings.TrimSpace(p.SessionID),
		CWD:            p.CWD,
		TranscriptPath: p.TranscriptPath,
		Binary:         p.OpenCodeBin,
	}, nil
}

// HookOutput implements harness.Adapter. OpenCode reads nothing a hook
// prints: ok is always false. Session-start context goes through
// WriteContext instead.
func (*Adapter) HookOutput(harness.Event, string) ([]byte, bool) { return nil, false }
