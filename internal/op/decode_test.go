package op

import (
	"strings"
	"testing"
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
