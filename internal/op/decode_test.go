package op

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

type params struct {
	Entities []struct {
		ID string `json:"id"`
	} `json:"entities"`
	Name string `json:"name"`
}

func TestDecodeStrict(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, raw, want string
	}{
		{"duplicate key at the top", `{"entities":[],"entities":[{"id":"req-1"}]}`, "/entities: is given twice"},
		{"duplicate key deep", `{"entities":[{"id":"a","id":"b"}]}`, "/entities/0/id: is given twice"},
		{"NUL in a value", `{"name":"a\u0000b"}`, "/name: holds a NUL character"},
		{"NUL in a list value", `{"entities":[{"id":"x\u0000"}]}`, "/entities/0/id: holds a NUL character"},
		{"invalid UTF-8", "{\"name\":\"caf\xe9\"}", "not valid UTF-8 (at byte 12)"},
		{"unknown field", `{"name":"a","colour":"red"}`, "colour: is not a parameter of this operation"},
		{"wrong type", `{"name":7}`, "name: is number, not string"},
		{"not an object", `[1,2]`, "must be a JSON object"},
		{"trailing data", `{"name":"a"} {"name":"b"}`, "data after the JSON object"},
		{"truncated", `{"entities":[`, "unexpected end of input"},
		{"empty", ``, "unexpected end of input"},
		{"oversize", `{"name":"` + strings.Repeat("x", MaxParams) + `"}`, "the limit is 8388608"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var p params
			err := DecodeStrict([]byte(tc.raw), &p)
			e, ok := err.(*Error)
			if !ok || e.Code != CodeValidation || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("DecodeStrict(%.60q) = %v; want a VALIDATION_ERROR containing %q", tc.raw, err, tc.want)
			}
		})
	}
	var p params
	if err := DecodeStrict([]byte(`{"entities":[{"id":"REQ-1"},{"id":"REQ-2"}],"name":"ünïcode ok"}`), &p); err != nil || len(p.Entities) != 2 || p.Name != "ünïcode ok" {
		t.Fatalf("valid object: %+v, %v", p, err)
	}
}

func TestErrorOf(t *testing.T) {
	t.Parallel()
	if e := ErrorOf(Invalid("x", "bad")); e.Code != CodeValidation || e.Message != "x: bad" {
		t.Fatalf("%+v", e)
	}
	if e := ErrorOf(strings.NewReader("").UnreadByte()); e.Code != CodeInternal {
		t.Fatalf("%+v", e)
	}
	env := Wrap(nil, Conflict("atom", "map-x", 1, 3))
	if env.Success || env.Error.Details["currentVersion"] != int64(3) {
		t.Fatalf("%+v", env)
	}
}

// TestDecodeWholeNumbers: JSON Schema's integer is any number with no
// fraction, so 1.0 and 1e2 pass a tool's input schema; the decoder takes
// them too (as 1 and 100) instead of refusing what the schema accepted.
// A fraction, or a whole number past the field's range, is refused in
// JSON's words.
func TestDecodeWholeNumbers(t *testing.T) {
	t.Parallel()
	type ints struct {
		N    int      `json:"n"`
		M    *int64   `json:"m"`
		F    float64  `json:"f"`
		List []uint16 `json:"list"`
	}
	var p ints
	if err := DecodeStrict([]byte(`{"n":1.0,"m":1e2,"f":2.5,"list":[3.0,4E1]}`), &p); err != nil {
		t.Fatalf("whole numbers in fraction or exponent form: %v", err)
	}
	if p.N != 1 || p.M == nil || *p.M != 100 || p.F != 2.5 || len(p.List) != 2 || p.List[0] != 3 || p.List[1] != 40 {
		t.Fatalf("decoded %+v", p)
	}
	for raw, want := range map[string]string{
		`{"n":1.5}`:                 "n: is number 1.5, not integer",
		`{"n":1e400}`:               "n: is number",
		`{"m":9223372036854775808}`: "m: is number 9223372036854775808, not integer",
		`{"list":[70000]}`:          "list: is number 70000, not integer",
		`{"n":"7"}`:                 "n: is string, not integer",
	} {
		var q ints
		err := DecodeStrict([]byte(raw), &q)
		e, ok := err.(*Error)
		if !ok || e.Code != CodeValidation || !strings.Contains(e.Message, want) {
			t.Errorf("DecodeStrict(%s) = %v; want a VALIDATION_ERROR containing %q", raw, err, want)
		}
	}
}

// Go's decode takes a key for a struct field whatever its case, so two
// keys of a parameter object that differ only in case are one key given
// twice, and the last would silently win (found by the kk serve QA run,
// for HTTP bodies; the CLI's --input and the MCP tools decode the same
// way). A document of any shape (CheckDocument) may hold maps whose keys
// differ in case.
func TestKeysDifferingInCaseAreGivenTwice(t *testing.T) {
	type params struct {
		Title string   `json:"title"`
		Tags  []string `json:"tags"`
		Edges []struct {
			To string `json:"to"`
		} `json:"edges"`
	}
	for _, c := range []struct{ raw, want string }{
		{`{"title":"x","Title":"y"}`, "/Title: is given twice (as title and Title)"},
		{`{"tags":["a"],"tagſ":["b"]}`, "/tagſ: is given twice (as tags and tagſ)"},
		{`{"edges":[{"to":"a","TO":"b"}]}`, "/edges/0/TO: is given twice (as to and TO)"},
	} {
		var p params
		err := DecodeStrict([]byte(c.raw), &p)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("DecodeStrict(%s) = %v; want %q", c.raw, err, c.want)
		}
	}
	var p params
	if err := DecodeStrict([]byte(`{"Title":"x","TAGS":["a"]}`), &p); err != nil || p.Title != "x" || len(p.Tags) != 1 {
		t.Errorf("keys in another case alone: %+v, %v", p, err)
	}
	if err := CheckDocument([]byte(`{"docs":{"README.md":1,"readme.md":2}}`)); err != nil {
		t.Errorf("a document's map keys differing in case: %v", err)
	}
}

// A config.yaml kk cannot use is CONFIG_ERROR with its file and line, not
// INTERNAL_ERROR.
func TestErrorOfConfig(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(filepath.Dir(k.ConfigPath()), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.ConfigPath(), []byte("schema_version: 1\ncurationThreshold: [\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := k.LoadConfig()
	e := ErrorOf(fmt.Errorf("searching: %w", err))
	if e.Code != CodeConfig || e.Details["file"] != ".ai/kenkeep/config.yaml" || e.Details["line"] != 2 ||
		e.Message != "searching: .ai/kenkeep/config.yaml: invalid YAML: line 2: did not find expected node content" {
		t.Errorf("%+v", e)
	}
}
