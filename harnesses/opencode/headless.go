package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// event is one line of `opencode run --format json` (harnesses.md §4.4).
// Current builds print {type, sessionID, part} with type text, tool_use,
// step_start, step_finish or error; older ones printed bus events such as
// {type: "message.part.updated", properties: {part}}. Both are read.
type event struct {
	Type       string    `json:"type"`
	Part       *textPart `json:"part"`
	Properties struct {
		Part      *textPart `json:"part"`
		MessageID string    `json:"messageID"`
	} `json:"properties"`
	Error json.RawMessage `json:"error"`
}

type textPart struct {
	ID        string `json:"id"`
	MessageID string `json:"messageID"`
	Type      string `json:"type"`
	Text      string `json:"text"`
}

// Headless implements harness.Adapter: `opencode run --format json
// [--model <provider/model>] <prompt>`, with run.Stdin on stdin (OpenCode
// appends it to the message). The answer is the text of the last
// assistant message. OpenCode cannot be held to a JSON Schema; run.Schema
// is left to the caller's validation. run.Model picks the model, the
// variant (its effort) and the agent.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	bin, err := a.lookPath(binary)
	if err != nil {
		return "", harness.NotReady(fmt.Errorf("%v; %s", err, a.InstallHint()))
	}
	margs, _ := spec.ModelArgs(run.Model)
	args := append([]string{"run", "--format", "json"}, margs...)
	input, err := harness.ReadInput(run.Stdin)
	if err != nil {
		return "", fmt.Errorf("reading the input of the OpenCode run: %w", err)
	}
	stdin := input
	if !spec.PromptFitsArg(run.Prompt) { // on stdin, which `opencode run` appends to its message
		stdin = harness.JoinInput(run.Prompt, input)
	} else {
		args = append(args, run.Prompt)
	}
	out, err := harness.Run(ctx, harness.Child{
		Name: "opencode run", Path: bin, Args: args, Stdin: bytes.NewReader(stdin),
		Timeout: run.Timeout, LogFile: run.LogFile,
	})
	if err != nil {
		return "", err
	}
	return answer(out)
}

// answer is the text of the last assistant message in the output of
// `opencode run --format json`: its text parts in order, each at its
// latest version (bus events repeat a part as it grows). A bus event
// whose part has no id adds its text to what came before in its message
// (the message named in the event when its part names none).
func answer(out []byte) (string, error) {
	var (
		message string
		ids     []string
		texts   = map[string]string{}
		failure string
	)
	_ = harness.EachLine(bytes.NewReader(out), func(line []byte) { // reading a byte slice does not fail
		var e event
		if json.Unmarshal(line, &e) != nil {
			return
		}
		p := e.Part
		switch e.Type {
		case "text":
		case "message.part.updated":
			p = e.Properties.Part
			if p != nil && p.MessageID == "" {
				p.MessageID = e.Properties.MessageID // the shape kenkeep read
			}
		case "error":
			failure = errorText(e.Error)
			return
		default:
			return
		}
		if p == nil || (p.Type != "" && p.Type != "text") {
			return
		}
		if p.MessageID != message {
			message, ids, texts = p.MessageID, nil, map[string]string{}
		}
		if p.ID == "" && e.Type == "message.part.updated" {
			// A bus event naming no part carries a piece of the message's
			// text (kenkeep read them so): the pieces are joined as they come.
			if _, seen := texts[""]; !seen {
				ids = append(ids, "")
			}
			texts[""] += p.Text
			return
		}
		key := p.ID
		if key == "" {
			key = fmt.Sprint(len(ids))
		}
		if _, seen := texts[key]; !seen {
			ids = append(ids, key)
		}
		texts[key] = p.Text
	})
	var parts []string
	for _, k := range ids {
		parts = append(parts, texts[k])
	}
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	switch {
	case text == "" && failure != "":
		return "", fmt.Errorf("opencode run reported an error: %s", failure)
	case text == "":
		return "", fmt.Errorf("opencode run printed no answer%s", harness.OutputTail(string(out)))
	}
	return text, nil
}

// errorText is the message of an error event's error.
func errorText(raw json.RawMessage) string {
	var e struct {
		Name string `json:"name"`
		Data struct {
			Message string `json:"message"`
		} `json:"data"`
		Message string `json:"message"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return strings.TrimSpace(string(raw))
	}
	msg := e.Data.Message
	if msg == "" {
		msg = e.Message
	}
	if e.Name != "" {
		return e.Name + ": " + msg
	}
	return msg
}
