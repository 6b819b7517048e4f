package store

import (
	"crypto/sha256"
	"encoding/hex"
	"testing"
)

func TestLeafSumReadsCRLFAsLF(t *testing.T) {
	lf := "---\ntitle: A\n---\nLine one.\nLine two.\n"
	raw := sha256.Sum256([]byte(lf))
	if got := LeafSum([]byte(lf)); got != hex.EncodeToString(raw[:]) {
		t.Fatalf("LeafSum of an LF file = %s, want the sha256 of its bytes", got)
	}
	for _, v := range []string{
		"---\r\ntitle: A\r\n---\r\nLine one.\r\nLine two.\r\n", // git's autocrlf checkout
		"---\ntitle: A\n---\r\nLine one.\r\nLine two.\n",       // mixed
	} {
		if got := LeafSum([]byte(v)); got != LeafSum([]byte(lf)) {
			t.Errorf("LeafSum(%q) = %s, want the LF file's %s", v, got, LeafSum([]byte(lf)))
		}
	}
	// A lone CR is text git does not convert: it stays part of the hash.
	for _, v := range []string{"a\rb\n", "a\r\r\nb\n", "a\r"} {
		if LeafSum([]byte(v)) == LeafSum([]byte("a\nb\n")) || LeafSum([]byte(v)) == LeafSum([]byte("a")) {
			t.Errorf("LeafSum(%q) equals an LF text's", v)
		}
	}
}

func TestSameText(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want bool
	}{
		{"", "", true},
		{"a\nb\n", "a\nb\n", true},
		{"a\nb\n", "a\r\nb\r\n", true},
		{"a\r\nb\n", "a\nb\r\n", true},
		{"a\nb", "a\r\nb", true},
		{"a\nb\n", "a\r\nb\r\nc", false},
		{"a\nb\n", "a\rb\n", false},
		{"a\n", "a\r", false},
		{"a\n", "a\r\n\n", false},
		{"a\r", "a\r", true},
		{"a\nb\n", "a\nc\n", false},
		{"a\n", "a\r\r\n", false},
		{"\ufeffa\nb\n", "a\nb\n", true},
		{"\ufeffa\r\nb\r\n", "a\nb\n", true},
		{"\ufeffa\n", "\ufeffa\r\n", true},
		{"\ufeff\ufeffa\n", "a\n", false},
		{"a\ufeff\n", "a\n", false},
		{"\ufeffa\n", "b\n", false},
	} {
		if got := SameText([]byte(c.a), []byte(c.b)); got != c.want {
			t.Errorf("SameText(%q, %q) = %v, want %v", c.a, c.b, got, c.want)
		}
		if got := SameText([]byte(c.b), []byte(c.a)); got != c.want {
			t.Errorf("SameText(%q, %q) = %v, want %v", c.b, c.a, got, c.want)
		}
	}
}

func TestMaxSameTextSize(t *testing.T) {
	if got := MaxSameTextSize([]byte("a\nb\n")); got != int64(len("\ufeffa\r\nb\r\n")) {
		t.Errorf("MaxSameTextSize = %d", got)
	}
}

func TestMaxCRLFSize(t *testing.T) {
	if got := MaxCRLFSize([]byte("a\nb\n")); got != int64(len("a\r\nb\r\n")) {
		t.Errorf("MaxCRLFSize = %d", got)
	}
}
