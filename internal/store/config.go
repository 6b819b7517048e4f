package store

import (
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/llm"
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
	// ProposalModel is the model of the background proposal extraction
	// (proposal-drain); CuratorModel and BootstrapModel are those of the
	// kk curate and kk bootstrap launchers.
	ProposalModel     *ModelSetting `yaml:"proposalModel,omitempty" json:"proposalModel,omitempty"`
	CuratorModel      *ModelSetting `yaml:"curatorModel,omitempty" json:"curatorModel,omitempty"`
	BootstrapModel    *ModelSetting `yaml:"bootstrapModel,omitempty" json:"bootstrapModel,omitempty"`
	CLIDefaultHarness string        `yaml:"cliDefaultHarness,omitempty" json:"cliDefaultHarness,omitempty"`
	DefaultBranch     string        `yaml:"defaultBranch,omitempty" json:"defaultBranch,omitempty"`
	// ProjectID names the project in the graph operations' projectId
	// parameter; init writes the repository folder's name.
	ProjectID    string        `yaml:"projectId,omitempty" json:"projectId,omitempty"`
	Traceability *Traceability `yaml:"traceability,omitempty" json:"traceability,omitempty"`
	Extractors   *Extractors   `yaml:"extractors,omitempty" json:"extractors,omitempty"`
	// Embeddings, when it names a provider, makes search hybrid (lexical
	// and by meaning); absent, kk stays offline and lexical.
	Embeddings *llm.EmbedConfig `yaml:"embeddings,omitempty" json:"embeddings,omitempty"`
	// LLM is the model kk serve's organizer and query engine ask; none
	// (the default) keeps kk serve offline. KK_LLM_* variables override
	// it, and API keys come only from the environment.
	LLM *LLMSettings `yaml:"llm,omitempty" json:"llm,omitempty"`
}

// ModelSetting is a model setting of config.yaml (proposalModel,
// curatorModel, bootstrapModel): {harness?, name, effort?, agent?}. A
// setting without harness applies to whichever harness runs; one with a
// harness applies to that harness only. kenkeep's per-harness spellings
// are read too: model for name, reasoningEffort for effort. What a
// harness cannot honour (an effort Gemini CLI has no flag for) is left
// out of its command line and reported by kk doctor and the launchers.
type ModelSetting struct {
	Harness string `yaml:"harness,omitempty" json:"harness,omitempty" jsonschema:"enum=claude,enum=codex,enum=copilot,enum=cursor,enum=gemini,enum=opencode,description=the harness the setting is for; absent: every harness"`
	Name    string `yaml:"name,omitempty" json:"name,omitempty" jsonschema:"minLength=1,maxLength=200,description=the model as the harness names it (sonnet\\, gpt-5-codex\\, gemini-2.5-pro\\, provider/model for OpenCode)"`
	// Model is kenkeep's spelling of Name (its codex, cursor, copilot and
	// opencode variants).
	Model  string `yaml:"model,omitempty" json:"model,omitempty" jsonschema:"minLength=1,maxLength=200,description=the same as name (kenkeep's spelling)"`
	Effort string `yaml:"effort,omitempty" json:"effort,omitempty" jsonschema:"enum=minimal,enum=low,enum=medium,enum=high,enum=xhigh,enum=max,description=reasoning effort\\, as far as the harness takes it"`
	// ReasoningEffort is kenkeep's spelling of Effort (its codex variant).
	ReasoningEffort string `yaml:"reasoningEffort,omitempty" json:"reasoningEffort,omitempty" jsonschema:"enum=minimal,enum=low,enum=medium,enum=high,enum=xhigh,enum=max,description=the same as effort (kenkeep's spelling)"`
	Agent           string `yaml:"agent,omitempty" json:"agent,omitempty" jsonschema:"minLength=1,maxLength=200,description=the agent a run uses (OpenCode)"`
}

// KnownHarnesses are the harness ids a model setting may name
// (harnesses/all checks them against the registry).
var KnownHarnesses = []string{"claude", "codex", "copilot", "cursor", "gemini", "opencode"}

