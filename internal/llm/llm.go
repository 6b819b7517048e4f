// Package llm is how kk talks to a language model when no agent session
// does the thinking for it: kk serve's organizer and query engine ask a
// Provider for a decision, and the retrieval side asks an embedding client
// (embed*.go) for vectors.
//
// A Provider answers one kind of question: given a system prompt, a user
// prompt and the JSON Schema of a decision (one of kk's registered
// schemas, `kk schema --list`), return a JSON document matching it. The
// model is held to the schema where its API allows (Ollama's format,
// Anthropic's forced tool call, OpenAI's json_schema response format,
// Claude Code's and Codex's schema flags), and every reply is validated
// against the schema here all the same: a reply that is not JSON or does
// not match is an error (*ReplyError) that says why, never a decision.
//
// Providers: ollama, anthropic, openai (any OpenAI-compatible chat
// completions endpoint) and harness (the configured coding agent, run
// headless through kk's harness adapters). API keys come only from the
// environment; Config holds the name of the variable, never the key, and
// no error or log line carries it.
package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/kk-project/kk/internal/llmconfig"
	"io"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"
)

// Schema is the JSON Schema a reply must match.
type Schema struct {
	// Name is the schema's name in kk's registry ("serve-placement"); it
	// names the tool or response format at providers that want a name.
	Name string
	// JSON is the schema document.
	JSON json.RawMessage
	// Validate checks a decoded reply (JSON-shaped values) against the
	// schema.
	Validate func(doc any) error
}

// Request is one question for a model.
type Request struct {
	System string
	Prompt string
	Schema Schema
}

// Provider asks a language model for a decision.
type Provider interface {
	// Name is the provider's kind and model, for logs ("ollama llama3.2").
	Name() string
	// Complete returns the model's reply to req: one JSON object that
	// matches req.Schema. A reply that does not is a *ReplyError.
	Complete(ctx context.Context, req Request) (json.RawMessage, error)
}

// ErrBadReply is matched (errors.Is) by every *ReplyError.
var ErrBadReply = errors.New("the model's reply is not a valid decision")

// ReplyError is a model reply that is not a JSON document matching the
// decision's schema.
type ReplyError struct {
	Provider string
	Schema   string
	Reason   string
	// Reply is the start of what the model said.
	Reply string
}

func (e *ReplyError) Error() string {
	return fmt.Sprintf("%s: reply for %s: %s (reply: %q)", e.Provider, e.Schema, e.Reason, e.Reply)
}

// Is makes errors.Is(err, ErrBadReply) true.
func (e *ReplyError) Is(target error) bool { return target == ErrBadReply }

// replyExcerpt is how much of a bad reply an error quotes.
const replyExcerpt = 300

func excerpt(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// checkReply parses text as one JSON object and validates it against s.
func checkReply(provider string, s Schema, text string) (json.RawMessage, error) {
	bad := func(reason string) error {
		return &ReplyError{Provider: provider, Schema: s.Name, Reason: reason, Reply: excerpt(text, replyExcerpt)}
	}
	t := strings.TrimSpace(text)
	if t == "" {
		return nil, bad("the reply is empty")
	}
	dec := json.NewDecoder(strings.NewReader(t))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, bad("not JSON: " + err.Error())
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, bad("text after the JSON document")
	}
	if _, ok := doc.(map[string]any); !ok {
		return nil, bad("not a JSON object")
	}
	if err := s.Validate(doc); err != nil {
		return nil, bad(err.Error())
	}
	var out bytes.Buffer
	if err := json.Compact(&out, []byte(t)); err != nil {
		return nil, bad(err.Error())
	}
	return out.Bytes(), nil
}

func checkRequest(req Request) error {
	if req.Schema.Name == "" || len(req.Schema.JSON) == 0 || req.Schema.Validate == nil {
		return errors.New("llm: a request needs a named schema with its JSON and a validator")
	}
	if !json.Valid(req.Schema.JSON) {
		return fmt.Errorf("llm: schema %s is not valid JSON", req.Schema.Name)
	}
	return nil
}

// schemaObject returns the schema as an object for a request body,
// without the keys that name it as a standalone document ($schema, $id),
// which some providers refuse.
func schemaObject(s Schema) (map[string]any, error) {
	var obj map[string]any
	if err := json.Unmarshal(s.JSON, &obj); err != nil {
		return nil, fmt.Errorf("llm: schema %s: %w", s.Name, err)
	}
	delete(obj, "$schema")
	delete(obj, "$id")
	return obj, nil
}

// Config chooses and sets up the provider (internal/llmconfig, a leaf
// package the knowledge store reads config.yaml with).
type Config = llmconfig.Config

// The environment variables that override Config.
const (
	EnvProvider  = llmconfig.EnvProvider
	EnvModel     = llmconfig.EnvModel
	EnvURL       = llmconfig.EnvURL
	EnvAPIKeyEnv = llmconfig.EnvAPIKeyEnv
	EnvHarness   = llmconfig.EnvHarness
)

