package indexfiles

import (
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/node"
)

// A leaf written by hand may hold a line break in its title or in a list
// value (kk's writers refuse one); GRAPH.md wrote it as it was, so the
// line after the break stood on its own: "## Second" read as the section
// of another node. Each break is now a space; a value without one is
// written as ever (kenkeep's bytes).
func TestGraphSectionKeepsValuesOnOneLine(t *testing.T) {
	n := &node.Node{ID: "practice-a", Type: "practice", Title: "First\n## Second", Path: "practice-a.md",
		Tags: []string{"go\r\nhttp"}, DerivedFrom: []string{"docs/a.md"}}
	got := graphSection(n)
	want := "\n## practice-a\n\n- **kind:** practice\n- **title:** First ## Second\n- **path:** practice-a.md\n- **tags:** go http\n- **derived_from:** docs/a.md\n"
	if got != want {
		t.Errorf("graphSection = %q, want %q", got, want)
	}
	for _, line := range strings.Split(got, "\n") {
		if strings.HasPrefix(line, "## ") && line != "## practice-a" {
			t.Errorf("a value starts a line of its own: %q", line)
		}
	}
	n.Title, n.Tags = "Plain  title\twith tabs", []string{"go"}
	if got := graphSection(n); !strings.Contains(got, "- **title:** Plain  title\twith tabs\n") {
		t.Errorf("a title without a line break changed: %q", got)
	}
}
