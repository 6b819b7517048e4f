package node

import (
	"strings"
	"testing"
)

func TestPhrasingsRoundTrip(t *testing.T) {
	with := strings.Replace(v3Leaf, "kk_confidence: high\n", "kk_confidence: high\nkk_phrasings:\n  - why is my error message missing the file name?\n  - how do I add context to a returned error\n", 1)
	n, err := Parse("errors/practice-wrap-errors-with-context.md", []byte(with))
	if err != nil {
		t.Fatal(err)
	}
	if len(n.Phrasings) != 2 || n.Phrasings[1] != "how do I add context to a returned error" {
		t.Fatalf("phrasings %q", n.Phrasings)
	}
	res := resolver(map[string]string{"map-error-types": "errors/map-error-types.md"})
	out, err := n.Render(res)
	if err != nil || string(out) != with {
		t.Fatalf("unchanged leaf did not round-trip (%v):\n%s", err, out)
	}

	// Cleared, the key goes; a leaf without the key has none.
	n.Phrasings = nil
	out, err = n.Render(res)
	if err != nil || string(out) != v3Leaf {
		t.Fatalf("cleared phrasings (%v):\n%s", err, out)
	}
	plain, err := Parse("errors/practice-wrap-errors-with-context.md", []byte(v3Leaf))
	if err != nil || plain.Phrasings != nil {
		t.Fatalf("phrasings of a leaf without the key: %q, %v", plain.Phrasings, err)
	}

	// Added to a leaf that had none, the key follows kk_confidence.
	plain.Phrasings = []string{"where do errors get their context?"}
	out, err = plain.Render(res)
	if err != nil || !strings.Contains(string(out), "kk_confidence: high\nkk_phrasings:\n  - where do errors get their context?\nx_custom: keep me") {
		t.Fatalf("added phrasings (%v):\n%s", err, out)
	}

	// A phrasing is one line; a malformed value is an error.
	plain.Phrasings = []string{"two\nlines"}
	if err := plain.Validate(); err == nil {
		t.Fatal("a phrasing with a line break validated")
	}
	bad := strings.Replace(v3Leaf, "kk_confidence: high\n", "kk_confidence: high\nkk_phrasings: just one string\n", 1)
	if _, err := Parse("x.md", []byte(bad)); err == nil || !strings.Contains(err.Error(), KeyPhrasings) {
		t.Fatalf("a string for kk_phrasings: %v", err)
	}
}
