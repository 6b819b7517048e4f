// Package fakemodel is a small model server for kk's end-to-end tests of
// the real harness CLIs. It answers every request with one fixed text, in
// the wire format of the API the request was made to, and records each
// request as one JSON line, so a test can check what a harness sent the
// model (ENTRY.md in the context, kk's MCP tools in the tool list).
//
// It speaks:
//
//   - Anthropic Messages (POST …/v1/messages, with SSE when "stream" is
//     true; …/count_tokens): Claude Code;
//   - OpenAI Responses (POST …/responses, SSE): Codex CLI, and Copilot
//     CLI's BYOK OpenAI provider for models that use it;
//   - OpenAI Chat Completions (POST …/chat/completions, SSE or not):
//     OpenCode's openai-compatible provider, Copilot CLI's BYOK provider;
//   - Gemini (POST …/models/<m>:generateContent, :streamGenerateContent
//     with alt=sse, :countTokens): Gemini CLI;
//   - model lists (GET …/models) in the OpenAI and Gemini shapes.
//
// It never calls a tool: every answer is text, so a harness run ends after
// one model turn. Requests that ask for a JSON answer (Gemini's
// responseMimeType, OpenAI's response_format or text.format) get a small
// JSON object instead of the text.
package fakemodel

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
)

// DefaultReply is the text every answer carries unless Server.Reply says
// otherwise.
const DefaultReply = "kk-e2e fake model: the widget cache is flushed every five minutes."

// maxBody bounds a request body the server reads.
const maxBody = 64 << 20

// Server answers model requests. The zero value answers with DefaultReply
// and records nothing.
type Server struct {
	// Log, when set, gets one JSON line per request (see Record).
	Log io.Writer
	// Reply, when set, returns the answer's text for a request's body.
	Reply func(body []byte) string
	// JSON, when set, returns the answer to a request that asks for JSON
	// (instead of the fixed object the harnesses' side requests get).
	JSON func(body []byte) string
	// Fail, when set, returns the HTTP status to fail the n-th request
	// with (counting from 1), or 0 to answer it: a provider that is down
	// (503), overloaded (429) or failing now and then.
	Fail func(n int) int

	mu sync.Mutex
	n  int
}

// Record is one logged request.
type Record struct {
	N      int             `json:"n"`
	Time   string          `json:"time"`
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Query  string          `json:"query,omitempty"`
	API    string          `json:"api"`
	Stream bool            `json:"stream"`
	Body   json.RawMessage `json:"body,omitempty"`
	Text   string          `json:"text,omitempty"` // a body that is not JSON
}

// API names, as Record.API gives them.
const (
	Anthropic       = "anthropic"
	AnthropicTokens = "anthropic-count-tokens"
	Responses       = "openai-responses"
	Chat            = "openai-chat"
	Gemini          = "gemini"
	GeminiTokens    = "gemini-count-tokens"
	Models          = "models"
	Unknown         = "unknown"
)

// classify names the API a request is for, and whether it streams.
func classify(r *http.Request, body map[string]any) (api string, stream bool) {
	p := r.URL.Path
	streamField, _ := body["stream"].(bool)
	switch {
	case strings.HasSuffix(p, "/messages/count_tokens"):
		return AnthropicTokens, false
	case strings.HasSuffix(p, "/messages"):
		return Anthropic, streamField
	case strings.HasSuffix(p, "/responses"):
		return Responses, streamField
	case strings.HasSuffix(p, "/chat/completions"):
		return Chat, streamField
	case strings.HasSuffix(p, ":streamGenerateContent"):
		return Gemini, true
	case strings.HasSuffix(p, ":generateContent"):
		return Gemini, false
	case strings.HasSuffix(p, ":countTokens"):
		return GeminiTokens, false
	case r.Method == http.MethodGet && (strings.HasSuffix(p, "/models") || strings.Contains(p, "/models/")):
		return Models, false
	}
	return Unknown, false
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	raw, err := readBody(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var body map[string]any
	_ = json.Unmarshal(raw, &body) // a body that is not a JSON object is logged as text
	api, stream := classify(r, body)
	n := s.record(r, api, stream, raw)
	if s.Fail != nil {
		if status := s.Fail(n); status != 0 {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			fmt.Fprintf(w, `{"error":{"type":"fake_failure","message":"kk fake model server: request %d fails with %d"}}`+"\n", n, status)
			return
		}
	}
	reply := DefaultReply
	if s.Reply != nil {
		reply = s.Reply(raw)
	}
	if wantsJSON(api, body) {
		reply = jsonReply
		if s.JSON != nil {
			reply = s.JSON(raw)
		}
	}
	model, _ := body["model"].(string)
	if model == "" {
		model = modelFromPath(r.URL.Path)
	}
	switch api {
	case Anthropic:
		anthropic(w, model, reply, stream)
	case AnthropicTokens:
		writeJSON(w, map[string]any{"input_tokens": 10})
	case Responses:
		responses(w, model, reply, stream)
	case Chat:
		chat(w, model, reply, stream)
	case Gemini:
		gemini(w, model, reply, stream)
	case GeminiTokens:
		writeJSON(w, map[string]any{"totalTokens": 10})
	case Models:
		models(w, r.URL.Path)
	default:
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusNotFound)
		fmt.Fprintf(w, `{"error":{"type":"not_found","message":"kk fake model server: no API at %s"}}`+"\n", r.URL.Path)
	}
}

