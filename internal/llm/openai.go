package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// OpenAI asks a model through an OpenAI-compatible chat completions
// endpoint (OpenAI, and local servers such as llama.cpp, vLLM or Jan),
// with the decision's schema as a json_schema response format. The
// format is not marked strict, which would limit the schema keywords kk
// may use; the reply is validated here instead.
type OpenAI struct {
	baseURL string
	model   string
	apiKey  string // "" sends no Authorization header
	client  *http.Client
}

// Name implements Provider.
func (o *OpenAI) Name() string { return "openai " + o.model }

// Complete implements Provider.
func (o *OpenAI) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	obj, err := schemaObject(req.Schema)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"model":       o.model,
		"messages":    messages(req),
		"temperature": 0,
		"response_format": map[string]any{
			"type":        "json_schema",
			"json_schema": map[string]any{"name": toolNameUnsafe.ReplaceAllString(req.Schema.Name, "_"), "schema": obj},
		},
	}
	var headers map[string]string
	if o.apiKey != "" {
		headers = map[string]string{"Authorization": "Bearer " + o.apiKey}
	}
	var reply struct {
		Choices []struct {
			Message struct {
				Content *string `json:"content"`
				Refusal string  `json:"refusal"`
			} `json:"message"`
			FinishReason string `json:"finish_reason"`
		} `json:"choices"`
		Error *struct {
			Type    string `json:"type"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := postJSON(ctx, o.client, "openai", o.baseURL+"/v1/chat/completions", headers, body, &reply); err != nil {
		return nil, err
	}
	if reply.Error != nil {
		return nil, fmt.Errorf("openai: %s: %s", reply.Error.Type, reply.Error.Message)
	}
	if len(reply.Choices) == 0 {
		return nil, &ReplyError{Provider: o.Name(), Schema: req.Schema.Name, Reason: "the reply has no choices"}
	}
	m := reply.Choices[0].Message
	if m.Refusal != "" {
		return nil, &ReplyError{Provider: o.Name(), Schema: req.Schema.Name, Reason: "the model refused", Reply: excerpt(m.Refusal, replyExcerpt)}
	}
	if m.Content == nil {
		return nil, &ReplyError{Provider: o.Name(), Schema: req.Schema.Name, Reason: "the reply has no content (finish_reason " + reply.Choices[0].FinishReason + ")"}
	}
	return checkReply(o.Name(), req.Schema, *m.Content)
}
