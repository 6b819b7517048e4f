package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// pictureMarker is the comment docs/graph.md puts before each ```mermaid
// block a test draws: the kk command whose output the block is.
var pictureMarker = regexp.MustCompile(`^<!-- (kk graph export[^>]*) -->$`)

// TestGraphDocPictures re-draws the Mermaid pictures of the worked example
// that docs/graph.md shows, each below a "<!-- kk graph export … -->"
// comment, and compares them with the page, so that the page cannot drift
// from the code. With -update (or KK_UPDATE=1) the page's blocks are
// rewritten.
func TestGraphDocPictures(t *testing.T) {
	t.Parallel()
	docPath := filepath.Join("..", "..", "docs", "graph.md")
	src, err := os.ReadFile(docPath)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	copyTree(t, exampleDir, dir)
	updating := *update || os.Getenv("KK_UPDATE") == "1"

	lines := strings.Split(string(src), "\n")
	var out []string
	found := 0
	for i := 0; i < len(lines); i++ {
		out = append(out, lines[i])
		m := pictureMarker.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		if i+1 >= len(lines) || lines[i+1] != "```mermaid" {
			t.Fatalf("docs/graph.md:%d: the comment is not followed by a ```mermaid block", i+1)
		}
		end := i + 2
		for end < len(lines) && lines[end] != "```" {
			end++
		}
		if end == len(lines) {
			t.Fatalf("docs/graph.md:%d: unterminated ```mermaid block", i+2)
		}
		found++
		args, err := splitCommand(m[1])
		if err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := run(t, dir, "", args[1:]...)
		if code != 0 {
			t.Fatalf("docs/graph.md:%d: %s: exit %d\n%s", i+1, m[1], code, stderr)
		}
		got := strings.TrimSuffix(stdout, "\n")
		want := strings.Join(lines[i+2:end], "\n")
		if !updating && got != want {
			t.Errorf("docs/graph.md:%d: %s: the picture differs from the page\n--- page\n%s\n--- got\n%s", i+1, m[1], want, got)
		}
		out = append(out, "```mermaid", got, "```")
		i = end
	}
	if found < 2 {
		t.Fatalf("docs/graph.md shows %d pictures of the worked example, want at least 2", found)
	}
	if updating {
		if err := os.WriteFile(docPath, []byte(strings.Join(out, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
