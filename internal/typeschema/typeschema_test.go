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
