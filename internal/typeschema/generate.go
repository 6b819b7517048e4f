package typeschema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/invopop/jsonschema"
)

// BaseURI prefixes every schema's $id. The .invalid domain never resolves,
// so nothing can ever be fetched from it; the validator loads nothing.
const BaseURI = "https://kk.invalid/schemas/"

// URI returns the $id of the named schema.
func URI(name string) string { return BaseURI + name + ".json" }

// generate reflects the entry's Go type into a draft 2020-12 schema and
// renders it as indented JSON with keywords in a fixed, readable order.
func generate(e Entry) ([]byte, error) {
	r := &jsonschema.Reflector{
		// The root is the type itself ("type": "object" for a struct), and
		// nested types are written in place: every schema stands alone.
		ExpandedStruct: true,
		DoNotReference: true,
		Anonymous:      true,
	}
	s := r.ReflectFromType(e.Type)
	s.ID = jsonschema.ID(URI(e.Name))
	s.Title = e.Title
	s.Description = e.Description
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", e.Name, err)
	}
	v, err := decodeOrdered(raw)
	if err != nil {
		return nil, fmt.Errorf("schema %s: %w", e.Name, err)
	}
	var b bytes.Buffer
	writeValue(&b, v, 0, true)
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// object is a JSON object that remembers its key order.
type object struct {
	keys []string
	vals map[string]any
}

// decodeOrdered decodes JSON keeping object key order and number text.
func decodeOrdered(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("unexpected data after the schema")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch t := tok.(type) {
	case json.Delim:
		switch t {
		case '{':
			o := &object{vals: map[string]any{}}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				k := kt.(string)
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				if _, dup := o.vals[k]; !dup {
					o.keys = append(o.keys, k)
				}
				o.vals[k] = v
			}
			_, err := dec.Token()
			return o, err
		case '[':
			a := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				a = append(a, v)
			}
			_, err := dec.Token()
			return a, err
		}
		return nil, fmt.Errorf("unexpected %v", t)
	default:
		return t, nil
	}
}

// keywordOrder is the order of keywords in a schema object: identity and
// prose first, then the type and its constraints, then nested schemas.
// Keywords not listed follow in alphabetical order.
var keywordOrder = []string{
	"$schema", "$id", "$ref", "title", "description", "$comment",
	"type", "const", "enum", "format", "pattern", "minLength", "maxLength",
	"minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum", "multipleOf",
	"contentEncoding", "contentMediaType",
	"required", "properties", "patternProperties", "additionalProperties", "propertyNames",
	"minProperties", "maxProperties", "dependentRequired", "dependentSchemas",
	"items", "prefixItems", "minItems", "maxItems", "uniqueItems", "contains", "minContains", "maxContains",
	"allOf", "anyOf", "oneOf", "not", "if", "then", "else",
	"default", "examples", "deprecated", "readOnly", "writeOnly", "$defs",
}

// Keywords whose value maps names to schemas, and keywords whose value is
// data rather than a schema.
var (
	schemaMaps = []string{"properties", "patternProperties", "$defs", "dependentSchemas"}
	dataValues = []string{"const", "enum", "default", "examples", "required", "dependentRequired"}
)

func keywordRank(k string) int {
	if i := slices.Index(keywordOrder, k); i >= 0 {
		return i
	}
	return len(keywordOrder)
}

// writeValue writes v as JSON indented by two spaces per level, without
// HTML escaping. isSchema says v is a schema object whose keywords are
// reordered; property names, data and the values of keywords kk does not
// know keep their order.
func writeValue(b *bytes.Buffer, v any, depth int, isSchema bool) {
	switch x := v.(type) {
	case *object:
		if len(x.keys) == 0 {
			b.WriteString("{}")
			return
		}
		keys := slices.Clone(x.keys)
		if isSchema {
			slices.SortStableFunc(keys, func(a, c string) int {
				if ra, rc := keywordRank(a), keywordRank(c); ra != rc {
					return ra - rc
				}
				return strings.Compare(a, c)
			})
		}
		b.WriteString("{\n")
		for i, k := range keys {
			indent(b, depth+1)
			writeString(b, k)
			b.WriteString(": ")
			if val := x.vals[k]; isSchema && slices.Contains(schemaMaps, k) {
				writeSchemaMap(b, val, depth+1)
			} else {
				sub := isSchema && slices.Contains(keywordOrder, k) && !slices.Contains(dataValues, k)
				writeValue(b, val, depth+1, sub)
			}
			if i < len(keys)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(b, depth)
		b.WriteByte('}')
	case []any:
		if len(x) == 0 {
			b.WriteString("[]")
			return
		}
		b.WriteString("[\n")
		for i, e := range x {
			indent(b, depth+1)
			writeValue(b, e, depth+1, isSchema)
			if i < len(x)-1 {
				b.WriteByte(',')
			}
			b.WriteByte('\n')
		}
		indent(b, depth)
		b.WriteByte(']')
	case string:
		writeString(b, x)
	case json.Number:
		b.WriteString(x.String())
	case bool:
		fmt.Fprint(b, x)
	case nil:
		b.WriteString("null")
	}
}

// writeSchemaMap writes an object of name -> schema in its own key order.
func writeSchemaMap(b *bytes.Buffer, v any, depth int) {
	o, ok := v.(*object)
	if !ok {
		writeValue(b, v, depth, false)
		return
	}
	if len(o.keys) == 0 {
		b.WriteString("{}")
		return
	}
	b.WriteString("{\n")
	for i, k := range o.keys {
		indent(b, depth+1)
		writeString(b, k)
		b.WriteString(": ")
		writeValue(b, o.vals[k], depth+1, true)
		if i < len(o.keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	indent(b, depth)
	b.WriteByte('}')
}

func writeString(b *bytes.Buffer, s string) {
	var sb bytes.Buffer
	enc := json.NewEncoder(&sb)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	b.Write(bytes.TrimSuffix(sb.Bytes(), []byte("\n")))
}

func indent(b *bytes.Buffer, depth int) {
	for range depth {
		b.WriteString("  ")
	}
}
