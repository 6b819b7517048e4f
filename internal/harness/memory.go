package harness

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
)

// Memory files are where a harness keeps what it was told to remember
// about a project (CLAUDE.md, GEMINI.md, Copilot's instructions, Cursor's
// rules, Claude Code's auto memory): knowledge a bootstrap may take in.
// Spec.Memory lists them as patterns: relative to the repository root, or
// starting with "~/" for the user's home; "{root-slug}" stands for the
// repository's absolute path with every character but letters and digits
// made "-" (how Claude Code names a project's folder); "*" matches within
// one folder.

// MemoryFile is one memory file found.
type MemoryFile struct {
	// Path is relative to the repository root for a file inside it, else
	// absolute.
	Path string `json:"path"`
	// Scope is "repository" or "user".
	Scope string `json:"scope"`
	// Harnesses are the harnesses that read it, sorted.
	Harnesses []string `json:"harnesses"`
}

// rootSlug is root as Claude Code names a project's folder.
func rootSlug(root string) string {
	return strings.Map(func(r rune) rune {
		if r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r)) {
			return r
		}
		return '-'
	}, root)
}

// FindMemoryFiles returns the memory files of the adapters that exist for
// the repository at root and the user whose home is home ("" skips the
// user's files), sorted by scope then path; a file two harnesses read is
// listed once.
func FindMemoryFiles(adapters []Adapter, root, home string) []MemoryFile {
	byPath := map[string]*MemoryFile{}
	for _, a := range adapters {
		for _, pat := range a.Spec().Memory {
			scope, base := "repository", root
			if rest, ok := strings.CutPrefix(pat, "~/"); ok {
				if home == "" {
					continue
				}
				scope, base, pat = "user", home, rest
			}
			pat = strings.ReplaceAll(pat, "{root-slug}", rootSlug(root))
			matches, _ := filepath.Glob(filepath.Join(base, filepath.FromSlash(pat)))
			for _, m := range matches {
				if fi, err := os.Stat(m); err != nil || !fi.Mode().IsRegular() {
					continue
				}
				p := m
				if scope == "repository" {
					if rel, err := filepath.Rel(root, m); err == nil {
						p = filepath.ToSlash(rel)
					}
				}
				f := byPath[p]
				if f == nil {
					f = &MemoryFile{Path: p, Scope: scope}
					byPath[p] = f
				}
				if !slices.Contains(f.Harnesses, a.ID()) {
					f.Harnesses = append(f.Harnesses, a.ID())
				}
			}
		}
	}
	out := make([]MemoryFile, 0, len(byPath))
	for _, f := range byPath {
		slices.Sort(f.Harnesses)
		out = append(out, *f)
	}
	slices.SortFunc(out, func(a, b MemoryFile) int {
		if a.Scope != b.Scope {
			return strings.Compare(a.Scope, b.Scope)
		}
		return strings.Compare(a.Path, b.Path)
	})
	return out
}
