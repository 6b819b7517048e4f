package store

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/kk-project/kk/internal/frontmatter"
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
	ProposalModel      ModelChoice    `yaml:"proposalModel,omitempty" json:"proposalModel,omitempty"`
	CuratorModel       ModelChoice    `yaml:"curatorModel,omitempty" json:"curatorModel,omitempty"`
	BootstrapModel     ModelChoice    `yaml:"bootstrapModel,omitempty" json:"bootstrapModel,omitempty"`
	CLIDefaultHarness  string         `yaml:"cliDefaultHarness,omitempty" json:"cliDefaultHarness,omitempty" jsonschema:"minLength=1"`
	DefaultBranch      string         `yaml:"defaultBranch,omitempty" json:"defaultBranch,omitempty"`
	// ProjectID names the project in the graph operations' projectId
	// parameter; absent, it is the repository folder's name. (kk's own
	// setting: kenkeep refuses it, so kk init does not write it.)
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

// Notifications configures desktop notifications, as kenkeep does: both
// keys are optional (notifications: {} is valid), enabled defaults to
// true, and backends is reserved and must be empty.
type Notifications struct {
	Enabled  *bool          `yaml:"enabled,omitempty" json:"enabled,omitempty"`
	Backends map[string]any `yaml:"backends,omitempty" json:"backends,omitempty"`
}

// On reports whether notifications are enabled (the default).
func (n *Notifications) On() bool { return n == nil || n.Enabled == nil || *n.Enabled }

// JSONSchemaExtend makes backends the reserved empty mapping.
func (Notifications) JSONSchemaExtend(s *jsonschema.Schema) {
	if b, ok := s.Properties.Get("backends"); ok {
		zero := uint64(0)
		b.MaxProperties = &zero
	}
}

// ModelChoice is a proposalModel, curatorModel or bootstrapModel setting:
// one variant per harness, told apart by its harness key, each with
// exactly kenkeep's keys (kk adds gemini's): claude {name: haiku|sonnet|
// opus, effort: low|medium|high|xhigh|max}; codex {model,
// reasoningEffort?}; opencode {model, agent?}; cursor, copilot and gemini
// {model}. Strings are non-empty.
type ModelChoice map[string]any

// modelVariants lists each harness's keys: required, then optional.
var modelVariants = map[string]struct {
	required, optional []string
	enums              map[string][]string
}{
	"claude":   {required: []string{"name", "effort"}, enums: map[string][]string{"name": {"haiku", "sonnet", "opus"}, "effort": {"low", "medium", "high", "xhigh", "max"}}},
	"codex":    {required: []string{"model"}, optional: []string{"reasoningEffort"}},
	"opencode": {required: []string{"model"}, optional: []string{"agent"}},
	"cursor":   {required: []string{"model"}},
	"copilot":  {required: []string{"model"}},
	"gemini":   {required: []string{"model"}},
}

// Check says what is wrong with a model choice ("" when nothing).
func (m ModelChoice) Check() string {
	h, ok := m["harness"].(string)
	names := slices.Sorted(maps.Keys(modelVariants))
	if !ok {
		return fmt.Sprintf("needs a harness key: one of %s", strings.Join(names, ", "))
	}
	v, known := modelVariants[h]
	if !known {
		return fmt.Sprintf("harness %q is not one of %s", h, strings.Join(names, ", "))
	}
	for _, key := range v.required {
		if _, ok := m[key]; !ok {
			return fmt.Sprintf("a %s choice needs %q", h, key)
		}
	}
	keys := slices.Sorted(maps.Keys(m))
	for _, key := range keys {
		if key == "harness" {
			continue
		}
		if !slices.Contains(v.required, key) && !slices.Contains(v.optional, key) {
			return fmt.Sprintf("a %s choice has no key %q (it takes %s)", h, key, strings.Join(append(append([]string{"harness"}, v.required...), v.optional...), ", "))
		}
		s, isString := m[key].(string)
		if !isString || s == "" {
			return fmt.Sprintf("%q must be a non-empty string", key)
		}
		if allowed := v.enums[key]; allowed != nil && !slices.Contains(allowed, s) {
			return fmt.Sprintf("%q is %q; use one of %s", key, s, strings.Join(allowed, ", "))
		}
	}
	return ""
}

// JSONSchema describes the variants.
func (ModelChoice) JSONSchema() *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "object", Description: "a model for one harness, told apart by its harness key"}
	for _, h := range slices.Sorted(maps.Keys(modelVariants)) {
		v := modelVariants[h]
		props := jsonschema.NewProperties()
		props.Set("harness", &jsonschema.Schema{Const: h})
		for _, key := range append(slices.Clone(v.required), v.optional...) {
			p := &jsonschema.Schema{Type: "string", MinLength: ptrTo(uint64(1))}
			for _, e := range v.enums[key] {
				p.Enum = append(p.Enum, e)
			}
			props.Set(key, p)
		}
		s.OneOf = append(s.OneOf, &jsonschema.Schema{Type: "object", Properties: props,
			Required: append([]string{"harness"}, v.required...), AdditionalProperties: jsonschema.FalseSchema})
	}
	return s
}

func ptrTo[T any](v T) *T { return &v }

// DefaultConfig returns the settings a missing config.yaml stands for.
func DefaultConfig() Config {
	return Config{SchemaVersion: 1, CurationThreshold: 20, LogsRetentionDays: 30, LintEveryNSessions: 50,
		Notifications: &Notifications{Enabled: ptrTo(true), Backends: map[string]any{}}}
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
		if key, v := m.Content[i].Value, m.Content[i+1]; key == "cliDefaultHarness" && (v.Kind != yaml.ScalarNode || v.Tag != "!!str" || v.Value == "") {
			return cfg, fmt.Errorf("%s: line %d: field \"cliDefaultHarness\" must be a harness id, not empty", file, v.Line)
		}
	}
	cfg.Notifications = nil // set from the file, else the default below
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
	for _, c := range []struct {
		key string
		m   ModelChoice
	}{{"proposalModel", cfg.ProposalModel}, {"curatorModel", cfg.CuratorModel}, {"bootstrapModel", cfg.BootstrapModel}} {
		if c.m == nil {
			continue
		}
		if msg := c.m.Check(); msg != "" {
			return cfg, fmt.Errorf("%s: field %q: %s", file, c.key, msg)
		}
	}
	if n := cfg.Notifications; n == nil {
		cfg.Notifications = DefaultConfig().Notifications
	} else if len(n.Backends) > 0 {
		return cfg, fmt.Errorf("%s: field \"notifications.backends\" is reserved and must be empty ({})", file)
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
