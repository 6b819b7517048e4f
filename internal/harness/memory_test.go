package harness_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

type memAdapter struct {
	harness.Adapter
	s harness.Spec
}

func (m memAdapter) Spec() harness.Spec { return m.s }
func (m memAdapter) ID() string         { return m.s.ID }

// TestFindMemoryFiles: patterns in the repository and the home folder,
// {root-slug} as Claude Code names a project's folder, one entry per file
// with every harness that reads it.
func TestFindMemoryFiles(t *testing.T) {
	root := filepath.Join(t.TempDir(), "my repo")
	home := t.TempDir()
	slug := ""
	for _, r := range root {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			slug += string(r)
		} else {
			slug += "-"
		}
	}
	for _, p := range []string{
		filepath.Join(root, "AGENTS.md"), filepath.Join(root, "NOTES.md"),
		filepath.Join(home, ".claude", "projects", slug, "memory", "MEMORY.md"),
		filepath.Join(home, ".claude", "projects", slug, "memory", "build.md"),
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	a := memAdapter{s: harness.Spec{ID: "a", Memory: []string{"AGENTS.md", "~/.claude/projects/{root-slug}/memory/*.md", "MISSING.md"}}}
	b := memAdapter{s: harness.Spec{ID: "b", Memory: []string{"AGENTS.md"}}}
	got := harness.FindMemoryFiles([]harness.Adapter{b, a}, root, home)
	want := []harness.MemoryFile{
		{Path: "AGENTS.md", Scope: "repository", Harnesses: []string{"a", "b"}},
		{Path: filepath.Join(home, ".claude", "projects", slug, "memory", "MEMORY.md"), Scope: "user", Harnesses: []string{"a"}},
		{Path: filepath.Join(home, ".claude", "projects", slug, "memory", "build.md"), Scope: "user", Harnesses: []string{"a"}},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i].Path != want[i].Path || got[i].Scope != want[i].Scope || len(got[i].Harnesses) != len(want[i].Harnesses) || got[i].Harnesses[0] != want[i].Harnesses[0] {
			t.Errorf("[%d] = %+v, want %+v", i, got[i], want[i])
		}
	}
	if got := harness.FindMemoryFiles([]harness.Adapter{a}, root, ""); len(got) != 1 {
		t.Errorf("without a home: %+v", got)
	}
}
