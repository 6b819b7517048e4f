package cursor

import (
	"encoding/json"
	"io"
	"regexp"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// line is one line of a Cursor agent transcript (harnesses.md §3.3):
// {"role": "user"|"assistant", "message": {"content": [blocks]}}. Older
// builds put the role in message.role or type.
type line struct {
	Role    string `json:"role"`
	Type    string `json:"type"`
	Message struct {
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
}

// block is one content block: text, or a tool call with its input.
type block struct {
	Type  string          `json:"type"`
	Text  *string         `json:"text"`
	Name  string          `json:"name"`
	Input json.RawMessage `json:"input"`
}

// ParseTranscript implements harness.Adapter. Lines that are not JSON
// are skipped (the last one may be cut short while Cursor writes it); a
// transcript none of whose lines is JSON is an error.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	var t harness.Transcript
	err := harness.EachJSONLine(r, "a Cursor transcript (JSON lines expected)", func(raw []byte) bool {
		var l line
		if json.Unmarshal(raw, &l) != nil {
			return false
		}
		addLine(&t, l)
		return true
	})
	return t, err
}

func addLine(t *harness.Transcript, l line) {
	role := l.Role
	if role == "" {
		role = l.Message.Role
	}
	if role == "" {
		role = l.Type
	}
	var raws []json.RawMessage
	var text []string
	if err := json.Unmarshal(l.Message.Content, &raws); err != nil {
		var s string
		if json.Unmarshal(l.Message.Content, &s) == nil && s != "" {
			text = append(text, s)
		}
	}
	for _, raw := range raws {
		var b block
		if json.Unmarshal(raw, &b) != nil {
			continue // a block of a shape kk does not know
		}
		switch {
		case b.Type == "tool_use":
			t.Reads = append(t.Reads, blockReads(b)...)
		case (b.Type == "text" || b.Type == "") && b.Text != nil && *b.Text != "":
			text = append(text, *b.Text)
		}
	}
	body := strings.Join(text, "\n")
	switch role {
	case "user":
		if body = userText(body); body != "" {
			t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: body})
		}
	case "assistant":
		if body = strings.TrimSpace(body); body != "" {
			t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: body})
		}
	}
}

var (
	userQuery = regexp.MustCompile(`(?s)<user_query>\s*(.*?)\s*</user_query>`)
	timestamp = regexp.MustCompile(`(?s)<timestamp>.*?</timestamp>`)
)

// userText strips the wrapping Cursor puts around what the user typed:
// <user_query>…</user_query>, sometimes after a <timestamp>…</timestamp>.
func userText(s string) string {
	if m := userQuery.FindAllStringSubmatch(s, -1); m != nil {
		var parts []string
		for _, q := range m {
			parts = append(parts, q[1])
		}
		s = strings.Join(parts, "\n")
	}
	return strings.TrimSpace(timestamp.ReplaceAllString(s, ""))
}

// readTools open one file at input.path (Read today, ReadFile in older
// builds).
var readTools = map[string]bool{"Read": true, "ReadFile": true}

// searchTools count as reading a file only when they name one .md file.
var searchTools = map[string]bool{"grep": true, "glob": true, "search": true, "semanticsearch": true,
	"codebase_search": true, "grep_search": true, "file_search": true, "glob_file_search": true}

// blockReads returns the files a tool call read, for the usage ledger
// (kenkeep-v1.17.md §16): the path of a read tool, the .md paths named in
// a shell command, and the .md path a search was pointed at.
func blockReads(b block) []harness.Read {
	var input map[string]any
	_ = json.Unmarshal(b.Input, &input) // an input that is not an object names no file
	if readTools[b.Name] {
		if p := firstString(input, "path", "file_path", "target_file"); p != "" {
			return []harness.Read{{Path: p, Tool: b.Name}}
		}
		return nil
	}
	if cmd := commandString(input); cmd != "" {
		var out []harness.Read
		for _, p := range markdownPaths(cmd) {
			out = append(out, harness.Read{Path: p, Tool: b.Name})
		}
		return out
	}
	if searchTools[strings.ToLower(b.Name)] {
		if p := firstString(input, "path", "file_path"); strings.HasSuffix(strings.ToLower(p), ".md") {
			return []harness.Read{{Path: p, Tool: b.Name}}
		}
	}
	return nil
}

func firstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}

// commandString is a shell tool's command: input.command or input.cmd,
// a string or an argv list.
func commandString(m map[string]any) string {
	for _, k := range []string{"command", "cmd"} {
		switch v := m[k].(type) {
		case string:
			return v
		case []any:
			var words []string
			for _, w := range v {
				if s, ok := w.(string); ok {
					words = append(words, s)
				}
			}
			return strings.Join(words, " ")
		}
	}
	return ""
}

// mdPath is a .md path inside a command line (kenkeep-v1.17.md §16).
var mdPath = regexp.MustCompile("[^\\s'\"`|&;<>(){}=,]+\\.md\\b")

func markdownPaths(cmd string) []string { return mdPath.FindAllString(cmd, -1) }
