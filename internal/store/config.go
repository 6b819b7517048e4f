package store

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/llmconfig"
	"github.com/kk-project/kk/internal/node"
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
	CLIDefaultHarness string        `yaml:"cliDefaultHarness,omitempty" json:"cliDefaultHarness,omitempty" jsonschema:"minLength=1"`
	DefaultBranch     string        `yaml:"defaultBranch,omitempty" json:"defaultBranch,omitempty"`
	// ProjectID names the project in the graph operations' projectId
	// parameter; absent, it is the repository folder's name. (kk's own
	// setting: kenkeep refuses it, so kk init does not write it.)
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

// ModelSetting is a model setting of config.yaml (proposalModel,
// curatorModel, bootstrapModel). A setting without harness ({name,
// effort?, agent?}, kk's own form: kenkeep refuses it) applies to
// whichever harness runs; kenkeep's spellings model and reasoningEffort
// are read for name and effort. A setting with a harness applies to that
// harness only and must be kenkeep's variant for it (modelVariants), so
// that both tools read it. What a
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
	if m.Harness != "" {
		if !slices.Contains(KnownHarnesses, m.Harness) {
			return modelError(n.Line, "harness %q is not one of %s", m.Harness, strings.Join(KnownHarnesses, ", "))
		}
		if msg := checkVariant(vals); msg != "" {
			return modelError(n.Line, "%s", msg)
		}
		return nil
	}
	for _, e := range []struct{ key, v string }{{"effort", m.Effort}, {"reasoningEffort", m.ReasoningEffort}} {
		if e.v != "" && !slices.Contains(llmconfig.EffortLevels, e.v) {
			return modelError(n.Line, "%s %q is not one of %s", e.key, e.v, strings.Join(llmconfig.EffortLevels, ", "))
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
func (m *ModelSetting) HarnessModel() llmconfig.Model {
	if m == nil {
		return llmconfig.Model{}
	}
	return llmconfig.Model{Harness: m.Harness, Name: cmp.Or(m.Name, m.Model), Effort: cmp.Or(m.Effort, m.ReasoningEffort), Agent: m.Agent}
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

// modelVariants are kenkeep's model settings, one per harness, told
// apart by the harness key, each with exactly these keys (kk adds
// gemini's): a setting that names its harness must be one of them, so
// that kenkeep reads it too.
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

// checkVariant says what keeps vals (a setting naming its harness) from
// being kenkeep's variant for that harness ("" when nothing).
func checkVariant(vals map[string]string) string {
	h := vals["harness"]
	v := modelVariants[h]
	takes := strings.Join(append(append([]string{"harness"}, v.required...), v.optional...), ", ")
	for _, key := range v.required {
		if _, ok := vals[key]; !ok {
			return fmt.Sprintf("a %s setting needs %q (it takes %s)", h, key, takes)
		}
	}
	for _, key := range slices.Sorted(maps.Keys(vals)) {
		if key == "harness" {
			continue
		}
		if !slices.Contains(v.required, key) && !slices.Contains(v.optional, key) {
			return fmt.Sprintf("a %s setting has no key %q (it takes %s)", h, key, takes)
		}
		if allowed := v.enums[key]; allowed != nil && !slices.Contains(allowed, vals[key]) {
			return fmt.Sprintf("%s is %q; use one of %s", key, vals[key], strings.Join(allowed, ", "))
		}
	}
	return ""
}

// JSONSchema describes a model setting: kk's harness-less form, or one of
// kenkeep's per-harness variants.
func (ModelSetting) JSONSchema() *jsonschema.Schema {
	str := func(desc string) *jsonschema.Schema {
		return &jsonschema.Schema{Type: "string", MinLength: ptrTo(uint64(1)), MaxLength: ptrTo(uint64(200)), Description: desc}
	}
	efforts := func() *jsonschema.Schema {
		e := &jsonschema.Schema{Type: "string"}
		for _, l := range llmconfig.EffortLevels {
			e.Enum = append(e.Enum, l)
		}
		return e
	}
	free := jsonschema.NewProperties()
	free.Set("name", str("the model as the harness names it (sonnet, gpt-5-codex, gemini-2.5-pro, provider/model for OpenCode)"))
	free.Set("effort", efforts())
	free.Set("agent", str("the agent a run uses (OpenCode)"))
	free.Set("model", str("the same as name (kenkeep's spelling)"))
	free.Set("reasoningEffort", efforts())
	s := &jsonschema.Schema{Description: "a model setting: {name, effort?, agent?} for whichever harness runs (kk only), or one harness's setting told apart by its harness key (kenkeep's shapes)",
		OneOf: []*jsonschema.Schema{{Type: "object", Properties: free, AdditionalProperties: jsonschema.FalseSchema}}}
	for _, h := range slices.Sorted(maps.Keys(modelVariants)) {
		v := modelVariants[h]
		props := jsonschema.NewProperties()
		props.Set("harness", &jsonschema.Schema{Const: h})
		for _, key := range append(slices.Clone(v.required), v.optional...) {
			p := str("")
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
	src, err := k.ReadFile(k.ConfigPath())
	if errors.Is(err, fs.ErrNotExist) {
		return cfg, nil
	}
	file := k.Rel(k.ConfigPath())
	if err != nil {
		// A config.yaml kk cannot read (a folder, no permission) is the
		// file's problem as much as one that does not parse.
		return cfg, &ConfigError{File: file, err: err}
	}
	cfg, err = ParseConfig(file, src)
	if err != nil {
		return cfg, &ConfigError{File: file, Line: lineOf(err.Error()), err: err}
	}
	return cfg, nil
}

// ConfigError is a config.yaml that does not parse, or holds a setting kk
// refuses: File is its path relative to the repository, Line the line
// named, 0 when none is. Its message is ParseConfig's, or the read's.
type ConfigError struct {
	File string
	Line int
	err  error
}

func (e *ConfigError) Error() string { return e.err.Error() }

func (e *ConfigError) Unwrap() error { return e.err }

// lineOf is the number after the first "line " of a message, or 0.
func lineOf(msg string) int {
	_, rest, ok := strings.Cut(msg, "line ")
	if !ok {
		return 0
	}
	n := 0
	for _, c := range rest {
		if c < '0' || c > '9' {
			break
		}
		n = n*10 + int(c-'0')
	}
	return n
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
		if key, v := m.Content[i].Value, m.Content[i+1]; key == "notifications" {
			if err := checkNotifications(v); err != nil {
				return cfg, fmt.Errorf("%s: %w", file, err)
			}
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
	cfg.Notifications = nil // set from the file, else the default below
	if err := m.Decode(&cfg); err != nil {
		return cfg, fmt.Errorf("%s: %s", file, decodeError(m, err))
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
	if n := cfg.Notifications; n == nil {
		cfg.Notifications = DefaultConfig().Notifications
	} else if len(n.Backends) > 0 {
		return cfg, fmt.Errorf("%s: field \"notifications.backends\" is reserved and must be empty ({})", file)
	}
	return cfg, nil
}

// EntrySummary reads the root summary kept in ENTRY.md's front matter.
// An ENTRY.md a merge left with git's conflict markers (one made where
// kk's merge driver is not set up) gives the summary its two sides agree
// on, the one a side added, or else ours: the regeneration that resolves
// the conflict keeps it.
func (k *KB) EntrySummary() string {
	src, err := k.ReadFile(k.EntryPath())
	if err != nil {
		return ""
	}
	if from, _ := node.ConflictMarkers(src); from > 0 {
		ours, base, theirs := conflictSides(src)
		o, t := summaryText(ours), summaryText(theirs)
		if base != nil && o == summaryText(base) || base == nil && o == "" {
			return t
		}
		return o
	}
	return summaryText(src)
}

// summaryText is the summary in the front matter of src, or "".
func summaryText(src []byte) string {
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return ""
	}
	s, _ := doc.Value("summary")
	str, _ := s.(string)
	return strings.TrimSpace(str)
}

// conflictSides splits a file holding git's conflict markers into the
// text of each side: ours (between <<<<<<< and ||||||| or =======),
// theirs (between ======= and >>>>>>>), and the base where git wrote it
// (merge.conflictStyle diff3 or zdiff3: between ||||||| and =======), else
// nil. Lines outside the conflicts belong to every side.
func conflictSides(src []byte) (ours, base, theirs []byte) {
	const (
		both = iota
		inOurs
		inBase
		inTheirs
	)
	state := both
	var o, b, t bytes.Buffer
	hasBase := false
	for _, line := range bytes.SplitAfter(src, []byte("\n")) {
		text := strings.TrimRight(string(line), "\r\n")
		marker := func(c string) bool {
			return strings.HasPrefix(text, strings.Repeat(c, 7)) && (len(text) == 7 || text[7] == ' ')
		}
		switch {
		case state == both && marker("<"):
			state = inOurs
			continue
		case state == inOurs && marker("|"):
			state, hasBase = inBase, true
			continue
		case (state == inOurs || state == inBase) && marker("="):
			state = inTheirs
			continue
		case state == inTheirs && marker(">"):
			state = both
			continue
		}
		switch state {
		case both:
			o.Write(line)
			b.Write(line)
			t.Write(line)
		case inOurs:
			o.Write(line)
		case inBase:
			b.Write(line)
		case inTheirs:
			t.Write(line)
		}
	}
	if !hasBase {
		return o.Bytes(), nil, t.Bytes()
	}
	return o.Bytes(), b.Bytes(), t.Bytes()
}

// EntryHash returns the nodes_hash recorded in ENTRY.md, without "sha256:".
func (k *KB) EntryHash() (string, bool) {
	src, err := k.ReadFile(k.EntryPath())
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

// checkNotifications checks the notifications setting as kenkeep's strict
// schema does (and kk's JSON Schema): a mapping of enabled (true or false)
// and backends (a mapping, reserved), nothing else.
func checkNotifications(v *yaml.Node) error {
	if v.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: field \"notifications\" must be a mapping (enabled, backends)", v.Line)
	}
	for j := 0; j+1 < len(v.Content); j += 2 {
		k, val := v.Content[j], v.Content[j+1]
		switch k.Value {
		case "enabled":
			if val.Kind != yaml.ScalarNode || val.ShortTag() != "!!bool" {
				return fmt.Errorf("line %d: field \"notifications.enabled\" must be true or false, not %q", val.Line, val.Value)
			}
		case "backends":
			if val.Kind != yaml.MappingNode {
				return fmt.Errorf("line %d: field \"notifications.backends\" is reserved and must be empty ({})", val.Line)
			}
		default:
			return fmt.Errorf("line %d: unknown setting \"notifications.%s\"; notifications holds enabled and backends", k.Line, k.Value)
		}
	}
	return nil
}

// unmarshalError is one of the YAML decoder's type errors: "line 3:
// cannot unmarshal !!str `lots` into int".
var unmarshalError = regexp.MustCompile("^line ([0-9]+): cannot unmarshal (!![a-z]+)(?: `(.*)`)? into (.+)$")

// decodeError words a decoding error of config.yaml's mapping m by the
// settings a person wrote: the line, the setting's dotted name, the value
// and what the setting takes, not the decoder's Go types.
func decodeError(m *yaml.Node, err error) string {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok || len(te.Errors) == 0 {
		return strings.TrimPrefix(err.Error(), "yaml: ")
	}
	sub := unmarshalError.FindStringSubmatch(te.Errors[0])
	if sub == nil {
		return te.Errors[0]
	}
	line, _ := strconv.Atoi(sub[1])
	got := map[string]string{"!!seq": "a list", "!!map": "a mapping"}[sub[2]]
	if got == "" {
		got = strconv.Quote(sub[3])
	}
	want := "a string"
	switch goType := sub[4]; {
	case strings.HasPrefix(goType, "int") || strings.HasPrefix(goType, "uint"):
		want = "a whole number"
	case strings.HasPrefix(goType, "float"):
		want = "a number"
	case goType == "bool":
		want = "true or false"
	case strings.HasPrefix(goType, "[]"):
		want = "a list"
	case goType != "string":
		want = "a mapping"
	}
	return fmt.Sprintf("line %d: %s: %s is not %s", line, settingAt(m, line, sub[2], ""), got, want)
}

// settingAt returns the dotted name of the first setting under m whose
// value, tagged tag, starts on line.
func settingAt(m *yaml.Node, line int, tag, prefix string) string {
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		name := prefix + k.Value
		if v.Line == line && v.Tag == tag {
			return name
		}
		if v.Kind == yaml.MappingNode {
			if s := settingAt(v, line, tag, name+"."); s != "" {
				return s
			}
		}
	}
	if prefix == "" {
		return "a setting"
	}
	return ""
}
