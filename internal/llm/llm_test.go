package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/kk-project/kk/internal/llm"
	"github.com/kk-project/kk/internal/schema"
)

// placement is a reply that matches serve-placement.
const placement = `{"folder": "go/concurrency", "title": "Use channels", "description": "Channels pass values.", "type": "practice", "tags": ["golang"]}`

func decision(t *testing.T) llm.Schema {
	t.Helper()
	s, err := schema.ForLLM("serve-placement")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func request(t *testing.T) llm.Request {
	return llm.Request{System: "You place notes.", Prompt: "Where does this go?", Schema: decision(t)}
}

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

// fakeAPI is a stand-in for a model API: it records each request and
// answers with reply (a JSON body) and status.
type fakeAPI struct {
	mu      sync.Mutex
	status  int
	reply   string
	path    string
	headers http.Header
	body    map[string]any
}

func (f *fakeAPI) start(t *testing.T) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		defer f.mu.Unlock()
		data, _ := io.ReadAll(r.Body)
		f.path, f.headers, f.body = r.URL.Path, r.Header.Clone(), nil
		if err := json.Unmarshal(data, &f.body); err != nil {
			t.Errorf("request body is not JSON: %v", err)
		}
		w.Header().Set("Content-Type", "application/json")
		status := f.status
		if status == 0 {
			status = http.StatusOK
		}
		w.WriteHeader(status)
		_, _ = io.WriteString(w, f.reply)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

func (f *fakeAPI) set(status int, reply string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.status, f.reply = status, reply
}

// get returns the value at a dotted path of the last request body.
func (f *fakeAPI) get(path string) any {
	f.mu.Lock()
	defer f.mu.Unlock()
	var v any = f.body
	for _, k := range strings.Split(path, ".") {
		switch x := v.(type) {
		case map[string]any:
			v = x[k]
		case []any:
			i := int(k[0] - '0')
			if i >= len(x) {
				return nil
			}
			v = x[i]
		default:
			return nil
		}
	}
	return v
}

func newProvider(t *testing.T, c llm.Config, getenv map[string]string) llm.Provider {
	t.Helper()
	p, err := llm.New(c, llm.Deps{Getenv: env(getenv)})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// wantBadReply checks that err is a *ReplyError whose reason contains reason.
func wantBadReply(t *testing.T, err error, reason string) {
	t.Helper()
	var re *llm.ReplyError
	if !errors.As(err, &re) || !errors.Is(err, llm.ErrBadReply) {
		t.Fatalf("want a bad-reply error, got %v", err)
	}
	if !strings.Contains(re.Reason, reason) {
		t.Errorf("reason %q does not say %q", re.Reason, reason)
	}
}

func TestNew(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  llm.Config
		env  map[string]string
		want string // error text; "" builds
	}{
		{"none", llm.Config{}, nil, "LLM provider is not configured"},
		{"none named", llm.Config{Provider: "none"}, nil, "LLM provider is not configured"},
		{"unknown", llm.Config{Provider: "gpt"}, nil, `unknown provider "gpt"`},
		{"ollama without model", llm.Config{Provider: "ollama"}, nil, "needs a model"},
		{"ollama", llm.Config{Provider: "ollama", Model: "m"}, nil, ""},
		{"anthropic without key", llm.Config{Provider: "anthropic", Model: "m"}, nil, "API key in the environment variable ANTHROPIC_API_KEY"},
		{"anthropic key from a named variable", llm.Config{Provider: "anthropic", Model: "m", APIKeyEnv: "MY_KEY"}, map[string]string{"ANTHROPIC_API_KEY": "k"}, "environment variable MY_KEY"},
		{"anthropic", llm.Config{Provider: "anthropic", Model: "m"}, map[string]string{"ANTHROPIC_API_KEY": "k"}, ""},
		{"openai without key", llm.Config{Provider: "openai", Model: "m"}, nil, "OPENAI_API_KEY"},
		{"openai-compatible local server without key", llm.Config{Provider: "openai", Model: "m", URL: "http://127.0.0.1:1"}, nil, ""},
		{"openai-compatible with a named key missing", llm.Config{Provider: "openai", Model: "m", URL: "http://127.0.0.1:1", APIKeyEnv: "NOUS_API_KEY"}, nil, "NOUS_API_KEY"},
		{"harness without id", llm.Config{Provider: "harness"}, nil, "needs a harness id"},
		{"harness without registry", llm.Config{Provider: "harness", Harness: "claude"}, nil, "harness registry"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := llm.New(tc.cfg, llm.Deps{Getenv: env(tc.env)})
			if tc.want == "" {
				if err != nil || p == nil {
					t.Fatalf("New: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) || p != nil {
				t.Fatalf("New = %v, %v; want an error saying %q", p, err, tc.want)
			}
		})
	}
	if _, err := llm.New(llm.Config{}, llm.Deps{}); !errors.Is(err, llm.ErrNotConfigured) {
		t.Errorf("no provider: %v", err)
	}
}

func TestConfigWithEnv(t *testing.T) {
	c := llm.Config{Provider: "ollama", Model: "a", URL: "http://x"}.WithEnv(env(map[string]string{
		llm.EnvProvider: "openai", llm.EnvModel: " gpt ", llm.EnvAPIKeyEnv: "K", llm.EnvHarness: "codex",
	}))
	want := llm.Config{Provider: "openai", Model: "gpt", URL: "http://x", APIKeyEnv: "K", Harness: "codex"}
	if c != want {
		t.Errorf("WithEnv = %+v, want %+v", c, want)
	}
}

func TestKeysStayOutOfErrorsAndConfig(t *testing.T) {
	const key = "sk-secret-123"
	f := &fakeAPI{}
	url := f.start(t)
	f.set(http.StatusUnauthorized, `{"error":{"type":"authentication_error","message":"invalid x-api-key"}}`)
	for _, c := range []llm.Config{
		{Provider: "anthropic", Model: "m", URL: url},
		{Provider: "openai", Model: "m", URL: url, APIKeyEnv: "OPENAI_API_KEY"},
	} {
		p := newProvider(t, c, map[string]string{"ANTHROPIC_API_KEY": key, "OPENAI_API_KEY": key})
		_, err := p.Complete(context.Background(), request(t))
		if err == nil || !strings.Contains(err.Error(), "HTTP 401") {
			t.Fatalf("%s: %v", c.Provider, err)
		}
		if strings.Contains(err.Error(), key) || strings.Contains(p.Name(), key) {
			t.Errorf("%s: the key leaked: %v", c.Provider, err)
		}
		data, _ := json.Marshal(c)
		if strings.Contains(string(data), key) {
			t.Errorf("the key is in the config: %s", data)
		}
	}
}

func TestRequestNeedsASchema(t *testing.T) {
	p := newProvider(t, llm.Config{Provider: "ollama", Model: "m", URL: "http://127.0.0.1:1"}, nil)
	if _, err := p.Complete(context.Background(), llm.Request{Prompt: "x"}); err == nil || !strings.Contains(err.Error(), "needs a named schema") {
		t.Errorf("a request without a schema: %v", err)
	}
}
