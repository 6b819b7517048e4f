package schema

import (
	"errors"
	"reflect"
	"strings"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/extract"
)

// The symbol manifest the symbol extractor reads (internal/extract), which
// checks every manifest against this schema before use.
var symbolEntries = []Entry{
	{
		Name:        extract.SymbolManifestSchema,
		Title:       "kk symbol manifest",
		Description: "A symbol manifest (.ai/kenkeep/symbols.json or .yaml by default): code symbols and their implements, covered_by, constrained_by, publishes and consumes edges; unknown keys are an error.",
		Type:        reflect.TypeFor[contracts.SymbolManifest](),
	},
}

func init() {
	extract.RegisterManifestCheck(checkSymbolManifest)
}

// checkSymbolManifest parses a manifest and validates it. A schema failure
// names the first failing JSON pointer as the field and lists the others
// in the message.
func checkSymbolManifest(src []byte) (any, error) {
	doc, err := ParseDocument(src)
	if err != nil {
		return nil, &extract.Error{Msg: err.Error()}
	}
	err = Validate(extract.SymbolManifestSchema, doc)
	if err == nil {
		return doc, nil
	}
	var ve *ValidationError
	if !errors.As(err, &ve) || len(ve.Failures) == 0 {
		return nil, err
	}
	first := ve.Failures[0]
	msg := first.Message
	if len(ve.Failures) > 1 {
		rest := make([]string, len(ve.Failures)-1)
		for i, f := range ve.Failures[1:] {
			rest[i] = f.String()
		}
		msg += " (also " + strings.Join(rest, "; ") + ")"
	}
	field := first.Pointer
	if field == "" {
		field = "(root)"
	}
	return nil, &extract.Error{Field: field, Msg: msg}
}
