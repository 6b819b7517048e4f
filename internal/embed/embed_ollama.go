package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// ollamaEmbedder calls Ollama's POST /api/embed:
// {"model", "input": [texts]} → {"embeddings": [[…], …]}.
type ollamaEmbedder struct {
	base, model string
	client      *http.Client
}

func (e *ollamaEmbedder) Model() string { return EmbedOllama + ":" + e.model }

func (e *ollamaEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(map[string]any{"model": e.model, "input": texts})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/api/embed", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	data, err := send(e.client, req, "ollama")
	if err != nil {
		return nil, err
	}
	var out struct {
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("ollama embeddings: decoding the answer: %w", err)
	}
	if err := checkCount("ollama", out.Embeddings, len(texts)); err != nil {
		return nil, err
	}
	return out.Embeddings, nil
}
