package index

import (
	"slices"
	"testing"
)

// Ported from kenkeep v1.17 tests/lib/prompt-retrieval.test.ts (tokenize):
// a prompt is lowercased and split at non-alphanumerics, and the words a
// question wraps its subject in are dropped. kk also stems (docs/search.md),
// so "configure" is searched as its stem.
func TestKenkeepLibPromptTerms(t *testing.T) {
	if got, want := terms("How do I configure the Codex hook?"), []string{"configur", "codex", "hook"}; !slices.Equal(got, want) {
		t.Errorf("terms = %q, want %q", got, want)
	}
	for _, blank := range []string{"   ", "-- !! ??"} {
		if got := terms(blank); len(got) != 0 {
			t.Errorf("terms(%q) = %q, want none", blank, got)
		}
	}
}
