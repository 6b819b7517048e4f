package githooks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/store"
)

// MergeGenerated is the part of kk's merge driver of the generated files
// (MergeDriver) that keeps what a person wrote in them. The driver keeps
// our side of a generated file both sides changed, and kk's hooks then
// regenerate it; but two things in those files are a person's words,
// which a regeneration takes from the file itself and nowhere else:
//
//   - ENTRY.md's front-matter summary (the knowledge base's one-line
//     summary), merged as git merges a line: the side that changed it
//     gives it; when both changed it differently ours stays, and the
//     returned note says what theirs was;
//   - a note a person wrote and named index.md (front matter with a type,
//     store.HandIndex): when only their side has one, it replaces our
//     generated index; when both sides changed one differently, ours
//     stays and theirs is copied under .state/hand-edits/, which the
//     returned note names.
//
// name is the file's path from the work tree's top folder (git's %P). It
// writes the result to ours, and leaves ours as it is on any error.
func MergeGenerated(base, ours, theirs, name string, now time.Time) (note string, err error) {
	read := func(p string) ([]byte, error) {
		data, err := os.ReadFile(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return data, err
	}
	var sides [3][]byte
	for i, p := range []string{base, ours, theirs} {
		if sides[i], err = read(p); err != nil {
			return "", err
		}
	}
	kbDir, rel, ok := generatedPath(name)
	if !ok {
		return "", nil
	}
	switch {
	case rel == "ENTRY.md":
		return mergeEntrySummary(sides, ours, name)
	case path.Base(rel) == "index.md" && strings.HasPrefix(rel, "nodes/"):
		return mergeHandIndex(sides, ours, name, kbDir, rel, now)
	}
	return "", nil
}

// generatedPath splits name (a path from the work tree's top folder) into
// the knowledge base's folder and the file's path inside it.
func generatedPath(name string) (kbDir, rel string, ok bool) {
	name = filepath.ToSlash(name)
	marker := store.DirName + "/"
	i := strings.LastIndex("/"+name, "/"+marker)
	if i < 0 {
		return "", "", false
	}
	return name[:i+len(store.DirName)], name[i+len(marker):], true
}

// summaryOf reads ENTRY.md's front-matter summary; a file that is missing
// or does not parse has none ("").
func summaryOf(data []byte) string {
	if len(data) == 0 {
		return ""
	}
	doc, err := frontmatter.Parse(data)
	if err != nil {
		return ""
	}
	v, _ := doc.Value("summary")
	s, _ := v.(string)
	return strings.TrimSpace(s)
}

func mergeEntrySummary(sides [3][]byte, ours, name string) (string, error) {
	b := summaryOf(sides[0])
	o := summaryOf(sides[1])
	t := summaryOf(sides[2])
	switch {
	case o == t, t == b:
		return "", nil
	case o != b:
		return fmt.Sprintf("kk: %s: both sides changed the summary; kept ours (%q); theirs was %q", name, o, t), nil
	}
	// Only theirs changed it: our file with their summary.
	doc, err := frontmatter.Parse(sides[1])
	if err != nil || !doc.HasFrontMatter() {
		// Ours is not a file kk generated: keep it, and say what is lost
		// from it.
		return fmt.Sprintf("kk: %s: their side changed the summary to %q, which ours cannot take (its front matter does not parse); put it back in ENTRY.md's front matter (summary:)", name, t), nil
	}
	items := []frontmatter.Item{}
	placed := false
	for _, k := range doc.Keys() {
		if k == "summary" {
			if t != "" {
				items = append(items, frontmatter.Item{Key: k, Value: t})
			}
			placed = true
			continue
		}
		v, _ := doc.Value(k)
		items = append(items, frontmatter.Item{Key: k, Value: v})
	}
	if !placed && t != "" {
		items = append(items, frontmatter.Item{Key: "summary", Value: t})
	}
	data, err := doc.Render(items, doc.Body(), frontmatter.Emit)
	if err != nil {
		return "", err
	}
	return "", atomicfile.Write(ours, data, 0o644)
}

// handNote reports whether data is a note a person named index.md: its
// front matter parses and has a type, which no generated index has.
func handNote(data []byte) bool {
	if len(data) == 0 {
		return false
	}
	doc, err := frontmatter.Parse(data)
	if err != nil {
		return false
	}
	_, ok := doc.Value("type")
	return ok
}

func mergeHandIndex(sides [3][]byte, ours, name, kbDir, rel string, now time.Time) (string, error) {
	theirNote := handNote(sides[2])
	switch {
	case !theirNote, bytes.Equal(sides[1], sides[2]):
		return "", nil
	case !handNote(sides[1]):
		// Their side wrote the note; ours only regenerated the index.
		return "", atomicfile.Write(ours, sides[2], 0o644)
	}
	// Both sides changed the note, each its own way: ours stays, and
	// theirs is kept where kk keeps the hand edits it replaces.
	dir := path.Join(kbDir, ".state", "hand-edits", "merge-"+now.UTC().Format("20060102T150405.000000000Z"))
	keep := path.Join(dir, rel)
	if err := os.MkdirAll(filepath.Dir(filepath.FromSlash(keep)), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(filepath.FromSlash(keep), sides[2], 0o644); err != nil {
		return "", err
	}
	return fmt.Sprintf("kk: %s: both sides changed this note (named index.md by hand); kept ours, and theirs is at %s: merge what it adds by hand", name, keep), nil
}
