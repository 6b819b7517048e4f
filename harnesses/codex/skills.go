package codex

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/templates"
)

// portableKeys are the skill front matter keys every harness reads (the
// Agent Skills subset, harnesses.md §1.2). Other keys of a template move
// into metadata, which is where the subset keeps free-form values.
var portableKeys = []string{"name", "description", "license", "compatibility", "allowed-tools"}

// managedBy marks the skills kk installed (metadata.managed-by), so that a
// skill kk no longer ships is removed on upgrade and uninstall.
const managedBy = "kk"

// renderSkill turns a harness-neutral SKILL.md into the installed one:
// the portable keys keep their bytes; the others, and the managed-by
// mark, go into metadata.
func renderSkill(name string, src []byte) ([]byte, error) {
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil, fmt.Errorf("skill %s: %s", name, frontmatter.Describe(err))
	}
	if v, _ := doc.Value("name"); v != name {
		return nil, fmt.Errorf("skill %s: front matter name is %v, want the folder name %q", name, v, name)
	}
	if v, _ := doc.Value("description"); v == nil || strings.TrimSpace(fmt.Sprint(v)) == "" {
		return nil, fmt.Errorf("skill %s: front matter has no description", name)
	}
	meta := map[string]any{}
	if m, ok := doc.Value("metadata"); ok {
		mm, ok := m.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("skill %s: front matter metadata must be a mapping", name)
		}
		for k, v := range mm {
			meta[k] = v
		}
	}
	var items []frontmatter.Item
	for _, k := range doc.Keys() {
		v, _ := doc.Value(k)
		switch {
		case slices.Contains(portableKeys, k):
			items = append(items, frontmatter.Item{Key: k, Value: v})
		case k == "metadata":
		default:
			if _, set := meta[k]; !set {
				meta[k] = scalarString(v)
			}
		}
	}
	meta["managed-by"] = managedBy
	items = append(items, frontmatter.Item{Key: "metadata", Value: meta})
	return doc.Render(items, doc.Body(), frontmatter.Emit)
}

// scalarString is a front matter value as the string metadata holds.
func scalarString(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case nil:
		return ""
	default:
		return fmt.Sprint(x)
	}
}

// isManaged reports whether the SKILL.md at p carries kk's mark.
func isManaged(p string) bool {
	src, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return false
	}
	m, _ := doc.Value("metadata")
	mm, _ := m.(map[string]any)
	return mm["managed-by"] == managedBy
}

// renderSkills renders every skill, so that a bad template stops an
// install before anything is written.
func renderSkills(skills map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, src := range skills {
		if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("skill name %q is not a folder name", name)
		}
		b, err := renderSkill(name, src)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
}

// sortedKeys returns m's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// installSkills writes each rendered skill to dir/<name>/SKILL.md. kk owns
// those folders: other files in them are removed, and so are folders of
// skills kk installed before but no longer ships.
func installSkills(root, dir string, rendered map[string][]byte) ([]harness.Change, error) {
	var changes []harness.Change
	for _, name := range sortedKeys(rendered) {
		rel := path.Join(dir, name, "SKILL.md")
		p := filepath.Join(root, filepath.FromSlash(rel))
		_, statErr := os.Stat(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return changes, err
		}
		changed, err := atomicfile.WriteIfChanged(p, rendered[name], 0o644)
		if err != nil {
			return changes, err
		}
		if changed {
			action := "updated"
			if errors.Is(statErr, fs.ErrNotExist) {
				action = "created"
			}
			changes = append(changes, harness.Change{Path: rel, Action: action})
		}
		entries, err := os.ReadDir(filepath.Dir(p))
		if err != nil {
			return changes, err
		}
		for _, e := range entries {
			if e.Name() == "SKILL.md" {
				continue
			}
			if err := os.RemoveAll(filepath.Join(filepath.Dir(p), e.Name())); err != nil {
				return changes, err
			}
			changes = append(changes, harness.Change{Path: path.Join(dir, name, e.Name()), Action: "removed"})
		}
	}
	retired, err := removeManaged(root, dir, func(name string) bool { _, keep := rendered[name]; return keep })
	return append(changes, retired...), err
}

// uninstallSkills removes the folders of the skills kk installed, then the
// skills folder and its parent if that leaves them empty.
func uninstallSkills(root, dir string, skills map[string][]byte) ([]harness.Change, error) {
	var changes []harness.Change
	for _, name := range sortedKeys(skills) {
		p := filepath.Join(root, filepath.FromSlash(dir), name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return changes, err
		}
		changes = append(changes, harness.Change{Path: path.Join(dir, name), Action: "removed"})
	}
	retired, err := removeManaged(root, dir, func(string) bool { return false })
	changes = append(changes, retired...)
	if err != nil {
		return changes, err
	}
	removeEmptyDirs(root, dir, path.Dir(dir))
	return changes, nil
}

// removeManaged removes the skill folders under dir that carry kk's mark
// and that keep does not claim.
func removeManaged(root, dir string, keep func(string) bool) ([]harness.Change, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var changes []harness.Change
	for _, e := range entries {
		if !e.IsDir() || keep(e.Name()) {
			continue
		}
		folder := filepath.Join(root, filepath.FromSlash(dir), e.Name())
		if !isManaged(filepath.Join(folder, "SKILL.md")) {
			continue
		}
		if err := os.RemoveAll(folder); err != nil {
			return changes, err
		}
		changes = append(changes, harness.Change{Path: path.Join(dir, e.Name()), Action: "removed"})
	}
	return changes, nil
}

// removeEmptyDirs removes each of the folders (relative to root, innermost
// first) that is empty.
func removeEmptyDirs(root string, dirs ...string) {
	for _, d := range dirs {
		if d == "." || d == "" {
			continue
		}
		os.Remove(filepath.Join(root, filepath.FromSlash(d))) // fails, as wanted, when not empty
	}
}

// shippedSkills are the skills this kk build installs.
func shippedSkills() (map[string][]byte, error) {
	entries, err := fs.ReadDir(templates.Skills, "skills")
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	for _, e := range entries {
		src, err := fs.ReadFile(templates.Skills, "skills/"+e.Name()+"/SKILL.md")
		if err != nil {
			return nil, err
		}
		out[e.Name()] = src
	}
	return out, nil
}
