package typeschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// compiled is one registry entry's generated JSON and compiled validator.
type compiled struct {
	entry Entry

	genOnce sync.Once
	json    []byte
	genErr  error

	compOnce sync.Once
	schema   *jsonschema.Schema
	compErr  error
}

func (c *compiled) generate() error {
	c.genOnce.Do(func() {
		c.json, c.genErr = generate(c.entry)
		if c.genErr != nil {
			c.genErr = fmt.Errorf("%w: %v", ErrInvalidSchema, c.genErr)
		}
	})
	return c.genErr
}

func (c *compiled) compile() (*jsonschema.Schema, error) {
	if err := c.generate(); err != nil {
		return nil, err
	}
	c.compOnce.Do(func() {
		c.schema, c.compErr = compileSchema(c.entry.Name, c.json)
		if c.compErr != nil {
			c.compErr = fmt.Errorf("%w: schema %s: %v", ErrInvalidSchema, c.entry.Name, c.compErr)
		}
	})
	return c.schema, c.compErr
}

// noLoader refuses every URL: kk schemas are self-contained, and the
// compiler must never read a file or open a connection.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("kk schemas do not load other documents (%s)", url)
}

func compileSchema(name string, data []byte) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	c.DefaultDraft(jsonschema.Draft2020)
	// "format" (such as date) is checked, not just noted.
	c.AssertFormat()
	if err := c.AddResource(URI(name), doc); err != nil {
		return nil, err
	}
	return c.Compile(URI(name))
}

// jsonShaped returns doc if it holds only JSON-shaped values, and
// otherwise converts it through encoding/json.
func jsonShaped(doc any) (any, error) {
	if isJSONShaped(doc) {
		return doc, nil
	}
	data, err := json.Marshal(doc)
	if err != nil {
		return nil, fmt.Errorf("document cannot be represented as JSON: %w", err)
	}
	return jsonschema.UnmarshalJSON(bytes.NewReader(data))
}

func isJSONShaped(v any) bool {
	switch x := v.(type) {
	case nil, bool, string, json.Number, float64, int, int64:
		return true
	case []any:
		for _, e := range x {
			if !isJSONShaped(e) {
				return false
			}
		}
		return true
	case map[string]any:
		for _, e := range x {
			if !isJSONShaped(e) {
				return false
			}
		}
		return true
	}
	return false
}

// Failure is one way a document breaks a schema.
type Failure struct {
	// Pointer is the JSON Pointer (RFC 6901) of the failing value; "" is
	// the whole document.
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

// String renders the failure as "<pointer>: <message>", showing the whole
// document as "(root)".
func (f Failure) String() string {
	p := f.Pointer
	if p == "" {
		p = "(root)"
	}
	return p + ": " + f.Message
}

// ValidationError is a document that does not match a schema. It lists
// every failure, sorted by pointer.
type ValidationError struct {
	Schema   string
	Failures []Failure
}

func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "does not match schema %s:", e.Schema)
	for _, f := range e.Failures {
		b.WriteString("\n  ")
		b.WriteString(f.String())
	}
	return b.String()
}

var printer = message.NewPrinter(language.English)

func newValidationError(name string, err error) error {
	ve, ok := err.(*jsonschema.ValidationError)
	if !ok {
		return fmt.Errorf("validating against schema %s: %w", name, err)
	}
	var out []Failure
	collect(ve, &out)
	slices.SortFunc(out, compareFailures)
	out = slices.Compact(out)
	return &ValidationError{Schema: name, Failures: out}
}

// collect walks the error tree and keeps its leaves, the failures that
// name a concrete problem. Missing and unknown properties become one
// failure per property, at the property's own pointer.
func collect(e *jsonschema.ValidationError, out *[]Failure) {
	if len(e.Causes) > 0 {
		causes := e.Causes
		switch e.ErrorKind.(type) {
		case *kind.AnyOf, *kind.OneOf:
			// A branch that only says the value has another type is not
			// the branch the value was written for, when another branch
			// takes it and fails deeper ({"proposed_node": {...}} against
			// object-or-null): report the others.
			var deeper []*jsonschema.ValidationError
			for _, c := range causes {
				if !onlyTypeMismatch(c) {
					deeper = append(deeper, c)
				}
			}
			if len(deeper) > 0 {
				causes = deeper
			}
		}
		for _, c := range causes {
			collect(c, out)
		}
		return
	}
	at := pointer(e.InstanceLocation)
	switch k := e.ErrorKind.(type) {
	case *kind.Required:
		for _, p := range k.Missing {
			*out = append(*out, Failure{Pointer: at + "/" + escapeToken(p), Message: "is required"})
		}
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			*out = append(*out, Failure{Pointer: at + "/" + escapeToken(p), Message: "is not allowed here (unknown property)"})
		}
	default:
		*out = append(*out, Failure{Pointer: at, Message: e.ErrorKind.LocalizedString(printer)})
	}
}

// onlyTypeMismatch reports whether e's leaves are all type mismatches at
// e's own location.
func onlyTypeMismatch(e *jsonschema.ValidationError) bool {
	if len(e.Causes) == 0 {
		_, ok := e.ErrorKind.(*kind.Type)
		return ok
	}
	for _, c := range e.Causes {
		if !slices.Equal(c.InstanceLocation, e.InstanceLocation) || !onlyTypeMismatch(c) {
			return false
		}
	}
	return true
}

func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(escapeToken(t))
	}
	return b.String()
}

func escapeToken(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

// compareFailures orders failures by pointer, comparing array indexes as
// numbers (/tags/2 before /tags/10), then by message.
func compareFailures(a, b Failure) int {
	at, bt := strings.Split(a.Pointer, "/"), strings.Split(b.Pointer, "/")
	for i := 0; i < len(at) && i < len(bt); i++ {
		if at[i] == bt[i] {
			continue
		}
		an, aerr := strconv.Atoi(at[i])
		bn, berr := strconv.Atoi(bt[i])
		if aerr == nil && berr == nil {
			return an - bn
		}
		return strings.Compare(at[i], bt[i])
	}
	if len(at) != len(bt) {
		return len(at) - len(bt)
	}
	return strings.Compare(a.Message, b.Message)
}
