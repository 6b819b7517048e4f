package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/llm"
)

func openaiReply(content string) string {
	b, _ := json.Marshal(map[string]any{"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}}})
	return string(b)
}

func TestOpenAI(t *testing.T) {
	f := &fakeAPI{}
	url := f.start(t)
	p := newProvider(t, llm.Config{Provider: "openai", Model: "gpt-x", URL: url, APIKeyEnv: "NOUS_API_KEY"}, map[string]string{"NOUS_API_KEY": "k-2"})
	ctx := context.Background()

	f.set(http.StatusOK, openaiReply(placement))
	got, err := p.Complete(ctx, request(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"type":"practice"`) {
		t.Errorf("reply = %s", got)
	}
	if f.path != "/v1/chat/completions" || f.headers.Get("Authorization") != "Bearer k-2" {
		t.Errorf("request: %s %v", f.path, f.headers)
	}
	if f.get("model") != "gpt-x" || f.get("response_format.type") != "json_schema" || f.get("response_format.json_schema.name") != "serve-placement" {
		t.Errorf("body: %v", f.body)
	}
	if f.get("response_format.json_schema.schema.properties.type.enum.0") != "practice" || f.get("response_format.json_schema.schema.$id") != nil {
		t.Errorf("schema: %v", f.get("response_format.json_schema.schema"))
	}
	if f.get("messages.0.role") != "system" || f.get("messages.1.content") != "Where does this go?" {
		t.Errorf("messages: %v", f.get("messages"))
	}

	f.set(http.StatusOK, openaiReply(`{"folder":"a","title":"","description":"","type":"map","tags":[]}`))
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "/title")

	f.set(http.StatusOK, `{"choices":[{"message":{"role":"assistant","content":null,"refusal":"I can't help with that."},"finish_reason":"stop"}]}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "refused")

	f.set(http.StatusOK, `{"choices":[{"message":{"role":"assistant","content":null},"finish_reason":"length"}]}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "finish_reason length")

	f.set(http.StatusOK, `{"choices":[]}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "no choices")

	f.set(http.StatusBadRequest, `{"error":{"type":"invalid_request_error","message":"bad schema"}}`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "HTTP 400") || !strings.Contains(err.Error(), "bad schema") {
		t.Errorf("HTTP error: %v", err)
	}

	// A local OpenAI-compatible server without a key gets no
	// Authorization header.
	local := newProvider(t, llm.Config{Provider: "openai", Model: "local", URL: url}, nil)
	f.set(http.StatusOK, openaiReply(placement))
	if _, err := local.Complete(ctx, request(t)); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.headers["Authorization"]; ok {
		t.Errorf("a keyless request sent Authorization: %v", f.headers)
	}
}
