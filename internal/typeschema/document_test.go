package typeschema

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

func TestParseDocument(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want any
	}{
		{"json object", `{"a": 1, "b": [true, null, "x"], "c": 1.5}`,
			map[string]any{"a": json.Number("1"), "b": []any{true, nil, "x"}, "c": json.Number("1.5")}},
		{"json with BOM", "\xEF\xBB\xBF[1]", []any{json.Number("1")}},
		{"yaml scalars", "i: 7\nf: 1.5\nb: yes\nt: true\nn: ~\ns: 'x'\nhex: 0x1F\ninf: .inf\n",
			map[string]any{"i": int64(7), "f": 1.5, "b": "yes", "t": true, "n": nil, "s": "x", "hex": int64(31), "inf": ".inf"}},
		{"yaml date stays a string", "stale_after: 2026-01-02\nat: 2026-11-21T10:00:00Z\n",
			map[string]any{"stale_after": "2026-01-02", "at": "2026-11-21T10:00:00Z"}},
		{"yaml keys as written", "1: one\ntrue: yes\n", map[string]any{"1": "one", "true": "yes"}},
		{"yaml starting with ---", "---\na: 1\n", map[string]any{"a": int64(1)}},
		{"merge keys", "base: &b {x: 1, y: 2}\nitem:\n  <<: *b\n  y: 3\n",
			map[string]any{"base": map[string]any{"x": int64(1), "y": int64(2)}, "item": map[string]any{"x": int64(1), "y": int64(3)}}},
		{"front matter", "---\ntitle: T\nwhen: 2026-01-02\n---\n# Body\n\nkey: not read\n",
			map[string]any{"title": "T", "when": "2026-01-02"}},
		{"front matter crlf", "---\r\ntitle: T\r\n---\r\nbody\r\n", map[string]any{"title": "T"}},
		{"empty front matter", "---\n---\nbody\n", map[string]any{}},
		{"yaml scalar document", "just text\n", "just text"},
	}
	for _, tt := range tests {
		got, err := ParseDocument([]byte(tt.src))
		if err != nil {
			t.Errorf("%s: %v", tt.name, err)
			continue
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s:\n got %#v\nwant %#v", tt.name, got, tt.want)
		}
	}
}

func TestParseDocumentErrors(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want string
		line int
	}{
		{"empty", " \n\n", "the document is empty", 0},
		{"bad json", "{\n  \"a\": 1\n  \"b\": 2\n", "invalid JSON: line 3: invalid character '\"' after object key:value pair", 3},
		{"truncated json", "[1, 2", "invalid JSON: line 1: unexpected end of input", 1},
		{"bad yaml", "a: 1\nb: 2\nc: d: e\n", "invalid YAML: line 3: mapping values are not allowed in this context", 3},
		{"tab indent", "a:\n\tb: 1\n", "invalid YAML: line 2: found character that cannot start any token", 2},
		{"duplicate key", "a: 1\nb: 2\na: 3\n", `invalid YAML: line 3: key "a" appears twice`, 3},
		{"null key", "~: 1\n", `invalid YAML: line 1: key "~" must be a string (quote it)`, 1},
		{"collection key", "? [a, b]\n: 1\n", "invalid YAML: line 1: keys must be strings, not a list or mapping", 1},
		{"front matter bad yaml", "---\ntitle: T\ntags: a: b\n---\nbody\n", "invalid front matter: line 3: mapping values are not allowed in this context", 3},
		{"front matter not a mapping", "---\n- a\n---\n", "invalid front matter: front matter must be a mapping of keys to values", 0},
		{"front matter duplicate", "---\ntitle: A\ntitle: B\n---\n", `invalid front matter: line 3: key "title" appears twice`, 3},
		{"bad merge", "a: &a [1]\nb:\n  <<: *a\n", "invalid YAML: line 1: a merge key (<<) takes a mapping or a list of mappings", 1},
	}
	for _, tt := range tests {
		_, err := ParseDocument([]byte(tt.src))
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Errorf("%s: err = %v, want *ParseError", tt.name, err)
			continue
		}
		if tt.want != "" && err.Error() != tt.want {
			t.Errorf("%s:\n got %q\nwant %q", tt.name, err.Error(), tt.want)
		}
		if pe.Line != tt.line && tt.want != "" {
			t.Errorf("%s: line %d, want %d", tt.name, pe.Line, tt.line)
		}
	}
}

func TestParseDocumentSecondDocument(t *testing.T) {
	t.Parallel()
	// "a: 1\n---\n..." does not start with ---, so it is YAML with two
	// documents.
	_, err := ParseDocument([]byte("a: 1\n---\nb: 2\n"))
	if err == nil || err.Error() != "invalid YAML: line 2: a second YAML document starts here; give one document" {
		t.Fatalf("err = %v", err)
	}
}

func TestAliasBomb(t *testing.T) {
	t.Parallel()
	src := `a: &a ["x","x","x","x","x","x","x","x","x","x"]
b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a,*a]
c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b,*b]
d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c,*c]
e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d,*d]
f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e,*e]
g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f,*f]
`
	_, err := ParseDocument([]byte(src))
	if err == nil || !strings.Contains(err.Error(), "too many alias expansions") {
		t.Fatalf("err = %v", err)
	}
}
