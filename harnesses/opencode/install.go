package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
)

// Install implements harness.Adapter: it registers the plugin and the
// context file in .opencode/opencode.json (keeping every other key and
// list item where it is), writes the plugin and the skills.
func (a *Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	plugin, err := renderPlugin(opts.Command)
	if err != nil {
		return nil, err
	}
	if err := checkSkillNames(opts.Skills); err != nil {
		return nil, err
	}
	var changes []harness.Change
	action, err := harness.EditJSONFile(filepath.Join(opts.Root, filepath.FromSlash(configFile)), func(o *harness.Object) error {
		if o.Len() == 0 {
			if err := o.Set("$schema", schemaURL); err != nil {
				return err
			}
		}
		if err := editList(o, "plugin", isPluginEntry, pluginEntry); err != nil {
			return err
		}
		return editList(o, "instructions", isContextEntry, contextFile)
	}, false)
	if err != nil {
		return nil, err
	}
	changes = addChange(changes, configFile, action)
	action, err = writeFile(filepath.Join(opts.Root, filepath.FromSlash(pluginFile)), plugin)
	if err != nil {
		return changes, err
	}
	changes = addChange(changes, pluginFile, action)
	sc, err := writeSkills(opts.Root, skillsDir, opts.Skills)
	return append(changes, sc...), err
}

// Uninstall implements harness.Adapter: it takes kk's entries out of
// .opencode/opencode.json (and the file, when kk created it and nothing
// else is left), and removes the plugin, the context file and the skills.
func (a *Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	if err := checkSkillNames(opts.Skills); err != nil {
		return nil, err
	}
	var changes []harness.Change
	action, err := harness.EditJSONFile(filepath.Join(opts.Root, filepath.FromSlash(configFile)), func(o *harness.Object) error {
		if err := editList(o, "plugin", isPluginEntry, ""); err != nil {
			return err
		}
		if err := editList(o, "instructions", isContextEntry, ""); err != nil {
			return err
		}
		if keys := o.Keys(); len(keys) == 1 && keys[0] == "$schema" {
			if raw, _ := o.Get("$schema"); sameString(raw, schemaURL) {
				o.Delete("$schema") // only what kk wrote is left: remove the file
			}
		}
		return nil
	}, true)
	if err != nil {
		return nil, err
	}
	changes = addChange(changes, configFile, action)
	pluginPath := filepath.Join(opts.Root, filepath.FromSlash(pluginFile))
	if src, err := os.ReadFile(pluginPath); err == nil && bytes.HasPrefix(src, pluginHeader) {
		if err := os.Remove(pluginPath); err != nil {
			return changes, err
		}
		changes = addChange(changes, pluginFile, "removed")
	}
	switch err := os.Remove(filepath.Join(opts.Root, filepath.FromSlash(contextFile))); {
	case err == nil:
		changes = addChange(changes, contextFile, "removed")
	case !os.IsNotExist(err):
		return changes, err
	}
	sc, err := removeSkills(opts.Root, skillsDir, opts.Skills)
	changes = append(changes, sc...)
	if err != nil {
		return changes, err
	}
	removeEmptyDir(filepath.Dir(pluginPath))
	removeEmptyDir(filepath.Join(opts.Root, ".opencode"))
	return changes, nil
}

// isPluginEntry reports whether a "plugin" list item is kk's plugin: a
// path (or [path, options] pair) to a file named kk.mjs.
func isPluginEntry(raw json.RawMessage) bool {
	var spec string
	if json.Unmarshal(raw, &spec) != nil {
		var pair []json.RawMessage
		if json.Unmarshal(raw, &pair) != nil || len(pair) == 0 || json.Unmarshal(pair[0], &spec) != nil {
			return false
		}
	}
	spec = strings.TrimPrefix(filepath.ToSlash(spec), "file://")
	return path.Base(spec) == path.Base(pluginEntry)
}

// isContextEntry reports whether an "instructions" item is kk's context
// file.
func isContextEntry(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimPrefix(s, "./") == contextFile
}

