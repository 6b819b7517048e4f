package mcpserver

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/kk-project/kk/internal/graph"
)

// unions are the interface types among the core's results, with the types
// their values have.
var unions = map[reflect.Type][]reflect.Type{
	reflect.TypeFor[graph.EntityView](): {reflect.TypeFor[graph.AtomView](), reflect.TypeFor[graph.MoleculeView]()},
}

// outputSchema is the output schema of a tool whose operation returns
// values of the given Go types: the envelope {"success": true, "data":
// <one of them>} that a successful call returns as its structured content
// (a failed call is a tool error, whose text is the error envelope). The
// types are described as the go-sdk's mcp.AddTool[In, Out] describes its
// Out type (google/jsonschema-go): every property a value can have, the
// ones encoding/json always writes required, null allowed where a Go nil
// gives it.
func outputSchema(results []reflect.Type) (*jsonschema.Schema, error) {
	opts := &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{}}
	for iface, types := range unions {
		u := &jsonschema.Schema{}
		for _, t := range types {
			s, err := jsonschema.ForType(t, nil)
			if err != nil {
				return nil, err
			}
			u.AnyOf = append(u.AnyOf, s)
		}
		opts.TypeSchemas[iface] = u
	}
	var alts []*jsonschema.Schema
	for _, t := range results {
		for t.Kind() == reflect.Pointer {
			t = t.Elem() // an operation returns a value on success, never nil
		}
		s, err := jsonschema.ForType(t, opts)
		if err != nil {
			return nil, err
		}
		alts = append(alts, s)
	}
	data := alts[0]
	if len(alts) > 1 {
		data = &jsonschema.Schema{AnyOf: alts}
	}
	return &jsonschema.Schema{
		Type:     "object",
		Required: []string{"success", "data"},
		Properties: map[string]*jsonschema.Schema{
			"success": {Type: "boolean", Const: jsonschema.Ptr[any](true)},
			"data":    data,
		},
		PropertyOrder:        []string{"success", "data"},
		AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
	}, nil
}

// OutputSchema returns the output schema of tool t as tools/list gives it.
func OutputSchema(t Tool) (json.RawMessage, error) {
	s, err := outputSchema(t.Run.results)
	if err != nil {
		return nil, fmt.Errorf("tool %s: output schema: %w", t.Name, err)
	}
	return json.Marshal(s)
}
