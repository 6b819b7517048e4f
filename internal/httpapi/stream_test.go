package httpapi

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestDocWriterMatchesJSON: notes written a chunk at a time are the bytes
// encoding/json writes for the whole (HTML left unescaped), whatever the
// text and wherever a chunk ends.
func TestDocWriterMatchesJSON(t *testing.T) {
	long := strings.Repeat("é", encodeChunk) // two bytes a character: chunks end mid-character
	texts := []string{
		"",
		"plain",
		`quotes " and \ backslash`,
		"controls \x01\x1f\t\n\r\b\f and <html> & 'x'",
		"separators \u2028 \u2029",
		"invalid \xff\xfe UTF-8 \xe2\x82",
		long,
		"x" + long + "\x01",
		strings.Repeat("\xe2\x82", encodeChunk), // invalid sequences across chunks
		strings.Repeat("a\"\n", encodeChunk),
	}
	var docs []Doc
	for i, text := range texts {
		docs = append(docs, Doc{Path: "p/" + strings.Repeat("\u2028", i) + ".md", Content: text})
	}
	want := func(v any) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.String()
	}
	for _, d := range docs {
		var b bytes.Buffer
		w := newDocWriter(&b)
		w.doc(d.Path, d.Content)
		w.raw("\n")
		if got := b.String(); got != want(d) {
			t.Errorf("content %.40q: got %.200q\nwant %.200q", d.Content, got, want(d))
		}
	}
}
