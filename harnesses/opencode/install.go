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
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// Install implements harness.Adapter: it registers the plugin and the
// context file in .opencode/opencode.json (keeping every other key and
// list item where it is), writes the plugin and the skills. kenkeep's
// generated .opencode/AGENTS.md, when there, is replaced: its entry by
// kk's context file, and the file removed.
func (a *Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	plugin, err := renderPlugin(opts.Command)
	if err != nil {
		return nil, err
	}
	if err := checkSkillNames(opts.Skills); err != nil {
		return nil, err
	}
	var changes []harness.Change
	kenkeep, err := kenkeepContext(opts.Root)
	if err != nil {
		return nil, err
	}
	ours := isContextEntry
	if kenkeep {
		ours = func(raw json.RawMessage) bool { return isContextEntry(raw) || isKenkeepContextEntry(raw) }
	}
	action, err := harness.EditJSONFile(opts.Root, filepath.Join(opts.Root, filepath.FromSlash(configFile)), func(o *harness.Object) error {
		if o.Len() == 0 {
			if err := o.Set("$schema", schemaURL); err != nil {
				return err
			}
		}
		if err := editList(o, "plugin", isPluginEntry, pluginEntry); err != nil {
			return err
		}
		return editList(o, "instructions", ours, contextFile)
	}, false)
	if err != nil {
		return nil, err
	}
	changes = harness.AddChange(changes, configFile, action)
	if kenkeep {
		c, err := harness.RemoveFiles(ctx, opts.Root, []string{kenkeepContextFile})
		changes = append(changes, c...)
		if err != nil {
			return changes, err
		}
	}
	// OpenCode reads the neutral SKILL.md as it is (name, description; the
	// version key is ignored), so it is copied byte for byte.
	sc, err := harness.WriteFiles(ctx, opts.Root, append([]harness.File{{Rel: pluginFile, Data: plugin}}, harness.SkillFiles(skillsDir, opts.Skills)...))
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
	action, err := harness.EditJSONFile(opts.Root, filepath.Join(opts.Root, filepath.FromSlash(configFile)), func(o *harness.Object) error {
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
	changes = harness.AddChange(changes, configFile, action)
	pluginPath := filepath.Join(opts.Root, filepath.FromSlash(pluginFile))
	if src, err := os.ReadFile(pluginPath); err == nil && bytes.HasPrefix(src, pluginHeader) {
		if err := os.Remove(pluginPath); err != nil {
			return changes, err
		}
		changes = harness.AddChange(changes, pluginFile, "removed")
	}
	switch err := os.Remove(filepath.Join(opts.Root, filepath.FromSlash(contextFile))); {
	case err == nil:
		changes = harness.AddChange(changes, contextFile, "removed")
	case !os.IsNotExist(err):
		return changes, err
	}
	skills := harness.SkillFiles(skillsDir, opts.Skills)
	sc, err := harness.RemoveFiles(ctx, opts.Root, harness.Rels(skills))
	changes = append(changes, sc...)
	if err != nil {
		return changes, err
	}
	harness.RemoveEmptyDirs(opts.Root, append(harness.Dirs(skills), skillsDir, path.Dir(pluginFile), ".opencode")...)
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

// kenkeepContextFile is where kenkeep, the tool kk succeeds, wrote its
// session-start context for OpenCode (listed in "instructions"), under
// kenkeepContextHeader.
const kenkeepContextFile = ".opencode/AGENTS.md"

var kenkeepContextHeader = []byte("<!-- [kenkeep] auto-generated session-start context.")

// kenkeepContext reports whether .opencode/AGENTS.md is kenkeep's
// generated context file, which kk's context file replaces: its entry in
// "instructions" is kk's to replace, and the file (which says "Re-run init
// to remove") kk's to remove. A missing file is not kenkeep's: an entry
// naming it may be the user's.
func kenkeepContext(root string) (bool, error) {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(kenkeepContextFile)))
	if os.IsNotExist(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return bytes.HasPrefix(data, kenkeepContextHeader), nil
}

// isKenkeepContextEntry reports whether an "instructions" item names
// kenkeep's context file.
func isKenkeepContextEntry(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimPrefix(s, "./") == kenkeepContextFile
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
	var mine []json.RawMessage
	if want != "" {
		item, _ := json.Marshal(want) // a string always encodes
		mine = append(mine, item)
	}
	out, had := harness.ReplaceOwned(list, ours, mine...)
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

// skillName is the form OpenCode requires of a skill's name, which must
// also be its folder's name.
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkSkillNames(skills map[string][]byte) error {
	valid := func(name string) bool { return skillName.MatchString(name) && len(name) <= 64 }
	_, err := harness.SkillNames(skills, valid, "use at most 64 lowercase letters, digits and single hyphens")
	return err
}