// editList makes kk's item of the list o[key] be want ("" removes it):
// items that are kk's are replaced by want where the first of them was,
// or want is appended; the user's items keep their order. A list left
// empty by removing kk's item is removed.
func editList(o *harness.Object, key string, ours func(json.RawMessage) bool, want string) error {
	var list []json.RawMessage
	if raw, ok := o.Get(key); ok {
		if err := json.Unmarshal(raw, &list); err != nil {
			return fmt.Errorf("%s: %q is not a list (%v); fix the file, then run kk again", configFile, key, err)
		}
	}
	var out []json.RawMessage
	at, had := -1, false
	for _, item := range list {
		if ours(item) {
			if at < 0 {
				at = len(out)
			}
			had = true
			continue
		}
		out = append(out, item)
	}
	if want != "" {
		item, _ := json.Marshal(want)
		if at < 0 {
			at = len(out)
		}
		out = slices.Insert(out, at, json.RawMessage(item))
	}
	switch {
	case len(out) > 0:
		return o.Set(key, out)
	case had:
		o.Delete(key)
	}
	return nil
}

func sameString(raw json.RawMessage, s string) bool {
	var v string
	return json.Unmarshal(raw, &v) == nil && v == s
}

func addChange(changes []harness.Change, rel, action string) []harness.Change {
	if action == "" {
		return changes
	}
	return append(changes, harness.Change{Path: rel, Action: action})
}

// writeFile writes data to p when it differs, and says what it did.
func writeFile(p string, data []byte) (string, error) {
	old, err := os.ReadFile(p)
	switch {
	case err == nil && bytes.Equal(old, data):
		return "", nil
	case err != nil && !os.IsNotExist(err):
		return "", err
	}
	action := "updated"
	if err != nil {
		action = "created"
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", err
	}
	if err := atomicfile.Write(p, data, 0o644); err != nil {
		return "", err
	}
	return action, nil
}

// skillName is the form OpenCode requires of a skill's name, which must
// also be its folder's name.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkSkillNames(skills map[string][]byte) error {
	for name := range skills {
		if !skillName.MatchString(name) || len(name) > 64 {
			return fmt.Errorf("skill name %q: use at most 64 lowercase letters, digits and single hyphens", name)
		}
	}
	return nil
}

func sortedNames(skills map[string][]byte) []string {
	names := make([]string, 0, len(skills))
	for n := range skills {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// writeSkills installs each skill as <dir>/<name>/SKILL.md. OpenCode reads
// the neutral SKILL.md as it is (name, description; the version key is
// ignored), so it is copied byte for byte.
func writeSkills(root, dir string, skills map[string][]byte) ([]harness.Change, error) {
	var changes []harness.Change
	for _, name := range sortedNames(skills) {
		rel := dir + "/" + name + "/SKILL.md"
		action, err := writeFile(filepath.Join(root, filepath.FromSlash(rel)), skills[name])
		if err != nil {
			return changes, fmt.Errorf("writing %s: %w", rel, err)
		}
		changes = addChange(changes, rel, action)
	}
	return changes, nil
}

// removeSkills removes the skills writeSkills installed, and their
// folders when nothing else is in them.
func removeSkills(root, dir string, skills map[string][]byte) ([]harness.Change, error) {
	var changes []harness.Change
	for _, name := range sortedNames(skills) {
		rel := dir + "/" + name + "/SKILL.md"
		p := filepath.Join(root, filepath.FromSlash(rel))
		switch err := os.Remove(p); {
		case err == nil:
			changes = append(changes, harness.Change{Path: rel, Action: "removed"})
		case !os.IsNotExist(err):
			return changes, fmt.Errorf("removing %s: %w", rel, err)
		}
		removeEmptyDir(filepath.Dir(p))
	}
	removeEmptyDir(filepath.Join(root, filepath.FromSlash(dir)))
	return changes, nil
}

// removeEmptyDir removes dir if it exists and is empty.
func removeEmptyDir(dir string) {
	if entries, err := os.ReadDir(dir); err == nil && len(entries) == 0 {
		os.Remove(dir)
	}
}