// modelKeys are the keys of a model setting, in the order errors list
// them.
var modelKeys = []string{"harness", "name", "model", "effort", "reasoningEffort", "agent"}

// UnmarshalYAML reads a model setting strictly: a mapping of known keys
// with one-line string values, a known harness and effort, and name and
// model (effort and reasoningEffort) not saying two different things.
func (m *ModelSetting) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return modelError(n.Line, "must be a mapping such as {name: sonnet, effort: medium}")
	}
	vals := map[string]string{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if !slices.Contains(modelKeys, k.Value) {
			return modelError(k.Line, "unknown key %q; known keys: %s", k.Value, strings.Join(modelKeys, ", "))
		}
		if v.Kind != yaml.ScalarNode || v.Tag == "!!null" || strings.TrimSpace(v.Value) == "" || strings.ContainsAny(v.Value, "\r\n") {
			return modelError(v.Line, "%s must be a non-empty one-line string", k.Value)
		}
		vals[k.Value] = strings.TrimSpace(v.Value)
	}
	*m = ModelSetting{Harness: vals["harness"], Name: vals["name"], Model: vals["model"], Effort: vals["effort"],
		ReasoningEffort: vals["reasoningEffort"], Agent: vals["agent"]}
	if m.Harness != "" && !slices.Contains(KnownHarnesses, m.Harness) {
		return modelError(n.Line, "harness %q is not one of %s", m.Harness, strings.Join(KnownHarnesses, ", "))
	}
	for _, e := range []struct{ key, v string }{{"effort", m.Effort}, {"reasoningEffort", m.ReasoningEffort}} {
		if e.v != "" && !slices.Contains(harness.EffortLevels, e.v) {
			return modelError(n.Line, "%s %q is not one of %s", e.key, e.v, strings.Join(harness.EffortLevels, ", "))
		}
	}
	if m.Name != "" && m.Model != "" && m.Name != m.Model {
		return modelError(n.Line, "name %q and model %q name two models; keep one", m.Name, m.Model)
	}
	if m.Effort != "" && m.ReasoningEffort != "" && m.Effort != m.ReasoningEffort {
		return modelError(n.Line, "effort %q and reasoningEffort %q disagree; keep one", m.Effort, m.ReasoningEffort)
	}
	return nil
}

// ModelSettingError is a model setting config.yaml cannot take.
type ModelSettingError struct {
	Line int
	Msg  string
}

func (e *ModelSettingError) Error() string { return fmt.Sprintf("line %d: %s", e.Line, e.Msg) }

func modelError(line int, format string, args ...any) error {
	return &ModelSettingError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// HarnessModel is the setting as a harness run takes it (the zero Model
// for a nil setting).
func (m *ModelSetting) HarnessModel() harness.Model {
	if m == nil {
		return harness.Model{}
	}
	return harness.Model{Harness: m.Harness, Name: cmp.Or(m.Name, m.Model), Effort: cmp.Or(m.Effort, m.ReasoningEffort), Agent: m.Agent}
}

// ModelSettings are the configured model settings by name, in a fixed
// order, for the checks that look at all of them.
func (c Config) ModelSettings() []NamedModel {
	return []NamedModel{{"proposalModel", c.ProposalModel}, {"curatorModel", c.CuratorModel}, {"bootstrapModel", c.BootstrapModel}}
}

// NamedModel is one model setting and the name of its key.
type NamedModel struct {
	Key     string
	Setting *ModelSetting
}

// LLMSettings is the llm: section of config.yaml: an llm.Config, under a
// name of its own in the generated schema.
type LLMSettings llm.Config

// LLMConfig returns the llm: section (the zero Config when absent).
func (c Config) LLMConfig() llm.Config {
	if c.LLM == nil {
		return llm.Config{}
	}
	return llm.Config(*c.LLM)
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
	for i := 0; i+1 < len(m.Content); i += 2 {
		if key := m.Content[i].Value; strings.HasSuffix(key, "Model") {
			var ms ModelSetting
			var me *ModelSettingError
			if err := m.Content[i+1].Decode(&ms); errors.As(err, &me) {
				return cfg, fmt.Errorf("%s: line %d: %s: %s", file, me.Line, key, me.Msg)
			}
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
