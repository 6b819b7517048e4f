package gemini

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// A chat recording (packages/core/src/services/chatRecordingService.ts) is
// JSON Lines:
//
//	{"sessionId", "projectHash", "startTime", …}    metadata, first line
//	{"id", "timestamp", "type", "content", …}       a message; a later line
//	                                                with the same id replaces it
//	{"$set": {…}}                                   metadata update; $set.messages
//	                                                replaces the whole history
//	{"$rewindTo": "<id>"}                           drops that message and all after
//
// Releases before the JSON Lines format wrote one JSON document,
// {"sessionId", …, "messages": [ … ]}, read here too. Message types are
// user, gemini (the model), info, error and warning; content is a string
// or a list of {text} parts; gemini messages carry toolCalls
// [{id, name, args, …}].

// message is the part of a message record kk reads. Content is a string
// or a list of parts, so it is decoded as any, in the same pass as the
// rest.
type message struct {
	ID             string     `json:"id"`
	Type           string     `json:"type"`
	Content        any        `json:"content"`
	DisplayContent any        `json:"displayContent"`
	ToolCalls      []toolCall `json:"toolCalls"`
}

type toolCall struct {
	Name string `json:"name"`
	Args any    `json:"args"`
}

// record is any line of a chat recording.
type record struct {
	message
	RewindTo *string `json:"$rewindTo"`
	Set      *struct {
		Messages []message `json:"messages"`
	} `json:"$set"`
	Messages []message `json:"messages"`
}

// ParseTranscript implements harness.Adapter: the history as it stands
// at the end of the file, user messages as user turns (what the user
// typed, when Gemini recorded it apart from the expanded prompt, without
// the blocks Gemini CLI injects) and
// gemini messages as agent turns, with the files read through read tools
// and named in shell commands. Lines that are not JSON — a last line cut
// off while Gemini was writing it, say — are skipped.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	msgs, err := history(r)
	if err != nil {
		return harness.Transcript{}, err
	}
	var t harness.Transcript
	for _, m := range msgs {
		switch m.Type {
		case "user":
			text := strings.TrimSpace(textOf(m.DisplayContent))
			if text == "" {
				text = strings.TrimSpace(textOf(m.Content))
			}
			text = harness.StripTags(text, injectedTags...)
			if text != "" {
				t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: text})
			}
		case "gemini", "model":
			if text := strings.TrimSpace(textOf(m.Content)); text != "" {
				t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: text})
			}
			for _, c := range m.ToolCalls {
				t.Reads = append(t.Reads, toolReads(c)...)
			}
		}
	}
	return t, nil
}

// injectedTags are the blocks Gemini CLI records as user messages that
// the user did not write: its setup message (<session_context>: date,
// folder listing, MCP server instructions) and the context hooks added
// (<hook_context>: kk's ENTRY.md at SessionStart, kk's prompt context at
// BeforeAgent), both as of 0.61.
var injectedTags = []string{"session_context", "hook_context"}

// history replays a chat recording (either format) into its messages.
// A file whose first line is a lone "{" is the legacy pretty-printed
// document, decoded whole; anything else is read line by line.
func history(r io.Reader) ([]message, error) {
	var p replayer
	var legacy []byte
	first, isLegacy := true, false
	err := harness.EachLine(r, func(line []byte) {
		if first {
			first, isLegacy = false, string(bytes.TrimSpace(line)) == "{"
		}
		if isLegacy {
			legacy = append(legacy, line...)
			return
		}
		p.apply(line)
	})
	if err != nil {
		return nil, fmt.Errorf("reading the Gemini transcript: %w", err)
	}
	if isLegacy {
		p.apply(legacy)
	}
	return p.msgs, nil
}

// replayer applies records in order.
type replayer struct {
	msgs []message
	pos  map[string]int // message id → index in msgs
}

func (p *replayer) reset(list []message) {
	p.msgs = list
	clear(p.pos)
	for i, m := range list {
		p.pos[m.ID] = i
	}
}

func (p *replayer) apply(line []byte) {
	if len(bytes.TrimSpace(line)) == 0 {
		return
	}
	if p.pos == nil {
		p.pos = map[string]int{}
	}
	var rec record
	// A field of an unexpected type is left empty; the rest of the line
	// still decodes. A line that is not JSON is skipped.
	if ok, _ := harness.UnmarshalLenient(line, &rec); !ok {
		return
	}
	switch {
	case rec.RewindTo != nil:
		if i, ok := p.pos[*rec.RewindTo]; ok {
			p.reset(p.msgs[:i])
		} else {
			p.reset(nil)
		}
	case rec.Set != nil:
		if rec.Set.Messages != nil {
			p.reset(rec.Set.Messages)
		}
	case len(rec.Messages) > 0:
		// Metadata that holds the history (the legacy document, or a
		// migrated first line).
		p.reset(rec.Messages)
	case rec.ID != "":
		if i, ok := p.pos[rec.ID]; ok {
			p.msgs[i] = rec.message
		} else {
			p.pos[rec.ID] = len(p.msgs)
			p.msgs = append(p.msgs, rec.message)
		}
	}
}

// textOf returns the text of a content value: a string, a list of strings
// or {text} parts, or a {text} or {parts} object. Parts without text
// (function calls and responses, inline data) and thought parts are left
// out.
func textOf(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case []any:
		var b strings.Builder
		for _, p := range x {
			b.WriteString(textOf(p))
		}
		return b.String()
	case map[string]any:
		if thought, _ := x["thought"].(bool); thought {
			return ""
		}
		if t, ok := x["text"]; ok {
			return textOf(t)
		}
		return textOf(x["parts"])
	}
	return ""
}

// Gemini CLI's built-in tools that read files, and its shell tool.
var (
	readTools  = map[string]bool{"read_file": true, "read_many_files": true}
	shellTools = map[string]bool{"run_shell_command": true}
)

// toolReads returns the files a tool call read.
func toolReads(c toolCall) []harness.Read {
	args, ok := c.Args.(map[string]any)
	if !ok {
		return nil
	}
	var reads []harness.Read
	switch {
	case readTools[c.Name]:
		for _, key := range []string{"file_path", "absolute_path", "path"} {
			if p, ok := args[key].(string); ok && p != "" {
				reads = append(reads, harness.Read{Path: p, Tool: c.Name})
				break
			}
		}
		for _, key := range []string{"paths", "include"} {
			list, _ := args[key].([]any)
			for _, x := range list {
				if p, ok := x.(string); ok && p != "" {
					reads = append(reads, harness.Read{Path: p, Tool: c.Name})
				}
			}
		}
	case shellTools[c.Name]:
		cmd, _ := args["command"].(string)
		for _, p := range harness.MarkdownPaths(cmd) {
			reads = append(reads, harness.Read{Path: p, Tool: c.Name})
		}
	}
	return reads
}
