package store

import (
	"strings"
	"testing"
)

// A FOLDER_SUMMARIES.md with text but no front matter (written by hand, or
// a pack's knowledge.FOLDER_SUMMARIES.md) is an error naming the file, not
// an empty registry: the next write of the registry would replace the text.
func TestSummariesWithoutFrontMatterAreRefused(t *testing.T) {
	_, err := ParseSummaries("F.md", []byte("drupal/apis: the APIs\nnotes I care about\n"))
	if err == nil || !strings.Contains(err.Error(), "F.md") || !strings.Contains(err.Error(), "front matter") {
		t.Fatalf("err = %v, want an error naming F.md and its missing front matter", err)
	}
	for _, empty := range []string{"", "\n", "  \n\n"} {
		if s, err := ParseSummaries("F.md", []byte(empty)); err != nil || len(s) != 0 {
			t.Errorf("%q: %v, %v; want an empty registry", empty, s, err)
		}
	}
}
