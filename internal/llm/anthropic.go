package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
)

// Anthropic asks a Claude model through the Messages API. The decision's
// schema becomes the input schema of one tool, and tool_choice forces the
// model to call it, so the reply is the tool call's input.
type Anthropic struct {
	baseURL   string
	model     string
	apiKey    string
	maxTokens int
	client    *http.Client
}

// AnthropicVersion is the API version kk speaks.
const AnthropicVersion = "2023-06-01"

// Name implements Provider.
func (a *Anthropic) Name() string { return "anthropic " + a.model }

// toolName is a schema name made safe for a tool name.
var toolNameUnsafe = regexp.MustCompile(`[^a-zA-Z0-9_-]`)

// Complete implements Provider.
func (a *Anthropic) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	input, err := schemaObject(req.Schema)
	if err != nil {
		return nil, err
	}
	tool := toolNameUnsafe.ReplaceAllString(req.Schema.Name, "_")
	body := map[string]any{
		"model":       a.model,
		"max_tokens":  a.maxTokens,
		"messages":    []chatMessage{{Role: "user", Content: req.Prompt}},
		"tools":       []map[string]any{{"name": tool, "description": "Record the decision; its input is the answer.", "input_schema": input}},
		"tool_choice": map[string]any{"type": "tool", "name": tool},
	}
	if req.System != "" {
		body["system"] = req.System
	}
	var reply struct {
		Content []struct {
			Type  string          `json:"type"`
			Name  string          `json:"name"`
			Input json.RawMessage `json:"input"`
			Text  string          `json:"text"`
		} `json:"content"`
		StopReason string `json:"stop_reason"`
		Error      *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	headers := map[string]string{"x-api-key": a.apiKey, "anthropic-version": AnthropicVersion}
	if err := postJSON(ctx, a.client, "anthropic", a.baseURL+"/v1/messages", headers, body, &reply); err != nil {
		return nil, err
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("anthropic: %s: %s", reply.Error.Type, reply.Error.Message)
	}
	for _, b := range reply.Content {
		if b.Type == "tool_use" && b.Name == tool {
			return checkReply(a.Name(), req.Schema, string(b.Input))
		}
	}
	reason := "no call of the tool " + tool
	if reply.StopReason == "max_tokens" {
		reason += " (the reply hit max_tokens)"
	}
	text := ""
	for _, b := range reply.Content {
		text += b.Text
	}
	return nil, &ReplyError{Provider: a.Name(), Schema: req.Schema.Name, Reason: reason, Reply: excerpt(text, replyExcerpt)}
}
