package typeschema

import (
	"reflect"
	"strings"
	"testing"
)

type probe struct {
	Name string `json:"name" jsonschema:"minLength=1"`
}

// A schema is compiled once, whatever the number of documents it checks.
func TestCompiledOnce(t *testing.T) {
	t.Parallel()
	s := New(Entry{Name: "probe", Title: "probe", Description: "a probe", Type: reflect.TypeFor[probe]()})
	for range 3 {
		_ = s.Validate(map[string]any{})
	}
	first := s.c.schema
	if err := s.Validate(map[string]any{"name": "x"}); err != nil {
		t.Fatal(err)
	}
	if first == nil || s.c.schema != first {
		t.Fatal("the schema was compiled again")
	}
	if err := s.Validate(map[string]any{"name": ""}); err == nil || !strings.Contains(err.Error(), "/name") {
		t.Fatalf("an empty name: %v; want a failure at /name", err)
	}
}

func TestCompilerLoadsNothing(t *testing.T) {
	t.Parallel()
	for _, ref := range []string{"https://example.com/other.json", "other.json", "file:///etc/passwd"} {
		src := `{"$schema":"https://json-schema.org/draft/2020-12/schema","$ref":"` + ref + `"}`
		_, err := compileSchema("probe", []byte(src))
		if err == nil || !strings.Contains(err.Error(), "kk schemas do not load other documents") {
			t.Errorf("$ref %s: err = %v, want a refusal", ref, err)
		}
	}
}

// An object-or-null value that fails as an object is reported by what is
// wrong inside the object, not also by "want null"; a value neither branch
// takes is reported by both.
func TestAnyOfReportsTheBranchTheValueTakes(t *testing.T) {
	t.Parallel()
	src := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"node":{"anyOf":[
		{"type":"null"},
		{"type":"object","properties":{"title":{"type":"string"}},"required":["title"],"additionalProperties":false}]}}}`
	sch, err := compileSchema("probe", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		doc  any
		want []string
	}{
		{map[string]any{"node": map[string]any{"title": "t", "extra": 1.0}}, []string{"/node/extra: is not allowed here (unknown property)"}},
		{map[string]any{"node": map[string]any{}}, []string{"/node/title: is required"}},
		{map[string]any{"node": 5.0}, []string{"/node: got number, want null", "/node: got number, want object"}},
	} {
		verr := sch.Validate(tc.doc)
		if verr == nil {
			t.Fatalf("%v: valid", tc.doc)
		}
		ve, ok := newValidationError("probe", verr).(*ValidationError)
		if !ok {
			t.Fatalf("%v: %v", tc.doc, verr)
		}
		var got []string
		for _, f := range ve.Failures {
			got = append(got, f.String())
		}
		if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
			t.Errorf("%v: failures\n%s\nwant\n%s", tc.doc, strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
		}
	}
}
