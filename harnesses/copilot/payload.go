package copilot

import (
	"encoding/json"
	"fmt"
	"os"
	"os/user"
	"path/filepath"

	"github.com/kk-project/kk/internal/harness"
)

// ParseHookInput implements harness.Adapter. Copilot sends one of two
// payload dialects, chosen by the casing of the event name in the hook
// file: camelCase events (the ones kk registers) send camelCase fields
// (sessionId, transcriptPath) and no event name; PascalCase events send
// VS Code–style snake_case fields (session_id, transcript_path,
// hook_event_name). Both are read, whichever fields are present, and a
// field of an unexpected type is passed over (another spelling backs it
// up) and recorded in in.Mistyped, an error only for the hooks that read
// it (harness.HookInput.Check), so a payload that drifts between Copilot
// releases still parses.
//
// Only agentStop, preCompact and subagent payloads carry a transcript
// path; for the others it is derived from the session id (see
// transcriptPathFor).
func (*Adapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in harness.HookInput
	m, err := harness.DecodePayload(data, "copilot hook payload")
	if err != nil {
		return in, err
	}
	harness.ReadString(m, &in.SessionID, &in.Mistyped.SessionID, "sessionId", "session_id")
	harness.ReadString(m, &in.CWD, &in.Mistyped.CWD, "cwd")
	harness.ReadString(m, &in.TranscriptPath, &in.Mistyped.TranscriptPath, "transcriptPath", "transcript_path")
	harness.ReadString(m, &in.Prompt, &in.Mistyped.Prompt, "prompt")
	harness.ReadString(m, &in.HarnessEvent, &in.Mistyped.HarnessEvent, "hook_event_name", "hookEventName")
	if in.HarnessEvent == "" {
		in.HarnessEvent = inferEvent(m)
		if in.HarnessEvent != "" {
			in.Mistyped.HarnessEvent = ""
		}
	}
	if in.TranscriptPath == "" {
		in.TranscriptPath, in.NoTranscript = transcriptPathFor(in.SessionID)
		if in.TranscriptPath != "" {
			in.Mistyped.TranscriptPath = ""
		}
	}
	return in, nil
}

// inferEvent names the camelCase event a payload came from by the fields
// only that event sends (cli-hooks-reference: sessionStart has source,
// sessionEnd reason, agentStop stopReason, preCompact trigger,
// userPromptSubmitted prompt).
func inferEvent(m map[string]json.RawMessage) string {
	has := func(k string) bool { _, ok := m[k]; return ok }
	switch {
	case has("stopReason") && has("agentName"):
		return "subagentStop"
	case has("stopReason"):
		return "agentStop"
	case has("trigger"):
		return "preCompact"
	case has("reason"):
		return "sessionEnd"
	case has("source"):
		return "sessionStart"
	case has("prompt"):
		return "userPromptSubmitted"
	}
	return ""
}

// safeSessionID reports whether a session id may become part of a path:
// Copilot's are UUIDs; anything of up to 128 letters, digits, _ and -,
// not starting with _ or -, is accepted. (A regular expression with a
// {0,127} repeat cost every kk process 0.7 ms to compile at start-up.)
func safeSessionID(id string) bool {
	if id == "" || len(id) > 128 || id[0] == '_' || id[0] == '-' {
		return false
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// transcriptPathFor returns where Copilot keeps the events of a session:
// ${COPILOT_HOME:-~/.copilot}/session-state/<id>/events.jsonl. It returns
// "" with the reason for an id that is not safe to put in a path, or
// when there is no home folder to look in ("" and "" for no id).
func transcriptPathFor(sessionID string) (path, problem string) {
	if sessionID == "" {
		return "", ""
	}
	if !safeSessionID(sessionID) {
		return "", fmt.Sprintf("the payload names no transcript, and its session id %q cannot name a folder of Copilot's session-state (a UUID can)", sessionID)
	}
	home := copilotHome()
	if home == "" {
		return "", "Copilot keeps a session's transcript in $COPILOT_HOME/session-state/" + sessionID +
			"/events.jsonl, or under ~/.copilot, and HOME is not set in the hook's environment (nor COPILOT_HOME, and the user database names no home folder): " +
			"set HOME (or COPILOT_HOME) in the environment Copilot runs its hooks in"
	}
	return filepath.Join(home, "session-state", sessionID, "events.jsonl"), ""
}

// copilotHome is Copilot's configuration folder: $COPILOT_HOME, else
// ~/.copilot, the home folder found as Copilot (Node's os.homedir) finds
// it: $HOME, else the account's entry in the user database.
func copilotHome() string {
	if h := os.Getenv(homeEnv); h != "" {
		return h
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		home = accountHome()
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, userDirRel)
}

// accountHome is the home folder of the user running kk in the user
// database (/etc/passwd or its equivalents), "" when it names none.
var accountHome = func() string {
	u, err := user.Current()
	if err != nil {
		return ""
	}
	return u.HomeDir
}

// HookOutput implements harness.Adapter: {"additionalContext": …} on one
// line for sessionStart (session-start) and userPromptSubmitted
// (prompt-context), the two camelCase events whose output Copilot reads
// (1.0.102). The context is capped as Claude Code's is (CapContext).
func (*Adapter) HookOutput(ev harness.Event, text string) ([]byte, bool) {
	if ev == harness.GraphHint {
		// agentStop reads {"decision":"block","reason":…}: Copilot goes on
		// for another turn with the reason (cli-hooks-reference).
		return harness.ContinueOutput("block", text), true
	}
	if ev != harness.SessionStart && ev != harness.PromptContext {
		return nil, false
	}
	return append(harness.MustRawJSON(struct {
		AdditionalContext string `json:"additionalContext"`
	}{harness.CapContext(text)}), '\n'), true
}
