package codex

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// rolloutLine is one line of a Codex rollout file (harnesses.md §2.3),
// decoded in one pass. Message content that is a plain string instead of
// blocks fails that with a type error and is read again on its own (see
// decodeLine).
type rolloutLine struct {
	Type    string         `json:"type"`
	Payload rolloutPayload `json:"payload"`
}

// textBlock is one block of a message's content.
type textBlock struct {
	Type string `json:"type"`
	Text string `json:"text"`
}

// rolloutPayload holds the payload fields kk reads, across line types.
type rolloutPayload struct {
	Type             string          `json:"type"`
	Role             string          `json:"role"`
	Content          []textBlock     `json:"content"`
	Message          string          `json:"message"`
	LastAgentMessage string          `json:"last_agent_message"`
	Name             string          `json:"name"`
	Arguments        json.RawMessage `json:"arguments"`
	Input            json.RawMessage `json:"input"`
	Action           json.RawMessage `json:"action"`
}

// piece is one candidate turn, before the choice of sources.
type piece struct {
	kind string // user-event, user-item, agent-item, agent-event, task-complete
	text string
}

// ParseTranscript reads a Codex rollout (JSONL of {timestamp, type,
// payload}). Codex records each message twice: as a response_item and as
// an event_msg. User turns come from the user_message events, which hold
// what the user typed (the user response items also carry the AGENTS.md
// and environment blocks Codex injects); agent turns come from the
// assistant response items. Either falls back to the other source when a
// rollout lacks it: Codex 0.169 writes no user_message events, so its user
// turns are the user response items without the blocks Codex injects
// (instructions, environment, and a named skill's body, which 0.169
// records as a user message of its own). task_complete's last_agent_message is a turn only when
// it differs from the agent turn before it. Function calls give the reads:
// read tools' paths and markdown paths in shell commands. Lines that are
// not JSON (a last line cut off mid-write) are skipped; a file with no
// JSON line at all is an error.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	var t harness.Transcript
	var pieces []piece
	has := map[string]bool{}
	err := harness.EachJSONLine(r, "a Codex rollout", func(data []byte) bool {
		l, text, ok := decodeLine(data)
		if !ok {
			return false
		}
		p := l.Payload
		add := func(kind, text string) {
			if text = strings.TrimSpace(text); text != "" {
				pieces = append(pieces, piece{kind, text})
				has[kind] = true
			}
		}
		switch {
		case l.Type == "event_msg" && p.Type == "user_message":
			add("user-event", p.Message)
		case l.Type == "event_msg" && p.Type == "agent_message":
			add("agent-event", p.Message)
		case l.Type == "event_msg" && p.Type == "task_complete":
			add("task-complete", p.LastAgentMessage)
		case l.Type == "response_item" && p.Type == "message" && p.Role == "user":
			add("user-item", userString(text)+messageText(p.Content, true))
		case l.Type == "response_item" && p.Type == "message" && p.Role == "assistant":
			add("agent-item", text+messageText(p.Content, false))
		case l.Type == "response_item":
			t.Reads = append(t.Reads, callReads(p)...)
		}
		return true
	})
	if err != nil {
		return t, err
	}
	lastAgent := ""
	for _, p := range pieces {
		switch {
		case p.kind == "user-event" || (p.kind == "user-item" && !has["user-event"]):
			t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: p.text})
		case p.kind == "agent-item" || (p.kind == "agent-event" && !has["agent-item"]) ||
			(p.kind == "task-complete" && p.text != lastAgent):
			t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: p.text})
			lastAgent = p.text
		}
	}
	return t, nil
}

// injected are the openings of the blocks Codex adds to user messages
// (instructions and environment), which are not the user's words.
var injected = []string{"<environment_context>", "<user_instructions>", "<permissions instructions>", "# AGENTS.md instructions"}

// injectedTags are the tagged blocks Codex adds to user messages: the body
// of a skill the user named ($kk-add), recorded as a user message of its
// own since 0.169, and the instruction and environment blocks.
var injectedTags = []string{"skill", "environment_context", "user_instructions", "permissions instructions", "turn_aborted"}

// userString is a user message's content given as a plain string, without
// what Codex injects.
func userString(text string) string {
	if text = strings.TrimSpace(text); isInjected(text) {
		return ""
	}
	return harness.StripTags(text, injectedTags...)
}

// decodeLine decodes one rollout line. text is the message content when
// it is a plain string; ok is false when the line is not a JSON object.
func decodeLine(data []byte) (l rolloutLine, text string, ok bool) {
	if ok, drifted := harness.UnmarshalLenient(data, &l); !drifted {
		return l, "", ok
	}
	var s struct {
		Payload struct {
			Content string `json:"content"`
		} `json:"payload"`
	}
	if json.Unmarshal(data, &s) == nil { // the content was a string, not blocks
		text, l.Payload.Content = s.Payload.Content, nil
	}
	return l, text, true
}

// messageText joins the *_text blocks of a message's content. For user
// messages it leaves out the blocks Codex injects.
func messageText(blocks []textBlock, user bool) string {
	var texts []string
	for _, b := range blocks {
		text := strings.TrimSpace(b.Text)
		if !strings.HasSuffix(b.Type, "_text") || text == "" {
			continue
		}
		if user && isInjected(text) {
			continue
		}
		if user {
			if text = harness.StripTags(text, injectedTags...); text == "" {
				continue
			}
		}
		texts = append(texts, text)
	}
	return strings.Join(texts, "\n")
}

// isInjected reports whether a user text block is one Codex added.
func isInjected(text string) bool {
	for _, p := range injected {
		if strings.HasPrefix(text, p) {
			return true
		}
	}
	return false
}

// readTools and shellTools are the function names whose calls read files
// (harnesses.md §2.3; kenkeep read-extract).
var (
	readTools  = []string{"read", "read_file", "view", "open_file"}
	shellTools = []string{"shell", "exec_command", "local_shell", "container.exec"}
)

// callReads returns the files a function call read: a read tool's path,
// or the markdown paths a shell command names.
func callReads(p rolloutPayload) []harness.Read {
	var args map[string]json.RawMessage
	switch p.Type {
	case "function_call", "tool_call", "custom_tool_call":
		args = callArgs(p.Arguments)
		if args == nil {
			args = callArgs(p.Input)
		}
	case "local_shell_call":
		args = callArgs(p.Action)
		p.Name = "local_shell"
	default:
		return nil
	}
	switch {
	case slices.Contains(readTools, p.Name):
		for _, k := range []string{"path", "file_path", "filePath"} {
			var s string
			if json.Unmarshal(args[k], &s) == nil && s != "" {
				return []harness.Read{{Path: s, Tool: p.Name}}
			}
		}
	case slices.Contains(shellTools, p.Name):
		var reads []harness.Read
		for _, k := range []string{"command", "cmd"} {
			for _, path := range harness.MarkdownPaths(commandText(args[k])) {
				reads = append(reads, harness.Read{Path: path, Tool: p.Name})
			}
		}
		return reads
	}
	return nil
}

// callArgs decodes call arguments: a JSON object, or a string holding one.
func callArgs(raw json.RawMessage) map[string]json.RawMessage {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	return m
}

// commandText is a command given as a string or as an argv array.
func commandText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(raw, &argv) == nil {
		return strings.Join(argv, " ")
	}
	return ""
}
