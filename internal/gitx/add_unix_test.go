//go:build unix

package gitx

import (
	"os"
	"path/filepath"
	"testing"
)

// realPath stages a path through a linked folder at the place the link
// leads to, and leaves alone a path it cannot resolve inside dir. Unix
// only: making symbolic links needs privileges on Windows.
func TestRealPath(t *testing.T) {
	dir := t.TempDir()
	outside := t.TempDir()
	for _, d := range []string{"docs/kb/go", "a"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join("..", "docs", "kb"), filepath.Join(dir, "a", "nodes")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(dir, "out")); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ in, want string }{
		{"a/nodes/index.md", filepath.FromSlash("docs/kb/index.md")},
		{"a/nodes/go/index.md", filepath.FromSlash("docs/kb/go/index.md")},
		{"a/nodes/gone/deeper/index.md", filepath.FromSlash("docs/kb/gone/deeper/index.md")}, // a removed folder
		{filepath.Join(dir, "a/nodes/x.md"), filepath.FromSlash("docs/kb/x.md")},
		{"a/plain.md", filepath.FromSlash("a/plain.md")},
		{"a/nodes", filepath.FromSlash("a/nodes")}, // the link itself
		{"out/x.md", "out/x.md"}, // out of the work tree: as given
	} {
		if got := realPath(dir, c.in); got != c.want {
			t.Errorf("realPath(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
