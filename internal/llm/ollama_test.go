package llm_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/llm"
)

func ollamaReply(content string) string {
	b, _ := json.Marshal(map[string]any{"model": "m", "message": map[string]any{"role": "assistant", "content": content}, "done": true})
	return string(b)
}

func TestOllama(t *testing.T) {
	f := &fakeAPI{}
	url := f.start(t)
	p := newProvider(t, llm.Config{Provider: "ollama", Model: "qwen3", URL: url + "/"}, nil)
	if p.Name() != "ollama qwen3" {
		t.Errorf("Name = %q", p.Name())
	}
	ctx := context.Background()

	f.set(http.StatusOK, ollamaReply("\n"+placement+"\n"))
	got, err := p.Complete(ctx, request(t))
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"folder":"go/concurrency","title":"Use channels","description":"Channels pass values.","type":"practice","tags":["golang"]}`; string(got) != want {
		t.Errorf("reply = %s", got)
	}
	// The wire format: /api/chat, no streaming, the schema as format.
	if f.path != "/api/chat" || f.get("model") != "qwen3" || f.get("stream") != false {
		t.Errorf("request: %s %v", f.path, f.body)
	}
	if f.get("format.properties.folder.type") != "string" || f.get("format.$schema") != nil || f.get("format.$id") != nil {
		t.Errorf("format: %v", f.get("format"))
	}
	if f.get("messages.0.role") != "system" || f.get("messages.0.content") != "You place notes." || f.get("messages.1.role") != "user" || f.get("messages.1.content") != "Where does this go?" {
		t.Errorf("messages: %v", f.get("messages"))
	}
	if f.get("options.temperature") != float64(0) {
		t.Errorf("options: %v", f.get("options"))
	}

	for _, tc := range []struct{ content, reason string }{
		{`{"folder": "go", "title": "x", "description": "", "type": "recipe", "tags": []}`, "/type"},
		{`{"folder": "Go Stuff", "title": "x", "description": "", "type": "map", "tags": []}`, "/folder"},
		{`{"title": "x"}`, "/folder: is required"},
		{"Sure! Here is the JSON.", "not JSON"},
		{placement + " extra", "text after the JSON document"},
		{`["a"]`, "not a JSON object"},
		{"", "empty"},
	} {
		f.set(http.StatusOK, ollamaReply(tc.content))
		_, err := p.Complete(ctx, request(t))
		wantBadReply(t, err, tc.reason)
		if err != nil && !strings.Contains(err.Error(), "serve-placement") {
			t.Errorf("the error does not name the schema: %v", err)
		}
	}

	f.set(http.StatusOK, `{"error":"model \"qwen3\" not found, try pulling it first"}`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "not found, try pulling") {
		t.Errorf("API error: %v", err)
	}
	f.set(http.StatusOK, `{"message":{"content":"{}"},"done":false}`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "not complete") {
		t.Errorf("unfinished reply: %v", err)
	}
	f.set(http.StatusInternalServerError, `{"error":"out of memory"}`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "HTTP 500") || !strings.Contains(err.Error(), "out of memory") {
		t.Errorf("HTTP error: %v", err)
	}
	f.set(http.StatusOK, `<html>`)
	if _, err := p.Complete(ctx, request(t)); err == nil || !strings.Contains(err.Error(), "not the JSON expected") {
		t.Errorf("garbage reply: %v", err)
	}
}

func TestOllamaUnreachable(t *testing.T) {
	p := newProvider(t, llm.Config{Provider: "ollama", Model: "m", URL: "http://127.0.0.1:1"}, nil)
	if _, err := p.Complete(context.Background(), request(t)); err == nil || !strings.Contains(err.Error(), "calling http://127.0.0.1:1/api/chat") {
		t.Errorf("unreachable server: %v", err)
	}
}
