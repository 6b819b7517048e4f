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

// A person indents a summary with a tab, as their editor does: YAML
// refuses it ("found character that cannot start any token"), and every
// command reading the summaries failed saying only that. The error now
// says what to change.
func TestSummariesIndentedWithATab(t *testing.T) {
	_, err := ParseSummaries("FOLDER_SUMMARIES.md", []byte("---\nschema_version: 1\nsummaries:\n\tteam: Team stuff\n---\n# Folder Summaries\n"))
	if err == nil {
		t.Fatal("a summary indented with a tab was read")
	}
	for _, want := range []string{"FOLDER_SUMMARIES.md: ", "line 4", "(a line starts with a tab)", "indented with spaces, not tabs"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the error %q does not say %q", err, want)
		}
	}
}

// What RenderSummaries writes holds no line of a person's, with summaries
// or none; a file an older kk wrote (heading "# Folder Summaries") holds
// none either. Before, the heading kk writes (kenkeep's) was read as a
// person's line, so every rewrite of the registry kept a copy and warned.
func TestRenderedSummariesHoldNoHandLines(t *testing.T) {
	for _, s := range []Summaries{{}, {"api": "The API", "": "Root"}} {
		b, err := RenderSummaries(s)
		if err != nil {
			t.Fatal(err)
		}
		if hand := SummariesHandLines(b); len(hand) > 0 {
			t.Errorf("RenderSummaries(%v) holds hand lines %q:\n%s", s, hand, b)
		}
	}
	older := []byte("---\nschema_version: 1\nsummaries:\n  api: The API\n---\n# Folder Summaries\n\n- `api`: The API\n")
	if hand := SummariesHandLines(older); len(hand) > 0 {
		t.Errorf("an older kk's file holds hand lines %q", hand)
	}
	mine := []byte("---\nschema_version: 1\nsummaries: {}\n---\n# kenkeep Folder Summaries\n\nmy own line\n")
	if hand := SummariesHandLines(mine); len(hand) != 1 || hand[0] != "my own line" {
		t.Errorf("hand lines = %q, want [my own line]", hand)
	}
}
