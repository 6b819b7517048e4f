package discover

import (
	"context"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/store"
)

// Ported from kenkeep v1.17 tests/lib/bootstrap.test.ts: the content hash,
// the whole static skip list, and how .gitignore and .kkignore compose.
// Each case walks a real folder with the root .kkignore kk init writes.

func findIn(t *testing.T, files map[string]string, hashes bool) []Doc {
	t.Helper()
	dir := t.TempDir()
	if _, ok := files[".kkignore"]; !ok {
		files[".kkignore"] = ".ai/\n"
	}
	writeFiles(t, dir, files)
	for _, git := range []bool{false, true} {
		if git {
			initRepo(t, dir)
		}
		res, err := Find(context.Background(), dir, Options{NoGit: !git, Hashes: hashes})
		if err != nil {
			t.Fatal(err)
		}
		if git {
			return res.Docs
		}
		defer func(walk []string) {
			if got := paths(res.Docs); !slices.Equal(got, walk) {
				t.Errorf("git listed %q, the walk %q", got, walk)
			}
		}(paths(res.Docs))
	}
	return nil
}

func TestKenkeepLibBootstrapHash(t *testing.T) {
	docs := findIn(t, map[string]string{"intro.md": "hello\n"}, true)
	if len(docs) != 1 || docs[0].SHA256 != "5891b5b522d5df086d0ff0b110fbd9d21bb4fc7163af34d08286a2e846f6be03" {
		t.Errorf("docs %+v, want intro.md with sha256(\"hello\\n\")", docs)
	}
}

func TestKenkeepLibBootstrapStaticSkips(t *testing.T) {
	files := map[string]string{"intro.md": "i", "releases/v1.md": "v1"}
	for _, name := range []string{"LICENSE.md", "LICENSE", "COPYING", "NOTICE.md", "CODE_OF_CONDUCT.md", "CONTRIBUTORS.md",
		"AUTHORS.md", "MAINTAINERS.md", "CHANGELOG.md", "CHANGES.md", "HISTORY.md", "RELEASE_NOTES.md", "ENTRY.md", "INDEX.md", "GRAPH.md"} {
		files[name] = "x"
	}
	if got := paths(findIn(t, files, false)); !slices.Equal(got, []string{"intro.md"}) {
		t.Errorf("docs %q, want [intro.md]", got)
	}
	// Sharing a prefix with a skipped name is not enough to be skipped.
	got := paths(findIn(t, map[string]string{"CHANGELOG_FORMAT.md": "cf", "LICENSE_HEADER.md": "lh", "licensing-policy.md": "lp"}, false))
	if want := []string{"CHANGELOG_FORMAT.md", "LICENSE_HEADER.md", "licensing-policy.md"}; !slices.Equal(got, want) {
		t.Errorf("docs %q, want %q", got, want)
	}
}

func TestKenkeepLibBootstrapIgnoreComposition(t *testing.T) {
	// .gitignore negation re-admits a file; .kkignore blocks another: either
	// file blocks.
	got := paths(findIn(t, map[string]string{
		".gitignore": "docs/*.md\n!docs/keep.md\n", ".kkignore": ".ai/\ndocs/kkignored.md\n",
		"docs/keep.md": "k", "docs/drop.md": "d", "docs/kkignored.md": "b",
	}, false))
	if !slices.Equal(got, []string{"docs/keep.md"}) {
		t.Errorf("docs %q, want [docs/keep.md]", got)
	}
	// .kkignore ignoring everything, then re-admitting one file under a
	// re-admitted folder.
	got = paths(findIn(t, map[string]string{
		".kkignore": "*\n!docs/\n!docs/AGENTS.md\n", "docs/AGENTS.md": "a", "docs/other.md": "o", "intro.md": "i",
	}, false))
	if !slices.Equal(got, []string{"docs/AGENTS.md"}) {
		t.Errorf("docs %q, want [docs/AGENTS.md]", got)
	}
}

func TestKenkeepLibBootstrapStateMissing(t *testing.T) {
	st, err := curate.ReadBootstrapState(store.New(t.TempDir()))
	if err != nil || st.SchemaVersion != 1 || st.Docs == nil || len(st.Docs) != 0 {
		t.Errorf("state %+v %v, want version 1 and no documents", st, err)
	}
}
