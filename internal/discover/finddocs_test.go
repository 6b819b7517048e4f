package discover

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/gitx"
)

// writeFiles creates files (relative path -> content) under dir.
func writeFiles(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// sampleRepo is a repository with something for every filter.
var sampleRepo = map[string]string{
	"README.md":                     "readme",
	"Guide.MD":                      "upper-case extension",
	"notes.txt":                     "not markdown",
	"LICENSE.md":                    "skip",
	"docs/CHANGELOG.md":             "skip",
	"docs/index.md":                 "skip",
	"docs/api.md":                   "api",
	"docs/releases/v1/notes.md":     "skip",
	"docs/archive/old.md":           "kkignored folder",
	"docs/draft.draft.md":           "kkignored pattern",
	"docs/keep.draft.md":            "re-included",
	"node_modules/pkg/README.md":    "skip",
	"vendor/lib/README.md":          "gitignored folder",
	"secret.md":                     "gitignored file",
	".ai/kenkeep/nodes/practice.md": "the knowledge base itself",
	".ai/kenkeep/README.md":         "the knowledge base itself",
	"src/ä.md":                      "non-ASCII",
	"src/z.md":                      "z",
	"src/\U0001F600.md":             "astral",
	"src/\uff5e.md":                 "BMP above the surrogates",
	".kkignore":                     "docs/archive/\n*.draft.md\n!keep.draft.md\n",
	".gitignore":                    "/vendor/\nsecret.md\n",
}

var sampleWant = []string{
	"Guide.MD", "README.md", "docs/api.md", "docs/keep.draft.md",
	// UTF-16 order: z (0x7a) < ä (0xe4) < the astral character (a
	// surrogate, 0xd83d) < U+FF5E; byte order would put U+FF5E before it.
	"src/z.md", "src/ä.md", "src/\U0001F600.md", "src/\uff5e.md",
}

func paths(docs []Doc) []string {
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.Path
	}
	return out
}

func initRepo(t testing.TB, dir string) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git not installed")
	}
	if _, err := gitx.Run(context.Background(), dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
}

func TestFindWalk(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sampleRepo)
	res, err := Find(context.Background(), dir, Options{NoGit: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "walk" || !slices.Equal(paths(res.Docs), sampleWant) {
		t.Errorf("source %s, docs\n%q\nwant\n%q", res.Source, paths(res.Docs), sampleWant)
	}
}

func TestFindGit(t *testing.T) {
	dir := t.TempDir()
	initRepo(t, dir)
	writeFiles(t, dir, sampleRepo)
	// git answers for nested .gitignore files too (the walk reads only the
	// root one), and lists tracked files even when a pattern matches them.
	writeFiles(t, dir, map[string]string{"src/.gitignore": "local.md\n", "src/local.md": "ignored by a nested file", "gone.md": "deleted"})
	ctx := context.Background()
	if _, err := gitx.Run(ctx, dir, "add", "gone.md"); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "gone.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("README.md", filepath.Join(dir, "link.md")); err != nil {
		t.Fatal(err)
	}
	res, err := Find(ctx, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Source != "git" || !slices.Equal(paths(res.Docs), sampleWant) {
		t.Errorf("source %s, docs\n%q\nwant\n%q", res.Source, paths(res.Docs), sampleWant)
	}
}

func TestFindFromAndHashes(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, sampleRepo)
	if err := os.Symlink(t.TempDir(), filepath.Join(dir, "elsewhere")); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, from := range []string{"docs", "./docs/", filepath.Join(dir, "docs")} {
		res, err := Find(ctx, dir, Options{From: from, Hashes: true, NoGit: true})
		if err != nil {
			t.Fatalf("--from %s: %v", from, err)
		}
		if got := paths(res.Docs); !slices.Equal(got, []string{"docs/api.md", "docs/keep.draft.md"}) {
			t.Errorf("--from %s: %q", from, got)
		}
		sum := sha256.Sum256([]byte("api"))
		if res.Docs[0].SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("hash of docs/api.md = %s", res.Docs[0].SHA256)
		}
	}
	res, err := Find(ctx, dir, Options{From: ".", NoGit: true})
	if err != nil || len(res.Docs) != len(sampleWant) {
		t.Errorf("--from .: %v, %d docs", err, len(res.Docs))
	}
	for from, msg := range map[string]string{
		"..":         "is outside the repository root",
		"../x":       "is outside the repository root",
		"/":          "is outside the repository root",
		"missing":    "does not exist",
		"README.md":  "is not a folder",
		"elsewhere":  "leads outside the repository root",
		"docs/../..": "is outside the repository root",
	} {
		_, err := Find(ctx, dir, Options{From: from, NoGit: true})
		var se *ScopeError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), msg) {
			t.Errorf("--from %s: err %v, want %q", from, err, msg)
		}
	}
}

func TestFindBadKKIgnore(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a.md": "a", ".kkignore": "[z-a]\n"})
	_, err := Find(context.Background(), dir, Options{NoGit: true})
	if err == nil || !strings.Contains(err.Error(), ".kkignore: line 1") {
		t.Fatalf("err = %v", err)
	}
}

func TestStaticSkip(t *testing.T) {
	for p, want := range map[string]bool{
		"LICENSE.md": true, "a/b/AUTHORS.md": true, "index.md": true, "x/INDEX.md": true,
		"license.md": false, "releases/a.md": true, "a/releases/b/c.md": true, "releases.md": false,
		"node_modules/a.md": true, "a/.git/b.md": true, ".ai/kenkeep/x.md": true, ".ai/kenkeeper/x.md": false,
		"docs/guide.md": false,
	} {
		if got := StaticSkip(p); got != want {
			t.Errorf("StaticSkip(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestChanged(t *testing.T) {
	docs := []Doc{{Path: "a.md", SHA256: "aa"}, {Path: "b.md", SHA256: "bb"}, {Path: "c.md", SHA256: "cc"}, {Path: "d.md", SHA256: "dd"}}
	st := &curate.BootstrapState{Docs: map[string]curate.BootstrapDoc{
		"a.md":   {ContentSHA256: "aa"},
		"./b.md": {ContentSHA256: "old"},
		"d.md":   {ContentSHA256: "sha256:DD"},
	}}
	got := Changed(docs, st)
	want := []ChangedDoc{{Doc: docs[1], Status: StatusChanged, Previous: "old"}, {Doc: docs[2], Status: StatusNew}}
	if !slices.Equal(got, want) {
		t.Errorf("Changed = %+v, want %+v", got, want)
	}
	if got := Changed(nil, st); got == nil || len(got) != 0 {
		t.Errorf("Changed(nil) = %#v, want an empty list", got)
	}
}

func TestCompareUTF16(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"ab", "a", 1}, {"", "", 0}, {"a/b", "a.b", 1},
		{"\U0001F600", "\uff5e", -1}, {"\u00e4", "z", 1},
	} {
		got := compareUTF16(c.a, c.b)
		if (got < 0) != (c.want < 0) || (got > 0) != (c.want > 0) {
			t.Errorf("compareUTF16(%q, %q) = %d, want sign %d", c.a, c.b, got, c.want)
		}
	}
}
