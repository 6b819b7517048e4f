package harness

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/templates"
)

// ShippedSkills returns the skill templates this kk build embeds: name →
// harness-neutral SKILL.md.
func ShippedSkills() (map[string][]byte, error) {
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

// File is one file an adapter installs: a skill, a command, a hooks file.
type File struct {
	Name string // the skill it comes from, when it comes from one
	Rel  string // slash-separated, relative to the repository root
	Data []byte
}

// SkillFiles lays skills out as <dir>/<name>/SKILL.md, in name order.
func SkillFiles(dir string, skills map[string][]byte) []File {
	var out []File
	for _, name := range slices.Sorted(maps.Keys(skills)) {
		out = append(out, File{Name: name, Rel: path.Join(dir, name, "SKILL.md"), Data: skills[name]})
	}
	return out
}

// Names returns the skill names of files.
func Names(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Name
	}
	return out
}

// Rels returns the paths of files.
func Rels(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.Rel
	}
	return out
}

// PutFile writes data to root/rel when it differs from what is there,
// creating the folders, and says what it did: "created", "updated" or ""
// (unchanged). A symbolic link is written through (atomicfile.Follow).
func PutFile(root, rel string, data []byte) (string, error) {
	p, err := atomicfile.Follow(root, filepath.Join(root, filepath.FromSlash(rel)))
	if err != nil {
		return "", err
	}
	_, statErr := os.Stat(p)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("writing %s: %w", rel, notAFolder(root, p, err))
	}
	wrote, err := atomicfile.WriteIfChanged(p, data, 0o644)
	switch {
	case err != nil:
		return "", fmt.Errorf("writing %s: %w", rel, err)
	case !wrote:
		return "", nil
	case statErr == nil:
		return "updated", nil
	}
	return "created", nil
}

// AddChange appends the change of rel to changes, unless action is ""
// (nothing changed).
func AddChange(changes []Change, rel, action string) []Change {
	if action == "" {
		return changes
	}
	return append(changes, Change{Path: rel, Action: action})
}

// WriteFiles puts each file in turn (see PutFile) and returns what
// changed. It stops at the first error, and before a file when ctx is
// done.
func WriteFiles(ctx context.Context, root string, files []File) ([]Change, error) {
	var changes []Change
	for _, f := range files {
		if err := ctx.Err(); err != nil {
			return changes, err
		}
		action, err := PutFile(root, f.Rel, f.Data)
		if err != nil {
			return changes, err
		}
		changes = AddChange(changes, f.Rel, action)
	}
	return changes, nil
}

// RemoveFiles removes each of rels under root that exists and returns
// the removals. It stops at the first error, and before a file when ctx
// is done.
func RemoveFiles(ctx context.Context, root string, rels []string) ([]Change, error) {
	var changes []Change
	for _, rel := range rels {
		if err := ctx.Err(); err != nil {
			return changes, err
		}
		err := os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
		switch {
		case err == nil:
			changes = append(changes, Change{Path: rel, Action: "removed"})
		case !errors.Is(err, fs.ErrNotExist):
			return changes, fmt.Errorf("removing %s: %w", rel, err)
		}
	}
	return changes, nil
}

// RemoveEmptyDirs removes each of the folders (relative to root, in the
// order given, so innermost first) that is empty; folders with anything
// in them stay.
func RemoveEmptyDirs(root string, rels ...string) {
	for _, rel := range rels {
		if rel == "" || rel == "." {
			continue
		}
		p := filepath.Join(root, filepath.FromSlash(rel))
		if entries, err := os.ReadDir(p); err == nil && len(entries) == 0 {
			_ = os.Remove(p) // an empty folder left behind is harmless
		}
	}
}

// Dirs returns the folders of files, in order.
func Dirs(files []File) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = path.Dir(f.Rel)
	}
	return out
}

