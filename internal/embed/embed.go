// Package embed turns texts into vectors through an embedding provider
// (Ollama, or any OpenAI-compatible API), for the hybrid search of the
// index. It needs no model provider of internal/llm and no harness, so
// the index can use it without depending on the adapter framework.
package embed

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/llmconfig"
)

// Embedding providers.
const (
	EmbedOllama = llmconfig.EmbedOllama // Ollama's /api/embed
	EmbedOpenAI = llmconfig.EmbedOpenAI // any OpenAI-compatible /v1/embeddings
)

// EmbedConfig is the embeddings section of config.yaml
// (internal/llmconfig).
type EmbedConfig = llmconfig.EmbedConfig

// Embedder turns texts into vectors.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Model names the provider and model; vectors of another Model are
	// not comparable and are recomputed.
	Model() string
}

// EmbedTimeout bounds one embedding request.
var EmbedTimeout = 30 * time.Second

// ErrNoEmbedder is returned when embeddings are asked for and no provider
// is configured.
var ErrNoEmbedder = errors.New("no embedding provider configured")

// NewEmbedder returns the embedder cfg configures, or nil (and no error)
// when cfg is nil or names no provider: then nothing reaches the network.
// getenv reads the API key; client is the HTTP client to use (nil: one
// with EmbedTimeout).
func NewEmbedder(cfg *EmbedConfig, getenv func(string) string, client *http.Client) (Embedder, error) {
	if cfg == nil || cfg.Provider == "" {
		return nil, nil
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("embeddings: provider %s needs a model", cfg.Provider)
	}
	if client == nil {
		client = &http.Client{Timeout: EmbedTimeout}
	}
	base := strings.TrimRight(cfg.BaseURL, "/")
	switch cfg.Provider {
	case EmbedOllama:
		if base == "" {
			base = "http://localhost:11434"
		}
		return &ollamaEmbedder{base: base, model: cfg.Model, client: client}, nil
	case EmbedOpenAI:
		if base == "" {
			base = "https://api.openai.com"
		}
		env := cfg.APIKeyEnv
		if env == "" {
			env = "OPENAI_API_KEY"
		}
		key := ""
		if getenv != nil {
			key = getenv(env)
		}
		return &openAIEmbedder{base: base, model: cfg.Model, key: key, client: client}, nil
	}
	return nil, fmt.Errorf("embeddings: unknown provider %q; use %s or %s", cfg.Provider, EmbedOllama, EmbedOpenAI)
}

// checkCount makes sure a provider answered one vector per text, all of
// the same length.
func checkCount(provider string, got [][]float32, want int) error {
	if len(got) != want {
		return fmt.Errorf("%s embeddings: %d vectors for %d texts", provider, len(got), want)
	}
	for i, v := range got {
		if len(v) == 0 || len(v) != len(got[0]) {
			return fmt.Errorf("%s embeddings: vector %d has %d dimensions, vector 0 %d", provider, i, len(v), len(got[0]))
		}
	}
	return nil
}

// send sends a JSON request to an embedding provider and returns the
// body of its answer (at most 256 MB); an answer that is not 2xx is an
// error naming the provider and the status.
func send(client *http.Client, req *http.Request, provider string) ([]byte, error) {
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%s embeddings: %w", provider, err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 256<<20))
	if err != nil {
		return nil, fmt.Errorf("%s embeddings: %w", provider, err)
	}
	if resp.StatusCode/100 != 2 {
		return nil, httpError(provider, resp, data)
	}
	return data, nil
}

// httpError describes a provider's non-2xx answer without its whole body.
func httpError(provider string, resp *http.Response, body []byte) error {
	msg := strings.TrimSpace(string(body))
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Errorf("%s embeddings: %s: %s", provider, resp.Status, msg)
}
