package yamlstyle

import (
	"math/rand"
	"strings"
	"testing"
	"unicode/utf8"

	yaml "go.yaml.in/yaml/v3"
)

// roundTripDoc is what checkRoundTrip decodes. Decoding scalars into Go
// strings makes yaml.v3 hand back their text whatever type it would resolve
// them to, so the comparison checks quoting, escaping and folding, not the
// YAML 1.1-versus-1.2 type resolution on which js-yaml and yaml.v3 differ
// (js-yaml 3 writes "0o17" plain; yaml.v3 reads it as an integer).
type roundTripDoc struct {
	Top    string              `yaml:"top"`
	List   []string            `yaml:"list"`
	Nested []map[string]string `yaml:"nested"`
	Deep   map[string][]string `yaml:"deep"`
}

// checkRoundTrip marshals s as a value at several depths and as a key, and
// verifies that yaml.v3 reads every copy back unchanged.
func checkRoundTrip(t *testing.T, s string) {
	t.Helper()
	doc := Map{
		{"top", s},
		{"list", []string{s, "x"}},
		{"nested", []Map{{{"v", s}, {"w", "x"}}}},
		{"deep", Map{{"d", []string{s}}}},
	}
	out, err := Marshal(doc)
	if err != nil {
		t.Fatalf("Marshal(%q): %v", s, err)
	}
	var got roundTripDoc
	if err := yaml.Unmarshal(out, &got); err != nil {
		t.Fatalf("value %q: yaml.v3 cannot read\n%s\nerror: %v", s, out, err)
	}
	if got.Top != s || len(got.List) != 2 || got.List[0] != s || len(got.Nested) != 1 ||
		got.Nested[0]["v"] != s || len(got.Deep["d"]) != 1 || got.Deep["d"][0] != s {
		t.Fatalf("value %q did not survive:\n%s\ndecoded %#v", s, out, got)
	}

	if !keyRoundTrips(s) {
		return
	}
	// As keys, at the top level and in a nested mapping. yaml.Node keeps
	// the key text whatever type yaml.v3 would give it.
	out, err = Marshal(Map{{s, "v"}, {"z", Map{{s, "w"}}}})
	if err != nil {
		t.Fatalf("Marshal(key %q): %v", s, err)
	}
	var node yaml.Node
	if err := yaml.Unmarshal(out, &node); err != nil {
		t.Fatalf("key %q: yaml.v3 cannot read\n%s\nerror: %v", s, out, err)
	}
	root := node.Content[0]
	if len(root.Content) != 4 || root.Content[0].Value != s || root.Content[1].Value != "v" {
		t.Fatalf("key %q did not survive:\n%s", s, out)
	}
	inner := root.Content[3]
	if len(inner.Content) != 2 || inner.Content[0].Value != s || inner.Content[1].Value != "w" {
		t.Fatalf("nested key %q did not survive:\n%s", s, out)
	}
}

// keyRoundTrips excludes the key "z", which the check itself uses, and the
// keys that js-yaml 3 writes in a form no YAML parser reads back: a plain
// top-level key starting with "..." and a blank is taken for a document end
// marker.
func keyRoundTrips(s string) bool {
	return s != "z" && !strings.HasPrefix(s, "... ")
}

// fragments bias random strings towards characters and substrings that
// change how a scalar must be written.
var fragments = []string{
	"a", "Z", "0", "word", "é", "中", "😀", " ", "  ", "\n", "\n\n", "\t", "\r", "\r\n",
	"\x00", "\x01", "\x1b", "\x7f", "\u0085", "\u00a0", "\u2028", "\u2029", "\ufeff", "\ufffe",
	":", ": ", "#", " #", "'", "\"", "\\", "-", "- ", "--- ", "...", "?", ",", "[", "]", "{", "}",
	"&", "*", "!", "|", ">", "%", "@", "`", "=", "~", "<<",
	"true", "null", "yes", "0x1F", "0o17", "1_000", "1:30", ".5", "1e5", "2024-01-02",
	"2026-05-01T10:00:00.000Z", "https://example.com/a?b=c#d",
}

func randomString(r *rand.Rand) string {
	var b strings.Builder
	switch r.Intn(4) {
	case 0: // a few fragments
		for i := r.Intn(6); i >= 0; i-- {
			b.WriteString(fragments[r.Intn(len(fragments))])
		}
	case 1: // prose long enough to fold, with occasional breaks and indents
		for i := 10 + r.Intn(50); i >= 0; i-- {
			switch r.Intn(12) {
			case 0:
				b.WriteString("\n")
			case 1:
				b.WriteString("\n  ")
			case 2:
				b.WriteString("  ")
			case 3:
				b.WriteString(fragments[r.Intn(len(fragments))])
			default:
				b.WriteString(" ")
			}
			b.WriteString(strings.Repeat("w", 1+r.Intn(10)))
		}
	case 2: // a long run without spaces
		for i := 40 + r.Intn(120); i >= 0; i-- {
			b.WriteByte("abc/%:.-_"[r.Intn(9)])
		}
	default: // arbitrary code points
		for i := r.Intn(12); i >= 0; i-- {
			var c rune
			switch r.Intn(4) {
			case 0:
				c = rune(r.Intn(0x80))
			case 1:
				c = rune(r.Intn(0x800))
			case 2:
				c = rune(r.Intn(0x10000))
			default:
				c = rune(r.Intn(0x110000))
			}
			if utf8.ValidRune(c) {
				b.WriteRune(c)
			}
		}
	}
	return b.String()
}

func TestRoundTripRandomStrings(t *testing.T) {
	r := rand.New(rand.NewSource(20260501))
	n := 20000
	if testing.Short() {
		n = 2000
	}
	for i := 0; i < n; i++ {
		checkRoundTrip(t, randomString(r))
	}
}

func TestRoundTripSpecialStrings(t *testing.T) {
	for _, s := range fragments {
		checkRoundTrip(t, s)
	}
	for _, tc := range scalarTests {
		if s, ok := tc.in.(string); ok {
			checkRoundTrip(t, s)
		}
	}
}

func FuzzMarshalRoundTrip(f *testing.F) {
	for _, s := range []string{
		"", "plain", "a: b", "#x", " lead", "trail ", "true", "0x1F", "2024-01-02", "yes",
		"line1\nline2", "keep\n\n", "\n indented", "tab\there", "emoji 😀", "\u2028", "\ufeff",
		summary, strings.Repeat("long ", 40), strings.Repeat("x", 100),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if !utf8.ValidString(s) {
			if _, err := Marshal(Map{{"k", s}}); err == nil {
				t.Fatalf("Marshal accepted invalid UTF-8 %q", s)
			}
			return
		}
		checkRoundTrip(t, s)
	})
}
