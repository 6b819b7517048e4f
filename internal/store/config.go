package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/llmconfig"
	"go.yaml.in/yaml/v3"
)

// Config is .ai/kenkeep/config.yaml. Unknown keys are an error, so a typo
// does not silently fall back to a default.
type Config struct {
	SchemaVersion      int            `yaml:"schema_version" json:"schema_version" jsonschema:"enum=1"`
	CurationThreshold  int            `yaml:"curationThreshold,omitempty" json:"curationThreshold,omitempty" jsonschema:"minimum=1"`
	LogsRetentionDays  int            `yaml:"logsRetentionDays,omitempty" json:"logsRetentionDays,omitempty" jsonschema:"minimum=1"`
	LintEveryNSessions int            `yaml:"lintEveryNSessions,omitempty" json:"lintEveryNSessions,omitempty" jsonschema:"minimum=1"`
	Notifications      *Notifications `yaml:"notifications,omitempty" json:"notifications,omitempty"`
	ProposalModel      map[string]any `yaml:"proposalModel,omitempty" json:"proposalModel,omitempty"`
	CuratorModel       map[string]any `yaml:"curatorModel,omitempty" json:"curatorModel,omitempty"`
	BootstrapModel     map[string]any `yaml:"bootstrapModel,omitempty" json:"bootstrapModel,omitempty"`
	CLIDefaultHarness  string         `yaml:"cliDefaultHarness,omitempty" json:"cliDefaultHarness,omitempty"`
	DefaultBranch      string         `yaml:"defaultBranch,omitempty" json:"defaultBranch,omitempty"`
	// ProjectID names the project in the graph operations' projectId
	// parameter; init writes the repository folder's name.
	ProjectID    string        `yaml:"projectId,omitempty" json:"projectId,omitempty"`
	Traceability *Traceability `yaml:"traceability,omitempty" json:"traceability,omitempty"`
	Extractors   *Extractors   `yaml:"extractors,omitempty" json:"extractors,omitempty"`
	// Embeddings, when it names a provider, makes search hybrid (lexical
	// and by meaning); absent, kk stays offline and lexical.
	Embeddings *llmconfig.EmbedConfig `yaml:"embeddings,omitempty" json:"embeddings,omitempty"`
	// LLM is the model kk serve's organizer and query engine ask; none
	// (the default) keeps kk serve offline. KK_LLM_* variables override
	// it, and API keys come only from the environment.
	LLM *LLMSettings `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// LLMSettings is the llm: section of config.yaml: an llmconfig.Config, under a
// name of its own in the generated schema.
type LLMSettings llmconfig.Config

// LLMConfig returns the llm: section (the zero Config when absent).
func (c Config) LLMConfig() llmconfig.Config {
	if c.LLM == nil {
		return llmconfig.Config{}
	}
	return llmconfig.Config(*c.LLM)
}

// Traceability configures the typed entities' rules and who may delete them.
type Traceability struct {
	// AllowDependsOnCycles turns off kb_check's depends_on cycle rule.
	AllowDependsOnCycles bool `yaml:"allowDependsOnCycles,omitempty" json:"allowDependsOnCycles,omitempty"`
	// AgentDeletableTypes are the entity types an agent may delete through
	// the MCP kb_delete tool. Nil means every type but req and adr.
	AgentDeletableTypes []string `yaml:"agentDeletableTypes,omitempty" json:"agentDeletableTypes,omitempty"`
}

// Extractors configures which repository files feed typed entities into the
// index besides the leaves of the tree.
type Extractors struct {
	// Docs are folders, relative to the repository root, whose markdown
	// documents carry id, type and links in their front matter.
	Docs []string `yaml:"docs,omitempty" json:"docs,omitempty"`
	// Symbols are symbol manifest files (JSON or YAML), relative to the
	// repository root.
	Symbols []string `yaml:"symbols,omitempty" json:"symbols,omitempty"`
}

// DefaultDocsFolders are the folders the markdown extractor reads when
// config names none.
var DefaultDocsFolders = []string{"docs/adr", "docs/requirements", "docs/scenarios"}

// DefaultSymbolManifests are the manifests the symbol extractor reads when
// config names none.
var DefaultSymbolManifests = []string{".ai/kenkeep/symbols.json", ".ai/kenkeep/symbols.yaml"}

// DocsFolders returns the configured markdown document folders, or the defaults.
func (c Config) DocsFolders() []string {
	if c.Extractors != nil && c.Extractors.Docs != nil {
		return c.Extractors.Docs
	}
	return DefaultDocsFolders
}

// SymbolManifests returns the configured symbol manifests, or the defaults.
func (c Config) SymbolManifests() []string {
	if c.Extractors != nil && c.Extractors.Symbols != nil {
		return c.Extractors.Symbols
	}
	return DefaultSymbolManifests
}

// AgentMayDelete reports whether agents may delete entities of type typ.
func (c Config) AgentMayDelete(typ string) bool {
	if c.Traceability != nil && c.Traceability.AgentDeletableTypes != nil {
		return slices.Contains(c.Traceability.AgentDeletableTypes, typ)
	}
	return typ != "req" && typ != "adr"
}

// Notifications configures desktop notifications.
type Notifications struct {
	Enabled  bool           `yaml:"enabled" json:"enabled"`
	Backends map[string]any `yaml:"backends,omitempty" json:"backends,omitempty"`
}

// DefaultConfig returns the settings a missing config.yaml stands for.
func DefaultConfig() Config {
	return Config{SchemaVersion: 1, CurationThreshold: 20, LogsRetentionDays: 30, LintEveryNSessions: 50,
		Notifications: &Notifications{Enabled: true, Backends: map[string]any{}}}
}

var configKeys = []string{"schema_version", "curationThreshold", "logsRetentionDays", "lintEveryNSessions",
	"notifications", "proposalModel", "curatorModel", "bootstrapModel", "cliDefaultHarness", "defaultBranch",
	"projectId", "traceability", "extractors", "embeddings", "llm"}

// LoadConfig reads config.yaml; a missing file gives the defaults.
func (k *KB) LoadConfig() (Config, error) {
	cfg := DefaultConfig()
	src, err := os.ReadFile(k.ConfigPath())
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	if err != nil {
		return cfg, err
	}
	return ParseConfig(k.Rel(k.ConfigPath()), src)
}

// ParseConfig parses and checks the text of a config.yaml named file.
func ParseConfig(file string, src []byte) (Config, error) {
	cfg := DefaultConfig()
	var root yaml.Node
	if err := yaml.Unmarshal(src, &root); err != nil {
		return cfg, fmt.Errorf("%s: invalid YAML: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	if len(root.Content) == 0 {
		return cfg, nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return cfg, fmt.Errorf("%s: must be a mapping of settings", file)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if key := m.Content[i].Value; !slices.Contains(configKeys, key) {
			return cfg, fmt.Errorf("%s: line %d: unknown setting %q; known settings: %s", file, m.Content[i].Line, key, strings.Join(configKeys, ", "))
		}
	}
	if err := m.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: %s", file, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	switch {
	case cfg.SchemaVersion != 1:
		return cfg, fmt.Errorf("%s: field \"schema_version\" must be 1", file)
	case cfg.CurationThreshold < 1:
		return cfg, fmt.Errorf("%s: field \"curationThreshold\" must be a whole number above 0", file)
	case cfg.LogsRetentionDays < 1:
		return cfg, fmt.Errorf("%s: field \"logsRetentionDays\" must be a whole number above 0", file)
	case cfg.LintEveryNSessions < 1:
		return cfg, fmt.Errorf("%s: field \"lintEveryNSessions\" must be a whole number above 0", file)
	}
	return cfg, nil
}

// entrySummary reads the root summary kept in ENTRY.md's front matter.
func (k *KB) EntrySummary() string {
	src, err := os.ReadFile(k.EntryPath())
	if err != nil {
		return ""
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return ""
	}
	s, _ := doc.Value("summary")
	str, _ := s.(string)
	return strings.TrimSpace(str)
}

// EntryHash returns the nodes_hash recorded in ENTRY.md, without "sha256:".
func (k *KB) EntryHash() (string, bool) {
	src, err := os.ReadFile(k.EntryPath())
	if err != nil {
		return "", false
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return "", false
	}
	v, _ := doc.Value("nodes_hash")
	s, ok := v.(string)
	return strings.TrimPrefix(s, "sha256:"), ok
}
