// Package llmconfig holds the settings of the model providers as
// config.yaml spells them: the llm: section (kk serve's organizer and
// query engine) and the embeddings: section (hybrid search). It is a leaf
// package: the knowledge store reads these settings without depending on
// the providers (internal/llm), which in turn depend on the harness
// adapters.
package llmconfig

import "strings"

// Config chooses and sets up the provider. It lives under llm: in
// .ai/kenkeep/config.yaml, and KK_LLM_* variables override it (WithEnv).
type Config struct {
	// Provider is none (the default: kk serve works offline), ollama,
	// anthropic, openai or harness.
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty" jsonschema:"enum=,enum=none,enum=ollama,enum=anthropic,enum=openai,enum=harness"`
	// Model is the model name; for harness, the harness's own model name
	// (empty: its default).
	Model string `yaml:"model,omitempty" json:"model,omitempty"`
	// URL is the API's base URL (default http://localhost:11434 for
	// ollama, https://api.anthropic.com, https://api.openai.com).
	URL string `yaml:"url,omitempty" json:"url,omitempty"`
	// APIKeyEnv names the environment variable that holds the API key
	// (default ANTHROPIC_API_KEY or OPENAI_API_KEY). The key itself is
	// never in the configuration.
	APIKeyEnv string `yaml:"apiKeyEnv,omitempty" json:"apiKeyEnv,omitempty"`
	// Harness is the harness id for the harness provider (claude, codex, …).
	Harness string `yaml:"harness,omitempty" json:"harness,omitempty"`
	// TimeoutSeconds bounds one model call (default 120).
	TimeoutSeconds int `yaml:"timeoutSeconds,omitempty" json:"timeoutSeconds,omitempty" jsonschema:"minimum=1"`
	// MaxTokens caps the reply's length where the API needs a cap
	// (Anthropic; default 4096).
	MaxTokens int `yaml:"maxTokens,omitempty" json:"maxTokens,omitempty" jsonschema:"minimum=1"`
}

// The environment variables that override Config.
const (
	EnvProvider  = "KK_LLM_PROVIDER"
	EnvModel     = "KK_LLM_MODEL"
	EnvURL       = "KK_LLM_URL"
	EnvAPIKeyEnv = "KK_LLM_API_KEY_ENV"
	EnvHarness   = "KK_LLM_HARNESS"
)

// WithEnv returns c with every KK_LLM_* variable that is set taking the
// place of its setting.
func (c Config) WithEnv(getenv func(string) string) Config {
	for _, o := range []struct {
		env string
		dst *string
	}{{EnvProvider, &c.Provider}, {EnvModel, &c.Model}, {EnvURL, &c.URL}, {EnvAPIKeyEnv, &c.APIKeyEnv}, {EnvHarness, &c.Harness}} {
		if v := strings.TrimSpace(getenv(o.env)); v != "" {
			*o.dst = v
		}
	}
	return c
}

// Embedding providers.
const (
	EmbedOllama = "ollama" // Ollama's /api/embed
	EmbedOpenAI = "openai" // any OpenAI-compatible /v1/embeddings
)

// EmbedConfig is the embeddings section of config.yaml. An empty
// Provider means no embeddings: kk stays offline and lexical.
type EmbedConfig struct {
	Provider string `yaml:"provider,omitempty" json:"provider,omitempty" jsonschema:"enum=ollama,enum=openai,description=ollama (Ollama /api/embed) or openai (any OpenAI-compatible /v1/embeddings); absent: no embeddings"`
	Model    string `yaml:"model,omitempty" json:"model,omitempty" jsonschema:"description=Embedding model name (required with a provider)"`
	// BaseURL defaults to http://localhost:11434 for ollama and
	// https://api.openai.com for openai.
	BaseURL string `yaml:"baseUrl,omitempty" json:"baseUrl,omitempty" jsonschema:"description=Server address (default http://localhost:11434 for ollama\\, https://api.openai.com for openai)"`
	// APIKeyEnv names the environment variable holding the API key (the
	// key itself never goes into config.yaml); default OPENAI_API_KEY for
	// openai, none for ollama.
	APIKeyEnv string `yaml:"apiKeyEnv,omitempty" json:"apiKeyEnv,omitempty" jsonschema:"description=Environment variable holding the API key (default OPENAI_API_KEY for openai)"`
	// MinSimilarity is the least cosine similarity a node needs to be
	// returned by the vector side of a search on its own (default 0.5).
	MinSimilarity float64 `yaml:"minSimilarity,omitempty" json:"minSimilarity,omitempty" jsonschema:"minimum=0,maximum=1,description=Least cosine similarity for a node found only by meaning (default 0.5)"`
}

// Model is a model setting for a harness run (config proposalModel,
// curatorModel, bootstrapModel; kk serve's llm.model for the harness
// provider): which model, at which reasoning effort, for which harness.
type Model struct {
	// Harness is the harness the setting is for; "" is every harness. A
	// setting for another harness is not applied.
	Harness string
	// Name is the model, as the harness names it (sonnet, gpt-5-codex,
	// gemini-2.5-pro, provider/model for OpenCode).
	Name string
	// Effort is the reasoning effort: minimal, low, medium, high, xhigh or
	// max, as far as the harness takes it.
	Effort string
	// Agent is the agent a run uses, for a harness that has agents
	// (OpenCode's --agent).
	Agent string
}

// IsZero reports a setting that asks for nothing.
func (m Model) IsZero() bool { return m == Model{} }

// EffortLevels are the reasoning efforts a model setting may name, the
// union of what the harnesses take.
var EffortLevels = []string{"minimal", "low", "medium", "high", "xhigh", "max"}