// Deps are what New needs besides the configuration.
type Deps struct {
	Getenv func(string) string
	// Harnesses finds the adapter for the harness provider (kk's harness
	// registry).
	Harnesses HarnessFinder
	// LogDir, when set, is where harness runs copy their output.
	LogDir string
	// HTTPClient replaces the default client (tests); its timeout is
	// left as it is.
	HTTPClient *http.Client
	// Retry replaces DefaultRetry (tests shorten the waits).
	Retry *RetryPolicy
}

// ErrNotConfigured is what New returns, with a nil Provider, when the
// configuration names no provider.
var ErrNotConfigured = errors.New("LLM provider is not configured")

// DefaultTimeout bounds one model call.
const DefaultTimeout = 120 * time.Second

// New builds the provider c names, wrapped so that transient failures
// and bad replies are tried again (WithRetry, d.Retry or DefaultRetry).
// It returns ErrNotConfigured when c names none, and an error when a
// setting or the API key is missing.
func New(c Config, d Deps) (Provider, error) {
	p, err := newProvider(c, d)
	if err != nil {
		return nil, err
	}
	policy := DefaultRetry
	if d.Retry != nil {
		policy = *d.Retry
	}
	return WithRetry(p, policy), nil
}

func newProvider(c Config, d Deps) (Provider, error) {
	if d.Getenv == nil {
		d.Getenv = func(string) string { return "" }
	}
	timeout := DefaultTimeout
	if c.TimeoutSeconds > 0 {
		timeout = time.Duration(c.TimeoutSeconds) * time.Second
	}
	client := d.HTTPClient
	if client == nil {
		client = &http.Client{Timeout: timeout}
	}
	key := func(def string) (string, string) {
		name := c.APIKeyEnv
		if name == "" {
			name = def
		}
		return name, strings.TrimSpace(d.Getenv(name))
	}
	switch strings.ToLower(strings.TrimSpace(c.Provider)) {
	case "", "none":
		return nil, ErrNotConfigured
	case "ollama":
		if c.Model == "" {
			return nil, errors.New("llm: provider ollama needs a model (llm.model or KK_LLM_MODEL)")
		}
		return &Ollama{baseURL: baseURL(c.URL, "http://localhost:11434"), model: c.Model, client: client}, nil
	case "anthropic":
		if c.Model == "" {
			return nil, errors.New("llm: provider anthropic needs a model (llm.model or KK_LLM_MODEL)")
		}
		name, k := key("ANTHROPIC_API_KEY")
		if k == "" {
			return nil, fmt.Errorf("llm: provider anthropic needs an API key in the environment variable %s", name)
		}
		maxTokens := c.MaxTokens
		if maxTokens <= 0 {
			maxTokens = 4096
		}
		return &Anthropic{baseURL: baseURL(c.URL, "https://api.anthropic.com"), model: c.Model, apiKey: k, maxTokens: maxTokens, client: client}, nil
	case "openai":
		if c.Model == "" {
			return nil, errors.New("llm: provider openai needs a model (llm.model or KK_LLM_MODEL)")
		}
		name, k := key("OPENAI_API_KEY")
		if k == "" && (c.URL == "" || c.APIKeyEnv != "") {
			// api.openai.com always needs a key; a local server may not.
			return nil, fmt.Errorf("llm: provider openai needs an API key in the environment variable %s", name)
		}
		return &OpenAI{baseURL: baseURL(c.URL, "https://api.openai.com"), model: c.Model, apiKey: k, client: client}, nil
	case "harness":
		if c.Harness == "" {
			return nil, errors.New("llm: provider harness needs a harness id (llm.harness or KK_LLM_HARNESS)")
		}
		if d.Harnesses == nil {
			return nil, errors.New("llm: provider harness needs kk's harness registry")
		}
		a, err := d.Harnesses.Get(c.Harness)
		if err != nil {
			return nil, fmt.Errorf("llm: %w", err)
		}
		return &Harness{adapter: a, model: c.Model, timeout: timeout, logDir: d.LogDir}, nil
	}
	return nil, fmt.Errorf("llm: unknown provider %q; use none, ollama, anthropic, openai or harness", c.Provider)
}

func baseURL(configured, def string) string {
	if configured == "" {
		configured = def
	}
	return strings.TrimRight(configured, "/")
}

// maxReplyBytes caps how much of an API's reply is read.
const maxReplyBytes = 16 << 20

// postJSON sends body to url with headers and decodes a 200 reply into
// out. Any other status is an error quoting the start of the reply's body
// (never the request, which may carry the key in a header).
func postJSON(ctx context.Context, client *http.Client, provider, url string, headers map[string]string, body, out any) error {
	data, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("%s: encoding the request: %w", provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		return fmt.Errorf("%s: %w", provider, err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := client.Do(req)
	if err != nil {
		return fmt.Errorf("%s: calling %s: %w", provider, url, err)
	}
	defer func() { _ = resp.Body.Close() }()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxReplyBytes))
	if err != nil {
		return fmt.Errorf("%s: reading the reply: %w", provider, err)
	}
	if resp.StatusCode != http.StatusOK {
		return &HTTPError{Provider: provider, Status: resp.StatusCode, URL: url, Body: excerpt(string(raw), 500),
			RetryAfter: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s: the API's reply is not the JSON expected: %v (reply: %q)", provider, err, excerpt(string(raw), 200))
	}
	return nil
}
