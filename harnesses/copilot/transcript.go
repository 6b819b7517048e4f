package copilot

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// event is one line of events.jsonl: {type, data, id, timestamp, parentId}.
// Values whose type drifts between releases (content is a string or a
// list of parts) are decoded as any, in the same pass as the rest.
type event struct {
	Type      string    `json:"type"`
	Data      eventData `json:"data"`
	Timestamp string    `json:"timestamp"`
	TurnID    string    `json:"turnId"`
	ParentID  string    `json:"parentId"`

	at time.Time // parsed timestamp (carried over from the line before when missing)
}

// eventData holds the fields of data kk reads.
type eventData struct {
	Content            any    `json:"content"`
	TransformedContent any    `json:"transformedContent"`
	ReasoningText      any    `json:"reasoningText"`
	ToolRequests       []any  `json:"toolRequests"`
	InteractionID      string `json:"interactionId"`
	TurnID             string `json:"turnId"`
	ToolName           string `json:"toolName"`
	Arguments          any    `json:"arguments"`
}

// wanted are the event types ParseTranscript reads; a line that names
// none of them is skipped without being decoded (tool results make up
// most of a transcript).
var wanted = [][]byte{[]byte(`"user.message"`), []byte(`"assistant.message"`), []byte(`"tool.execution_start"`)}

// ParseTranscript implements harness.Adapter for events.jsonl (one JSON
// event per line; lines may be megabytes long). user.message events are
// user turns and assistant.message events agent turns; consecutive agent
// messages answering the same user message are joined. Events are put in
// timestamp order (line order breaks ties). Lines that are not JSON — a
// last line cut off while Copilot was writing it, say — are skipped.
//
// Reads come from tool.execution_start events: the view tool's path, and
// the .md paths named in shell commands.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	events, err := readEvents(r)
	if err != nil {
		return harness.Transcript{}, err
	}
	var t harness.Transcript
	var lastKey string
	for _, ev := range events {
		d := ev.Data
		switch ev.Type {
		case "user.message":
			text := strings.TrimSpace(textOfValue(d.Content))
			if text == "" {
				text = strings.TrimSpace(stripInjected(textOfValue(d.TransformedContent)))
			}
			if text != "" {
				t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: text})
				lastKey = ""
			}
		case "assistant.message":
			text := strings.TrimSpace(textOfValue(d.Content))
			if text == "" && len(d.ToolRequests) == 0 {
				text = strings.TrimSpace(textOfValue(d.ReasoningText))
			}
			if text == "" {
				continue
			}
			key := ev.groupKey()
			if n := len(t.Turns); n > 0 && t.Turns[n-1].Role == harness.Agent && key != "" && key == lastKey {
				t.Turns[n-1].Text += "\n\n" + text
				continue
			}
			t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: text})
			lastKey = key
		case "tool.execution_start":
			t.Reads = append(t.Reads, toolReads(d.ToolName, d.Arguments)...)
		}
	}
	return t, nil
}

// groupKey names the turn an assistant message belongs to: Copilot's
// interactionId (1.0.102), else the turnId of older builds (on the event
// or in its data), else the event it answers (parentId), which chunks of
// one answer share in builds that name neither (kenkeep's fixture of
// 1.0.61's events.jsonl).
func (ev event) groupKey() string {
	for _, k := range []string{ev.Data.InteractionID, ev.TurnID, ev.Data.TurnID, ev.ParentID} {
		if k != "" {
			return k
		}
	}
	return ""
}

// readEvents reads every parseable line of a wanted type and sorts the
// events by time.
func readEvents(r io.Reader) ([]event, error) {
	var events []event
	var last time.Time
	err := harness.EachLine(r, func(line []byte) {
		if !slices.ContainsFunc(wanted, func(w []byte) bool { return bytes.Contains(line, w) }) {
			return
		}
		var ev event
		// A field of an unexpected type is left empty; the rest of the
		// line still decodes.
		if ok, _ := harness.UnmarshalLenient(line, &ev); ok && ev.Type != "" {
			if at, perr := time.Parse(time.RFC3339Nano, ev.Timestamp); perr == nil {
				last = at
			}
			ev.at = last
			events = append(events, ev)
		}
	})
	if err != nil {
		return nil, fmt.Errorf("reading the Copilot transcript: %w", err)
	}
	slices.SortStableFunc(events, func(a, b event) int { return a.at.Compare(b.at) })
	return events, nil
}

// textOf returns the text of a raw content value.
func textOf(raw json.RawMessage) string {
	var v any
	if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
		return ""
	}
	return textOfValue(v)
}

// textOfValue returns the text of a content value: a string, a list of
// strings or {text} parts, or a {text} object.
func textOfValue(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var out []string
		for _, p := range x {
			if t := textOfValue(p); t != "" {
				out = append(out, t)
			}
		}
		return strings.Join(out, "\n")
	case map[string]any:
		return textOfValue(x["text"])
	}
	return ""
}

// stripInjected takes out of transformedContent the blocks Copilot adds
// around what the user typed: the date, reminders, and (since 1.0.102) the
// context of a userPromptSubmitted hook in a <system_reminder> block.
func stripInjected(s string) string {
	return harness.StripTags(s, "current_datetime", "reminder", "system_reminder")
}

// Tools whose arguments name files the session read.
var (
	readTools  = map[string]bool{"view": true}
	shellTools = map[string]bool{"bash": true, "shell": true, "powershell": true, "run_in_terminal": true, "exec": true}
)

// toolReads returns the files a tool call read.
func toolReads(tool string, args any) []harness.Read {
	if str, ok := args.(string); ok {
		// Some builds send the arguments as a JSON string holding the object.
		_ = json.Unmarshal([]byte(str), &args)
	}
	a, ok := args.(map[string]any)
	if !ok {
		return nil
	}
	switch {
	case readTools[tool]:
		if p := harness.FirstString(a, "path", "file_path", "filePath"); p != "" {
			return []harness.Read{{Path: p, Tool: tool}}
		}
	case shellTools[tool]:
		var reads []harness.Read
		for _, p := range harness.MarkdownPaths(harness.FirstString(a, "command", "cmd")) {
			reads = append(reads, harness.Read{Path: p, Tool: tool})
		}
		return reads
	}
	return nil
}

// settleWindow is how much of the end of events.jsonl Settled reads.
const settleWindow = 1 << 20

// Settled implements harness.TranscriptSettler. Copilot 1.0.102 writes a
// turn's events to events.jsonl only after its agentStop and sessionEnd
// hooks have returned, so at hook time the file ends with the user's
// message. It has settled when the last user.message is followed by an
// assistant.turn_end, or the session has ended (session.shutdown).
func (*Adapter) Settled(path string) (bool, error) {
	f, err := harness.OpenTail(path, settleWindow) // only the end matters
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil // not written yet
	}
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }()
	turnEnded, shutdown := false, false
	err = harness.EachLine(f, func(line []byte) {
		var ev struct {
			Type string `json:"type"`
		}
		if !bytes.Contains(line, []byte(`"type"`)) || json.Unmarshal(line, &ev) != nil {
			return
		}
		switch ev.Type {
		case "user.message":
			turnEnded = false
		case "assistant.turn_end":
			turnEnded = true
		case "session.shutdown":
			shutdown = true
		}
	})
	if err != nil {
		return false, err
	}
	return shutdown || turnEnded, nil
}