// readBody reads a request body, undoing gzip.
func readBody(r *http.Request) ([]byte, error) {
	in := io.LimitReader(r.Body, maxBody)
	if strings.EqualFold(r.Header.Get("Content-Encoding"), "gzip") {
		zr, err := gzip.NewReader(in)
		if err != nil {
			return nil, fmt.Errorf("gzip body: %w", err)
		}
		defer func() { _ = zr.Close() }()
		in = io.LimitReader(zr, maxBody)
	}
	return io.ReadAll(in)
}

// Requests returns how many requests the server got.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// record logs one request and returns its number (from 1).
func (s *Server) record(r *http.Request, api string, stream bool, raw []byte) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.n++
	if s.Log == nil {
		return s.n
	}
	rec := Record{N: s.n, Time: time.Now().UTC().Format(time.RFC3339Nano), Method: r.Method, Path: r.URL.Path,
		Query: r.URL.RawQuery, API: api, Stream: stream}
	if len(bytes.TrimSpace(raw)) > 0 {
		if json.Valid(raw) {
			var b bytes.Buffer
			if json.Compact(&b, raw) == nil {
				rec.Body = b.Bytes()
			}
		} else {
			rec.Text = string(raw)
		}
	}
	line, err := json.Marshal(rec)
	if err != nil {
		return s.n
	}
	_, _ = s.Log.Write(append(line, '\n'))
	return s.n
}

// jsonReply answers a request for JSON: the fields Gemini CLI's
// next-speaker check and model router read, and a title for the harnesses
// that name their sessions.
const jsonReply = `{"reasoning":"kk-e2e fake model","next_speaker":"user","model_choice":"flash","title":"kk e2e session","complexity_reasoning":"simple","complexity_score":1}`

// wantsJSON reports whether a request asks for a JSON answer.
func wantsJSON(api string, body map[string]any) bool {
	switch api {
	case Gemini:
		gc, _ := body["generationConfig"].(map[string]any)
		mt, _ := gc["responseMimeType"].(string)
		return mt == "application/json"
	case Chat:
		rf, _ := body["response_format"].(map[string]any)
		t, _ := rf["type"].(string)
		return t == "json_schema" || t == "json_object"
	case Responses:
		text, _ := body["text"].(map[string]any)
		f, _ := text["format"].(map[string]any)
		t, _ := f["type"].(string)
		return t == "json_schema" || t == "json_object"
	}
	return false
}

// modelFromPath is the model of a Gemini path (…/models/<m>:method).
func modelFromPath(p string) string {
	_, m, ok := strings.Cut(p, "/models/")
	if !ok {
		return "fake-model"
	}
	m, _, _ = strings.Cut(m, ":")
	return m
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// sse writes server-sent events; event "" writes a data-only event.
type sse struct{ w http.ResponseWriter }

func newSSE(w http.ResponseWriter) sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return sse{w}
}

