package opencode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// export is the document `opencode export <session>` prints
// (harnesses.md §4.3): {info, messages: [{info: {role, time: {created}},
// parts: [...]}]}.
type export struct {
	Messages *[]json.RawMessage `json:"messages"`
}

type message struct {
	Info struct {
		Role string `json:"role"`
		Time struct {
			Created float64 `json:"created"`
		} `json:"time"`
	} `json:"info"`
	Parts []json.RawMessage `json:"parts"`
}

// part is one part of a message: text (synthetic when OpenCode made it up,
// such as a file's content attached to a prompt), or a tool call.
type part struct {
	Type      string  `json:"type"`
	Text      *string `json:"text"`
	Synthetic bool    `json:"synthetic"`
	Ignored   bool    `json:"ignored"`
	Tool      string  `json:"tool"`
	State     struct {
		Input json.RawMessage `json:"input"`
	} `json:"state"`
}

// ParseTranscript implements harness.Adapter: it reads an `opencode
// export` document. Messages are taken in the order they were created;
// a message's text is its non-synthetic text parts. Anything printed
// before the document's opening brace is skipped.
func (*Adapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	var t harness.Transcript
	data, err := io.ReadAll(r)
	if err != nil {
		return t, fmt.Errorf("reading the OpenCode export: %w", err)
	}
	if i := bytes.IndexByte(data, '{'); i > 0 {
		data = data[i:]
	}
	var doc export
	if err := json.Unmarshal(data, &doc); err != nil {
		return t, fmt.Errorf("not an OpenCode export: %w", err)
	}
	if doc.Messages == nil {
		return t, errors.New("not an OpenCode export: it has no \"messages\" list")
	}
	var msgs []message
	for _, raw := range *doc.Messages {
		var m message
		if json.Unmarshal(raw, &m) == nil {
			msgs = append(msgs, m)
		}
	}
	sort.SliceStable(msgs, func(i, j int) bool { return msgs[i].Info.Time.Created < msgs[j].Info.Time.Created })
	for _, m := range msgs {
		var text []string
		for _, raw := range m.Parts {
			var p part
			if json.Unmarshal(raw, &p) != nil {
				continue
			}
			switch p.Type {
			case "text":
				if p.Text != nil && !p.Synthetic && !p.Ignored && strings.TrimSpace(*p.Text) != "" {
					text = append(text, *p.Text)
				}
			case "tool":
				t.Reads = append(t.Reads, toolReads(p)...)
			}
		}
		body := strings.TrimSpace(strings.Join(text, "\n"))
		if body == "" {
			continue
		}
		switch m.Info.Role {
		case "user":
			t.Turns = append(t.Turns, harness.Turn{Role: harness.User, Text: body})
		case "assistant":
			t.Turns = append(t.Turns, harness.Turn{Role: harness.Agent, Text: body})
		}
	}
	return t, nil
}

// toolReads returns the files a tool call read, for the usage ledger
// (kenkeep-v1.17.md §16): the file of the read tool, and the .md paths
// named in a bash command.
func toolReads(p part) []harness.Read {
	var input map[string]any
	json.Unmarshal(p.State.Input, &input) // an input that is not an object names no file
	switch p.Tool {
	case "read":
		if f := harness.FirstString(input, "filePath", "path", "file_path"); f != "" {
			return []harness.Read{{Path: f, Tool: p.Tool}}
		}
	case "bash", "shell":
		var out []harness.Read
		for _, f := range harness.MarkdownPaths(harness.FirstString(input, "command", "cmd")) {
			out = append(out, harness.Read{Path: f, Tool: p.Tool})
		}
		return out
	}
	return nil
}