// DiffFiles compares files with what is under root: the ones missing and
// the ones whose content differs.
func DiffFiles(root string, files []File) (missing, stale []File) {
	for _, f := range files {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Rel)))
		switch {
		case err != nil:
			missing = append(missing, f)
		case !bytes.Equal(got, f.Data):
			stale = append(stale, f)
		}
	}
	return missing, stale
}

// portableKeys are the skill front matter keys every harness reads (the
// Agent Skills subset, harnesses.md §1.2). RenderSkill moves the others
// into metadata, where the subset keeps free-form values.
var portableKeys = []string{"name", "description", "license", "compatibility", "allowed-tools"}

// managedBy marks the skills kk installed (metadata.managed-by), so that
// a skill kk no longer ships is removed on upgrade and uninstall.
const managedBy = "kk"

// RenderSkill turns a harness-neutral SKILL.md into a managed Agent
// Skills one: the portable keys keep their bytes; the others, and the
// managed-by mark, go into metadata.
func RenderSkill(name string, src []byte) ([]byte, error) {
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
		maps.Copy(meta, mm)
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

// RenderSkills renders every skill with RenderSkill, so that a bad
// template stops an install before anything is written.
func RenderSkills(skills map[string][]byte) (map[string][]byte, error) {
	out := map[string][]byte{}
	for name, src := range skills {
		if name == "" || name != path.Base(name) || strings.HasPrefix(name, ".") {
			return nil, fmt.Errorf("skill name %q is not a folder name", name)
		}
		b, err := RenderSkill(name, src)
		if err != nil {
			return nil, err
		}
		out[name] = b
	}
	return out, nil
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

// InstallManagedSkills writes each rendered skill (see RenderSkills) to
// <dir>/<name>/SKILL.md. kk owns those folders: other files in them are
// removed, and so are the folders of skills kk installed before but no
// longer ships.
func InstallManagedSkills(root, dir string, rendered map[string][]byte) ([]Change, error) {
	var changes []Change
	for _, f := range SkillFiles(dir, rendered) {
		action, err := PutFile(root, f.Rel, f.Data)
		if err != nil {
			return changes, err
		}
		changes = AddChange(changes, f.Rel, action)
		folder := filepath.Join(root, filepath.FromSlash(path.Dir(f.Rel)))
		entries, err := os.ReadDir(folder)
		if err != nil {
			return changes, err
		}
		for _, e := range entries {
			if e.Name() == "SKILL.md" {
				continue
			}
			if err := os.RemoveAll(filepath.Join(folder, e.Name())); err != nil {
				return changes, err
			}
			changes = append(changes, Change{Path: path.Join(dir, f.Name, e.Name()), Action: "removed"})
		}
	}
	retired, err := removeManaged(root, dir, func(name string) bool { _, keep := rendered[name]; return keep })
	return append(changes, retired...), err
}

// UninstallManagedSkills removes the folders of the skills
// InstallManagedSkills installed, then the skills folder and its parent
// if that leaves them empty.
func UninstallManagedSkills(root, dir string, skills map[string][]byte) ([]Change, error) {
	var changes []Change
	for _, name := range slices.Sorted(maps.Keys(skills)) {
		p := filepath.Join(root, filepath.FromSlash(dir), name)
		if _, err := os.Stat(p); err != nil {
			continue
		}
		if err := os.RemoveAll(p); err != nil {
			return changes, err
		}
		changes = append(changes, Change{Path: path.Join(dir, name), Action: "removed"})
	}
	retired, err := removeManaged(root, dir, func(string) bool { return false })
	changes = append(changes, retired...)
	if err != nil {
		return changes, err
	}
	RemoveEmptyDirs(root, dir, path.Dir(dir))
	return changes, nil
}

// removeManaged removes the skill folders under dir that carry kk's mark
// and that keep does not claim.
func removeManaged(root, dir string, keep func(string) bool) ([]Change, error) {
	entries, err := os.ReadDir(filepath.Join(root, filepath.FromSlash(dir)))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, err
	}
	var changes []Change
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
		changes = append(changes, Change{Path: path.Join(dir, e.Name()), Action: "removed"})
	}
	return changes, nil
}

