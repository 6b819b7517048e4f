package claude

import (
	"encoding/json"
	"io"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// line is one line of a Claude Code transcript (harnesses.md §1.3).
// Content is decoded as blocks in the same pass as the line; content that
// is a plain string fails that with a type error and is read again on its
// own (see decodeLine), which keeps the common case to one decode.
type line struct {
	Type        string `json:"type"`
	IsMeta      bool   `json:"isMeta"`
	IsSidechain bool   `json:"isSidechain"`
	Message     *struct {
		Role    string  `json:"role"`
		Content []block `json:"content"`
	} `json:"message"`
}

// block is one content block of a message.
type block struct {
	Type  string          `json:"type"`
	Text  string          `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ParseTranscript reads a Claude Code session transcript (JSONL). User
// turns are user lines with text (lines that only carry tool results, and
// isMeta lines, are skipped), without the blocks Claude Code adds to them
// (see userText); agent turns are the text blocks of assistant lines.
// Only lines of type user and assistant are turns: since 2.1.332 Claude
// Code also records each API request as api-request-blob lines whose
// message has role user and holds its system reminders (instructions
// files, git status) and kk's session-start context. Read tool calls, and markdown paths named in Bash commands, are
// the session's reads. Sub-agent (sidechain) lines add reads but no turns.
// Lines that are not JSON (a last line cut off while Claude Code was
// writing it) are skipped; a transcript with no JSON line at all is an
// error.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	var t harness.Transcript
	err := harness.EachJSONLine(r, "a Claude Code transcript", func(data []byte) bool {
		l, text, ok := decodeLine(data)
		if !ok {
			return false
		}
		if l.Message == nil || l.IsMeta {
			return true
		}
		if l.Type != "" && l.Type != "user" && l.Type != "assistant" {
			return true // api-request-blob, attachment, system, …
		}
		role := l.Message.Role
		if role == "" {
			role = l.Type
		}
		blocks := l.Message.Content
		if text == "" {
			text = blockText(blocks)
		}
		switch role {
		case "user":
			if text = userText(text); !l.IsSidechain && text != "" {
				t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: text})
			}
		case "assistant":
			if !l.IsSidechain && text != "" {
				t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: text})
			}
			for _, b := range blocks {
				if b.Type == "tool_use" {
					t.Reads = append(t.Reads, toolReads(b)...)
				}
			}
		}
		return true
	})
	return t, err
}

// decodeLine decodes one transcript line. text is the message content
// when it is a plain string; ok is false when the line is not a JSON
// object.
func decodeLine(data []byte) (l line, text string, ok bool) {
	if ok, drifted := harness.UnmarshalLenient(data, &l); !drifted {
		return l, "", ok
	}
	var s struct {
		Message struct {
			Content string `json:"content"`
		} `json:"message"`
	}
	if json.Unmarshal(data, &s) == nil && l.Message != nil { // the content was a string, not blocks
		text, l.Message.Content = strings.TrimSpace(s.Message.Content), nil
	}
	return l, text, true
}

// injectedTags are the blocks Claude Code puts into user messages: system
// reminders (instructions files, git status, hook context) and the caveat
// before the output of local commands.
var injectedTags = []string{"system-reminder", "local-command-caveat", "local-command-stdout", "local-command-stderr"}

// userText is what the user said in a user message: the blocks Claude Code
// added taken out, and a slash command (recorded as <command-name>,
// <command-message> and <command-args>) written back as the user typed it,
// "/kk-add the words".
func userText(text string) string {
	if !strings.Contains(text, "<") {
		return text
	}
	text = harness.StripTags(text, injectedTags...)
	name, hasName := tagText(text, "command-name")
	if !hasName {
		return text
	}
	args, _ := tagText(text, "command-args")
	rest := harness.StripTags(text, "command-name", "command-message", "command-args")
	return strings.TrimSpace(strings.Join(slices.DeleteFunc([]string{name, args, rest}, func(s string) bool { return s == "" }), " "))
}

// tagText returns the trimmed text inside the first <tag>…</tag> of s.
func tagText(s, tag string) (string, bool) {
	_, after, ok := strings.Cut(s, "<"+tag+">")
	if !ok {
		return "", false
	}
	inner, _, ok := strings.Cut(after, "</"+tag+">")
	return strings.TrimSpace(inner), ok
}

// blockText joins the text blocks of a message by newlines.
func blockText(blocks []block) string {
	var texts []string
	for _, b := range blocks {
		if b.Type == "text" && strings.TrimSpace(b.Text) != "" {
			texts = append(texts, strings.TrimSpace(b.Text))
		}
	}
	return strings.Join(texts, "\n")
}

// toolReads returns the files a tool call read: Read's file_path, and the
// markdown paths a Bash command names.
func toolReads(b block) []harness.Read {
	var in struct {
		FilePath string `json:"file_path"`
		Command  string `json:"command"`
	}
	if json.Unmarshal(b.Input, &in) != nil {
		return nil
	}
	switch b.Name {
	case "Read":
		if in.FilePath != "" {
			return []harness.Read{{Path: in.FilePath, Tool: b.Name}}
		}
	case "Bash":
		var reads []harness.Read
		for _, p := range harness.MarkdownPaths(in.Command) {
			reads = append(reads, harness.Read{Path: p, Tool: b.Name})
		}
		return reads
	}
	return nil
}
