package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// Ollama asks a model served by Ollama, through POST /api/chat with the
// decision's schema as the format (Ollama 0.5 and later constrain the
// output to it) and temperature 0.
type Ollama struct {
	baseURL string
	model   string
	client  *http.Client
}

// Name implements Provider.
func (o *Ollama) Name() string { return "ollama " + o.model }

type chatMessage struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// Complete implements Provider.
func (o *Ollama) Complete(ctx context.Context, req Request) (json.RawMessage, error) {
	if err := checkRequest(req); err != nil {
		return nil, err
	}
	format, err := schemaObject(req.Schema)
	if err != nil {
		return nil, err
	}
	body := map[string]any{
		"model":    o.model,
		"messages": messages(req),
		"stream":   false,
		"format":   format,
		"options":  map[string]any{"temperature": 0},
	}
	var reply struct {
		Message chatMessage `json:"message"`
		Done    bool        `json:"done"`
		Error   string      `json:"error"`
	}
	if err := postJSON(ctx, o.client, "ollama", o.baseURL+"/api/chat", nil, body, &reply); err != nil {
		return nil, err
	}
	if reply.Error != "" {
		return nil, fmt.Errorf("ollama: %s", reply.Error)
	}
	if !reply.Done {
		return nil, errors.New("ollama: the reply is not complete (done is false)")
	}
	return checkReply(o.Name(), req.Schema, reply.Message.Content)
}

// messages is the system and user turns of a chat request.
func messages(req Request) []chatMessage {
	var m []chatMessage
	if req.System != "" {
		m = append(m, chatMessage{Role: "system", Content: req.System})
	}
	return append(m, chatMessage{Role: "user", Content: req.Prompt})
}