func (s sse) send(event string, v any) {
	data, err := json.Marshal(v)
	if err != nil {
		return
	}
	if event != "" {
		fmt.Fprintf(s.w, "event: %s\n", event)
	}
	fmt.Fprintf(s.w, "data: %s\n\n", data)
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

func (s sse) done() {
	fmt.Fprint(s.w, "data: [DONE]\n\n")
	if f, ok := s.w.(http.Flusher); ok {
		f.Flush()
	}
}

type obj = map[string]any

// anthropic answers an Anthropic Messages request.
func anthropic(w http.ResponseWriter, model, text string, stream bool) {
	usage := obj{"input_tokens": 10, "output_tokens": 5, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
	msg := obj{"id": "msg_kk_e2e", "type": "message", "role": "assistant", "model": model,
		"content": []any{obj{"type": "text", "text": text}}, "stop_reason": "end_turn", "stop_sequence": nil, "usage": usage}
	if !stream {
		writeJSON(w, msg)
		return
	}
	s := newSSE(w)
	start := obj{"id": "msg_kk_e2e", "type": "message", "role": "assistant", "model": model, "content": []any{},
		"stop_reason": nil, "stop_sequence": nil, "usage": obj{"input_tokens": 10, "output_tokens": 1}}
	s.send("message_start", obj{"type": "message_start", "message": start})
	s.send("content_block_start", obj{"type": "content_block_start", "index": 0, "content_block": obj{"type": "text", "text": ""}})
	s.send("content_block_delta", obj{"type": "content_block_delta", "index": 0, "delta": obj{"type": "text_delta", "text": text}})
	s.send("content_block_stop", obj{"type": "content_block_stop", "index": 0})
	s.send("message_delta", obj{"type": "message_delta", "delta": obj{"stop_reason": "end_turn", "stop_sequence": nil}, "usage": obj{"output_tokens": 5}})
	s.send("message_stop", obj{"type": "message_stop"})
}

// responses answers an OpenAI Responses request.
func responses(w http.ResponseWriter, model, text string, stream bool) {
	item := obj{"id": "msg_kk_e2e", "type": "message", "status": "completed", "role": "assistant",
		"content": []any{obj{"type": "output_text", "text": text, "annotations": []any{}}}}
	usage := obj{"input_tokens": 10, "input_tokens_details": obj{"cached_tokens": 0}, "output_tokens": 5,
		"output_tokens_details": obj{"reasoning_tokens": 0}, "total_tokens": 15}
	done := obj{"id": "resp_kk_e2e", "object": "response", "created_at": time.Now().Unix(), "status": "completed",
		"model": model, "output": []any{item}, "usage": usage}
	if !stream {
		writeJSON(w, done)
		return
	}
	s := newSSE(w)
	created := obj{"id": "resp_kk_e2e", "object": "response", "created_at": time.Now().Unix(), "status": "in_progress", "model": model, "output": []any{}}
	s.send("response.created", obj{"type": "response.created", "sequence_number": 0, "response": created})
	s.send("response.in_progress", obj{"type": "response.in_progress", "sequence_number": 1, "response": created})
	added := obj{"id": "msg_kk_e2e", "type": "message", "status": "in_progress", "role": "assistant", "content": []any{}}
	s.send("response.output_item.added", obj{"type": "response.output_item.added", "sequence_number": 2, "output_index": 0, "item": added})
	s.send("response.content_part.added", obj{"type": "response.content_part.added", "sequence_number": 3, "item_id": "msg_kk_e2e",
		"output_index": 0, "content_index": 0, "part": obj{"type": "output_text", "text": "", "annotations": []any{}}})
	s.send("response.output_text.delta", obj{"type": "response.output_text.delta", "sequence_number": 4, "item_id": "msg_kk_e2e",
		"output_index": 0, "content_index": 0, "delta": text})
	s.send("response.output_text.done", obj{"type": "response.output_text.done", "sequence_number": 5, "item_id": "msg_kk_e2e",
		"output_index": 0, "content_index": 0, "text": text})
	s.send("response.content_part.done", obj{"type": "response.content_part.done", "sequence_number": 6, "item_id": "msg_kk_e2e",
		"output_index": 0, "content_index": 0, "part": obj{"type": "output_text", "text": text, "annotations": []any{}}})
	s.send("response.output_item.done", obj{"type": "response.output_item.done", "sequence_number": 7, "output_index": 0, "item": item})
	s.send("response.completed", obj{"type": "response.completed", "sequence_number": 8, "response": done})
}

// chat answers an OpenAI Chat Completions request.
func chat(w http.ResponseWriter, model, text string, stream bool) {
	now := time.Now().Unix()
	usage := obj{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
	if !stream {
		writeJSON(w, obj{"id": "chatcmpl-kk-e2e", "object": "chat.completion", "created": now, "model": model,
			"choices": []any{obj{"index": 0, "message": obj{"role": "assistant", "content": text}, "finish_reason": "stop"}},
			"usage":   usage})
		return
	}
	s := newSSE(w)
	chunk := func(delta obj, finish any, u any) obj {
		c := obj{"id": "chatcmpl-kk-e2e", "object": "chat.completion.chunk", "created": now, "model": model,
			"choices": []any{obj{"index": 0, "delta": delta, "finish_reason": finish}}}
		if u != nil {
			c["usage"] = u
		}
		return c
	}
	s.send("", chunk(obj{"role": "assistant", "content": ""}, nil, nil))
	s.send("", chunk(obj{"content": text}, nil, nil))
	s.send("", chunk(obj{}, "stop", usage))
	s.done()
}

// gemini answers a Gemini generateContent request.
func gemini(w http.ResponseWriter, model, text string, stream bool) {
	resp := obj{
		"candidates":    []any{obj{"content": obj{"role": "model", "parts": []any{obj{"text": text}}}, "finishReason": "STOP", "index": 0}},
		"usageMetadata": obj{"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15},
		"modelVersion":  model,
	}
	if !stream {
		writeJSON(w, resp)
		return
	}
	newSSE(w).send("", resp)
}

// models answers a model list, in Gemini's shape under a v1beta path and
// OpenAI's otherwise.
func models(w http.ResponseWriter, path string) {
	names := []string{"fake-model", "gpt-5", "claude-sonnet-4-5", "gemini-2.5-pro", "gemini-2.5-flash"}
	if strings.Contains(path, "v1beta") || strings.Contains(path, "v1alpha") {
		var list []any
		for _, n := range names {
			list = append(list, obj{"name": "models/" + n, "displayName": n, "inputTokenLimit": 1000000, "outputTokenLimit": 65536,
				"supportedGenerationMethods": []string{"generateContent", "countTokens"}})
		}
		writeJSON(w, obj{"models": list})
		return
	}
	var list []any
	for _, n := range names {
		list = append(list, obj{"id": n, "object": "model", "created": 0, "owned_by": "kk-e2e"})
	}
	writeJSON(w, obj{"object": "list", "data": list})
}
