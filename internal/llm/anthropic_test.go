package llm_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/llm"
)

func TestAnthropic(t *testing.T) {
	f := &fakeAPI{}
	url := f.start(t)
	p := newProvider(t, llm.Config{Provider: "anthropic", Model: "claude-x", URL: url, MaxTokens: 1000}, map[string]string{"ANTHROPIC_API_KEY": "k-1"})
	ctx := context.Background()

	f.set(http.StatusOK, `{"type":"message","content":[{"type":"text","text":"Placing it."},{"type":"tool_use","id":"t1","name":"serve-placement","input":`+placement+`}],"stop_reason":"tool_use"}`)
	got, err := p.Complete(ctx, request(t))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(got), `"folder":"go/concurrency"`) {
		t.Errorf("reply = %s", got)
	}
	if f.path != "/v1/messages" || f.headers.Get("x-api-key") != "k-1" || f.headers.Get("anthropic-version") != llm.AnthropicVersion {
		t.Errorf("request: %s %v", f.path, f.headers)
	}
	if f.get("model") != "claude-x" || f.get("max_tokens") != float64(1000) || f.get("system") != "You place notes." {
		t.Errorf("body: %v", f.body)
	}
	if f.get("messages.0.role") != "user" || f.get("messages.0.content") != "Where does this go?" || f.get("messages.1") != nil {
		t.Errorf("messages: %v", f.get("messages"))
	}
	if f.get("tools.0.name") != "serve-placement" || f.get("tools.0.input_schema.type") != "object" || f.get("tools.0.input_schema.$schema") != nil {
		t.Errorf("tools: %v", f.get("tools"))
	}
	if f.get("tool_choice.type") != "tool" || f.get("tool_choice.name") != "serve-placement" {
		t.Errorf("tool_choice: %v", f.get("tool_choice"))
	}

	f.set(http.StatusOK, `{"content":[{"type":"tool_use","name":"serve-placement","input":{"folder":"x","title":"t","description":"d","type":"map"}}]}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "tags")

	f.set(http.StatusOK, `{"content":[{"type":"text","text":"I would rather not."}],"stop_reason":"max_tokens"}`)
	_, err = p.Complete(ctx, request(t))
	wantBadReply(t, err, "max_tokens")
	if !strings.Contains(err.Error(), "I would rather not.") {
		t.Errorf("the error does not quote the reply: %v", err)
	}

	f.set(http.StatusOK, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "overloaded_error: Overloaded") {
		t.Errorf("API error: %v", err)
	}
}
