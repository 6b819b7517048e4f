package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
)

// openAIEmbedder calls an OpenAI-compatible POST /v1/embeddings:
// {"model", "input": [texts]} → {"data": [{"index", "embedding": […]}, …]},
// with the API key as a bearer token when there is one.
type openAIEmbedder struct {
	base, model, key string
	client           *http.Client
}

func (e *openAIEmbedder) Model() string { return EmbedOpenAI + ":" + e.model }

func (e *openAIEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	body, err := json.Marshal(map[string]any{"model": e.model, "input": texts, "encoding_format": "float"})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/v1/embeddings", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if e.key != "" {
		req.Header.Set("Authorization", "Bearer "+e.key)
	}
	data, err := send(e.client, req, "openai")
	if err != nil {
		return nil, err
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
	}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, fmt.Errorf("openai embeddings: decoding the answer: %w", err)
	}
	vecs := make([][]float32, len(out.Data))
	for _, d := range out.Data {
		if d.Index < 0 || d.Index >= len(vecs) || vecs[d.Index] != nil {
			return nil, fmt.Errorf("openai embeddings: answer index %d out of place", d.Index)
		}
		vecs[d.Index] = d.Embedding
	}
	if err := checkCount("openai", vecs, len(texts)); err != nil {
		return nil, err
	}
	return vecs, nil
}