// CheckManagedSkills compares the skills under dir with the ones this
// kk build ships, rendered by RenderSkills; it is doctor's "<harness>
// skills" check.
func CheckManagedSkills(root, dir, harness string) Check {
	c := Check{Name: harness + " skills"}
	shipped, err := ShippedSkills()
	if err == nil {
		shipped, err = RenderSkills(shipped)
	}
	if err != nil {
		c.Level, c.Message = LevelError, "the skills built into kk: "+err.Error()
		return c
	}
	missing, stale := DiffFiles(root, SkillFiles(dir, shipped))
	switch {
	case len(missing) > 0:
		c.Level = LevelError
		c.Message = fmt.Sprintf("missing from %s: %s", dir, strings.Join(Names(missing), ", "))
		c.Fix = "kk init --harnesses " + harness + " --upgrade"
	case len(stale) > 0:
		c.Level = LevelWarn
		c.Message = "differ from this kk version's: " + strings.Join(Rels(stale), ", ")
		c.Fix = "kk init --harnesses " + harness + " --upgrade"
	default:
		c.Level, c.Message = LevelOK, fmt.Sprintf("%d skills in %s", len(shipped), dir)
	}
	return c
}

// CheckSkillCopies compares the skills under dir with the ones this kk
// build ships, for adapters that copy SKILL.md byte for byte (see
// SkillFiles); it is doctor's "skills" check. reinstall and upgrade are
// the fixes for missing and for outdated skills.
func CheckSkillCopies(root, dir, reinstall, upgrade string) Check {
	c := Check{Name: "skills"}
	skills, err := ShippedSkills()
	if err != nil {
		c.Level, c.Message = LevelError, "the skills built into kk: "+err.Error()
		return c
	}
	missing, old := DiffFiles(root, SkillFiles(dir, skills))
	switch {
	case len(missing) > 0:
		c.Level, c.Message, c.Fix = LevelWarn, fmt.Sprintf("skills missing from %s: %s", dir, strings.Join(Names(missing), ", ")), reinstall
	case len(old) > 0:
		c.Level, c.Message, c.Fix = LevelWarn, fmt.Sprintf("skills in %s differ from this kk's: %s", dir, strings.Join(Names(old), ", ")), upgrade
	default:
		c.Level, c.Message = LevelOK, fmt.Sprintf("%d skills in %s are current", len(skills), dir)
	}
	return c
}

// SkillNames checks every skill name with valid and returns the names
// sorted; a name valid rejects is an error quoting it, followed by rule
// (what a name must be).
func SkillNames(skills map[string][]byte, valid func(string) bool, rule string) ([]string, error) {
	names := slices.Sorted(maps.Keys(skills))
	for _, name := range names {
		if !valid(name) {
			return nil, fmt.Errorf("skill name %q: %s", name, rule)
		}
	}
	return names, nil
}

// SkillsOrShipped returns skills, or, when there are none, the skills
// this kk build ships: what an uninstall given no skills removes.
func SkillsOrShipped(skills map[string][]byte) map[string][]byte {
	if len(skills) > 0 {
		return skills
	}
	shipped, _ := ShippedSkills() // embedded: cannot fail
	return shipped
}

// FileProblems compares files with what is under root, for doctor: how
// many are missing and how many differ, naming them, or nothing when all
// are there as they should be.
func FileProblems(root string, files []File) []string {
	missing, stale := DiffFiles(root, files)
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d are missing (%s)", len(missing), len(files), strings.Join(Rels(missing), ", ")))
	}
	if len(stale) > 0 {
		problems = append(problems, fmt.Sprintf("%d differ from this kk's (%s)", len(stale), strings.Join(Rels(stale), ", ")))
	}
	return problems
}

// CheckRoot checks that root, the repository root an install is given,
// is a folder.
func CheckRoot(root string) error {
	if root == "" {
		return errors.New("no repository root given")
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("repository root: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("repository root %s is not a folder", root)
	}
	return nil
}
