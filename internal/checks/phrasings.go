package checks

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// CountPhrasings counts the leaves of t without phrasings.
func CountPhrasings(t *store.Tree) index.PhrasingCounts {
	p := index.PhrasingCounts{Leaves: len(t.Leaves)}
	for _, n := range t.Leaves {
		if len(n.Phrasings) == 0 {
			p.Without++
		}
	}
	return p
}

func checkPhrasings(t *store.Tree) DoctorCheck {
	c := DoctorCheck{Name: "phrasings"}
	p := CountPhrasings(t)
	switch {
	case p.Leaves == 0:
		c.Level, c.Message = DoctorOK, "no leaves yet"
	case p.Low():
		c.Level, c.Message = DoctorWarn, p.Summary()+": a question in other words than a note's own may miss it"
		c.Fix = index.BackfillHint
	default:
		c.Level, c.Message = DoctorOK, p.Summary()
	}
	return c
}

// OllamaURL is where doctor looks for a local Ollama: OLLAMA_HOST (as the
// ollama command reads it) or its default address.
func OllamaURL() string {
	h := strings.TrimSpace(os.Getenv("OLLAMA_HOST"))
	switch {
	case h == "":
		return "http://localhost:11434"
	case strings.HasPrefix(h, "http://") || strings.HasPrefix(h, "https://"):
		return strings.TrimRight(h, "/")
	default:
		return "http://" + strings.TrimRight(h, "/")
	}
}

// ollamaProbeTime bounds doctor's look for a local Ollama.
const ollamaProbeTime = 500 * time.Millisecond

// checkSemanticSearch says whether search is hybrid, and, when it is not
// and an Ollama answers at ollamaURL ("" skips the look), how to turn it
// on. Nothing else is contacted: search stays offline unless config.yaml
// names a provider.
func checkSemanticSearch(ctx context.Context, k *store.KB, ollamaURL string) DoctorCheck {
	c := DoctorCheck{Name: "semantic-search", Level: DoctorOK}
	cfg, err := k.LoadConfig()
	if err != nil {
		c.Message = "not checked: config.yaml does not load (see config)"
		return c
	}
	if e := cfg.Embeddings; e != nil && e.Provider != "" {
		c.Message = fmt.Sprintf("on: search is lexical and by meaning (%s, model %s)", e.Provider, e.Model)
		return c
	}
	c.Message = "off: search is lexical and offline (the default)"
	if ollamaURL == "" {
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, ollamaProbeTime)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, ollamaURL+"/api/tags", nil)
	if err != nil {
		return c
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return c
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return c
	}
	c.Message = "off, and a local Ollama answers at " + ollamaURL + ": semantic search can be turned on"
	c.Fix = fmt.Sprintf("add to %s:\n  embeddings:\n    provider: ollama\n    model: nomic-embed-text\n    baseUrl: %s\nthen run `ollama pull nomic-embed-text` and `kk sync` (docs/search.md, Semantic search)", k.Rel(k.ConfigPath()), ollamaURL)
	return c
}

// TreePhrasings counts the phrasings of k's tree, as read now (through
// the branch index).
func TreePhrasings(ctx context.Context, k *store.KB) (index.PhrasingCounts, error) {
	t, err := index.ReadTree(ctx, k)
	if err != nil {
		return index.PhrasingCounts{}, err
	}
	return CountPhrasings(t), nil
}
