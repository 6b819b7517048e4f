package contracts

import "github.com/invopop/jsonschema"

// SymbolManifest is a symbol manifest (by default .ai/kenkeep/symbols.json
// or .ai/kenkeep/symbols.yaml): the code symbols of a repository, named in
// a language-agnostic way, and the typed edges from each symbol to the
// requirements it implements, the tests that cover it, the decisions that
// constrain it and the events it publishes or consumes. The symbol
// extractor reads it into the index on every sync. Unknown keys are an
// error.
type SymbolManifest struct {
	SchemaVersion int      `json:"schema_version" yaml:"schema_version" jsonschema:"enum=1,description=Version of the manifest format; 1 is the only one."`
	Symbols       []Symbol `json:"symbols" yaml:"symbols" jsonschema:"maxItems=100000,description=The symbols\\, in any order; ids must be unique."`
}

// Symbol is one entry of a symbol manifest. Ids (its own and every edge
// target) are normalised as kk ids: "REQ-7" in implements becomes req-7,
// "login" becomes req-login.
type Symbol struct {
	ID            string   `json:"id,omitempty" yaml:"id,omitempty" jsonschema:"maxLength=255,pattern=^[A-Za-z0-9][A-Za-z0-9._-]*$,description=Stable id of the symbol; symbol- is prefixed when missing (Login becomes symbol-login). Default: derived from name."`
	Name          string   `json:"name" yaml:"name" jsonschema:"minLength=1,maxLength=255,pattern=^[^\\r\\n]*\\S[^\\r\\n]*$,description=The symbol's name in the code (such as auth.Login or billing/Invoice); the entity's title."`
	Kind          string   `json:"kind,omitempty" yaml:"kind,omitempty" jsonschema:"maxLength=64,pattern=^[^\\r\\n]*$,description=What the symbol is: function\\, method\\, class\\, module\\, ... (free-form)."`
	File          string   `json:"file,omitempty" yaml:"file,omitempty" jsonschema:"maxLength=512,pattern=^[^/\\r\\n][^\\r\\n]*$,description=Repository-relative file that defines the symbol."`
	Description   string   `json:"description,omitempty" yaml:"description,omitempty" jsonschema:"maxLength=1024,pattern=^[^\\r\\n]*$,description=One-line summary."`
	Status        string   `json:"status,omitempty" yaml:"status,omitempty" jsonschema:"maxLength=64,pattern=^[^\\r\\n]*$,description=Lifecycle (such as draft\\, stable\\, deprecated)."`
	Owner         string   `json:"owner,omitempty" yaml:"owner,omitempty" jsonschema:"maxLength=255,pattern=^[^\\r\\n]*$,description=Who owns the symbol."`
	Tags          []string `json:"tags,omitempty" yaml:"tags,omitempty" jsonschema:"maxItems=50,description=Tags (no whitespace inside a tag)."`
	Implements    []string `json:"implements,omitempty" yaml:"implements,omitempty" jsonschema:"maxItems=500,description=Ids of the requirements (req) the symbol implements."`
	CoveredBy     []string `json:"covered_by,omitempty" yaml:"covered_by,omitempty" jsonschema:"maxItems=500,description=Ids of the tests (test) that cover the symbol."`
	ConstrainedBy []string `json:"constrained_by,omitempty" yaml:"constrained_by,omitempty" jsonschema:"maxItems=500,description=Ids of the decisions (adr) that constrain the symbol."`
	Publishes     []string `json:"publishes,omitempty" yaml:"publishes,omitempty" jsonschema:"maxItems=500,description=Ids of the events (event) the symbol publishes."`
	Consumes      []string `json:"consumes,omitempty" yaml:"consumes,omitempty" jsonschema:"maxItems=500,description=Ids of the events (event) the symbol consumes."`
}

// SymbolEdgeKeys are the edge lists of a symbol, as the manifest names them.
var SymbolEdgeKeys = []string{"implements", "covered_by", "constrained_by", "publishes", "consumes"}

// JSONSchemaExtend holds every edge target to the id pattern and every tag
// to one word.
func (Symbol) JSONSchemaExtend(s *jsonschema.Schema) {
	for _, key := range SymbolEdgeKeys {
		if p, ok := s.Properties.Get(key); ok && p.Items != nil {
			p.Items.Pattern = symbolIDPattern
			p.Items.MinLength = &symbolMinLen
			p.Items.MaxLength = &symbolMaxLen
		}
	}
	if p, ok := s.Properties.Get("tags"); ok && p.Items != nil {
		p.Items.Pattern = `^\S+$`
		p.Items.MaxLength = &symbolMaxLen
	}
}

const symbolIDPattern = `^[A-Za-z0-9][A-Za-z0-9._-]*$`

var (
	symbolMinLen uint64 = 1
	symbolMaxLen uint64 = 255
)
