package discover

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/gitx"
)

const trickyPatterns = `# comment
\#hash
/build/
*.tmp
!keep.tmp
**/node_modules
a/**/b
logs/
!logs/keep.txt
sub/*.txt
docs/**
!docs/public.md
foo/
/rooted.md
x?.md
[abc]file.md
[!d]only.md
name\ 
trailing   
dir/nested/
**/deep/*.md
lit\*star.md
`

// trickyPaths are checked against the patterns above; the ones ending in
// "/" are folders.
var trickyPaths = []string{
	"#hash", "hash", "build/", "build/x.md", "src/build/", "src/build/x.md",
	"a.tmp", "keep.tmp", "sub/keep.tmp", "node_modules/", "x/node_modules/", "x/node_modules/y.md",
	"a/b", "a/x/b", "a/x/y/b", "a/b/c.md", "ab",
	"logs/", "logs/keep.txt", "logs/x.txt", "src/logs/", "src/logs/keep.txt",
	"sub/a.txt", "sub/deeper/a.txt", "x/sub/a.txt",
	"docs/a.md", "docs/public.md", "docs/x/public.md",
	"foo/", "foo/bar.md", "bar/foo/", "bar/foo/z.md",
	"rooted.md", "x/rooted.md", "xa.md", "xab.md", "x/xa.md",
	"afile.md", "dfile.md", "conly.md", "donly.md",
	"name ", "name", "trailing", "dir/nested/", "dir/nested/z.md", "other/dir/nested/",
	"deep/x.md", "p/deep/x.md", "p/deep/q/x.md", "lit*star.md", "litxstar.md",
}

func TestIgnoreMatchesGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	ig, err := ParseIgnore(".kkignore", []byte(trickyPatterns))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	ctx := context.Background()
	if _, err := gitx.Run(ctx, dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".gitignore"), []byte(trickyPatterns), 0o644); err != nil {
		t.Fatal(err)
	}
	// Folders must exist for git to know a path is a folder.
	for _, p := range trickyPaths {
		if strings.HasSuffix(p, "/") {
			if err := os.MkdirAll(filepath.Join(dir, p), 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	out, _ := gitx.Run(ctx, dir, append([]string{"check-ignore", "--no-index", "--"}, trimSlashes(trickyPaths)...)...)
	want := map[string]bool{}
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		want[l] = true
	}
	for _, p := range trickyPaths {
		isDir := strings.HasSuffix(p, "/")
		rel := strings.TrimSuffix(p, "/")
		if got := ig.Ignored(rel, isDir); got != want[rel] {
			t.Errorf("%q: ignored = %v, git says %v", p, got, want[rel])
		}
	}
}

func trimSlashes(paths []string) []string {
	out := make([]string, len(paths))
	for i, p := range paths {
		out[i] = strings.TrimSuffix(p, "/")
	}
	return out
}

func TestIgnoreTable(t *testing.T) {
	cases := []struct {
		patterns string
		path     string
		dir      bool
		want     bool
	}{
		{"", "a.md", false, false},
		{"# only a comment\n\n", "a.md", false, false},
		{"*.md", "x/y/a.md", false, true},
		{"/a.md", "x/a.md", false, false},
		{"build/", "build", false, false}, // a file named like a folder pattern
		{"build/", "build/x.md", false, true},
		{"docs/\n!docs/keep.md", "docs/keep.md", false, true}, // no re-include inside an ignored folder
		{"docs/*\n!docs/keep.md", "docs/keep.md", false, false},
		{"**/gen/**", "a/gen/b/c.md", false, true},
		{"[ab", "[ab", false, true}, // an unclosed bracket is literal
		{"a\r", "a", false, true},   // CRLF files
	}
	for _, c := range cases {
		ig, err := ParseIgnore("test", []byte(c.patterns))
		if err != nil {
			t.Fatalf("%q: %v", c.patterns, err)
		}
		if got := ig.Ignored(c.path, c.dir); got != c.want {
			t.Errorf("patterns %q, path %q: got %v, want %v", c.patterns, c.path, got, c.want)
		}
	}
}

func TestIgnoreInvalidPatternNamesLine(t *testing.T) {
	_, err := ParseIgnore(".kkignore", []byte("ok.md\n[z-a].md\n"))
	if err == nil || !strings.HasPrefix(err.Error(), ".kkignore: line 2: invalid pattern") {
		t.Fatalf("err = %v, want it to name .kkignore line 2", err)
	}
}
