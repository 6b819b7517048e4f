package codex

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// versionTimeout bounds `codex --version`.
var versionTimeout = 5 * time.Second

// trustFix tells the user how to trust kk's hooks.
const trustFix = "start codex in this repository, run /hooks and trust kk's hooks (again after each kk upgrade that changes them)"

// Doctor checks that codex is on PATH; that kk's hooks in .codex/hooks.json
// are there and current; that .codex/config.toml neither holds hooks of
// its own (they would load alongside hooks.json) nor switches hooks off;
// that the project and kk's hooks are trusted in the user's Codex config
// (Codex skips untrusted and modified hooks without a word); and that the
// skills match this kk build.
func (*Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	hooks, positions := hooksCheck(root)
	return []harness.Check{
		binaryCheck(ctx),
		hooks,
		configCheck(root),
		trustCheck(root, positions),
		harness.CheckManagedSkills(root, skillsDir, id),
	}
}

// binaryCheck looks for codex on PATH and asks it for its version.
func binaryCheck(ctx context.Context) harness.Check {
	return harness.BinaryCheck{
		Harness: id, Binary: binary, Product: "Codex CLI", InstallHint: spec.InstallHint,
		Timeout: versionTimeout,
	}.Check(ctx)
}

// position is where one kk handler sits in hooks.json; Codex keys its
// trust state by it.
type position struct {
	on             string
	group, handler int
}

// hooksCheck compares kk's handlers in .codex/hooks.json with the ones
// this kk build installs, and returns where they are.
func hooksCheck(root string) (harness.Check, []position) {
	c, found := hookFile.Check(root, "kk init --harnesses "+id+" --upgrade, then trust the changed hooks in codex's /hooks", nil)
	if len(found) == 0 {
		return c, nil
	}
	data, _ := os.ReadFile(filepath.Join(root, hooksFile)) // Check has just read it
	return c, kkPositions(data)
}

// kkPositions lists where kk's handlers are in a hooks file.
func kkPositions(data []byte) []position {
	var file struct {
		Hooks map[string][]struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		} `json:"hooks"`
	}
	_ = json.Unmarshal(data, &file)
	var out []position
	for _, on := range slices.Sorted(maps.Keys(file.Hooks)) {
		for g, grp := range file.Hooks[on] {
			for h, hd := range grp.Hooks {
				if _, _, ok := harness.MatchHookCommand(hd.Command, id); ok {
					out = append(out, position{on, g, h})
				}
			}
		}
	}
	return out
}

// configCheck looks for hooks in the project's config.toml, and for hooks
// switched off there or in the user's config.
func configCheck(root string) harness.Check {
	c := harness.Check{Name: "codex config.toml"}
	project := filepath.Join(root, configFile)
	user := filepath.Join(codexHome(), "config.toml")
	for _, f := range []struct{ path, name string }{{project, configFile}, {user, user}} {
		data, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		_, entries := scanTOML(string(data))
		for _, e := range entries {
			if hooksSwitch(e) && e.value == "false" {
				c.Level = "error"
				c.Message = fmt.Sprintf("%s line %d switches Codex's hooks off (%s = false), so none of kk's hooks run", f.name, e.line, strings.Join(append(e.table, e.key...), "."))
				c.Fix = "remove that line, or set it to true"
				return c
			}
		}
	}
	data, err := os.ReadFile(project)
	if err != nil {
		c.Level, c.Message = "ok", "no "+configFile+", so kk's hooks.json is the project's only hook source"
		return c
	}
	if line := hooksTableLine(string(data)); line > 0 {
		c.Level = "warn"
		c.Message = fmt.Sprintf("%s line %d defines hooks too; Codex loads them alongside %s and warns about the two sources (kk leaves config.toml alone)", configFile, line, hooksFile)
		c.Fix = "move the [hooks] entries of " + configFile + " into " + hooksFile + " (kk keeps its own entries there apart from yours)"
		return c
	}
	c.Level, c.Message = "ok", configFile+" defines no hooks of its own"
	return c
}

// hooksSwitch reports whether e is [features] hooks or codex_hooks.
func hooksSwitch(e tomlEntry) bool {
	full := append(append([]string{}, e.table...), e.key...)
	return len(full) == 2 && full[0] == "features" && (full[1] == "hooks" || full[1] == "codex_hooks")
}

// hooksTableLine returns the line of the first hook definition in a
// config.toml ([hooks…] tables or hooks.… keys, trust state aside), or 0.
func hooksTableLine(data string) int {
	headers, entries := scanTOML(data)
	isHooks := func(p []string) bool { return len(p) > 0 && p[0] == "hooks" && (len(p) < 2 || p[1] != "state") }
	for _, h := range headers {
		if isHooks(h.path) {
			return h.line
		}
	}
	for _, e := range entries {
		if len(e.table) == 0 && isHooks(e.key) {
			return e.line
		}
	}
	return 0
}

// trustCheck reads the user's Codex config for the project's trust level
// and the trust state of kk's hooks. Codex records a hook as trusted under
// the key "<hooks.json path>:<event>:<group>:<handler>" with the hash of
// the hook; kk cannot recompute the hash, so a hook changed since it was
// trusted still looks trusted here.
func trustCheck(root string, positions []position) harness.Check {
	c := harness.Check{Name: "codex hook trust"}
	if len(positions) == 0 {
		c.Level, c.Message, c.Fix = "warn", "no kk hooks to trust yet", "kk init --harnesses "+id
		return c
	}
	userConfig := filepath.Join(codexHome(), "config.toml")
	data, err := os.ReadFile(userConfig)
	if err != nil {
		c.Level = "warn"
		c.Message = fmt.Sprintf("cannot read %s to see whether kk's hooks are trusted; Codex runs repository hooks only once the user trusts them", userConfig)
		c.Fix = trustFix
		return c
	}
	_, entries := scanTOML(string(data))
	roots := []string{root}
	if real, err := filepath.EvalSymlinks(root); err == nil && real != root {
		roots = append(roots, real)
	}
	trustedProject := false
	for _, e := range entries {
		if len(e.table) == 2 && e.table[0] == "projects" && slices.Equal(e.key, []string{"trust_level"}) {
			if v, _ := tomlString(e.value); v == "trusted" && coversAny(e.table[1], roots) {
				trustedProject = true
			}
		}
	}
	if !trustedProject {
		c.Level = "warn"
		c.Message = fmt.Sprintf("%s does not trust this project, and Codex loads %s only in trusted projects", userConfig, hooksFile)
		c.Fix = "start codex in " + root + " and trust the project, then run /hooks and trust kk's hooks"
		return c
	}
	trusted, disabled := map[string]bool{}, map[string]bool{}
	for _, e := range entries {
		if len(e.table) == 3 && e.table[0] == "hooks" && e.table[1] == "state" && len(e.key) == 1 {
			switch {
			case e.key[0] == "trusted_hash":
				if v, _ := tomlString(e.value); v != "" {
					trusted[e.table[2]] = true
				}
			case e.key[0] == "enabled" && e.value == "false":
				disabled[e.table[2]] = true
			}
		}
	}
	var untrusted, off []string
	for _, p := range positions {
		if key, ok := stateKey(trusted, roots, p); !ok {
			untrusted = append(untrusted, p.on)
		} else if disabled[key] {
			off = append(off, p.on)
		}
	}
	switch {
	case len(off) > 0:
		c.Level = "warn"
		c.Message = fmt.Sprintf("kk's %s hooks are switched off in Codex's /hooks", strings.Join(slices.Compact(off), ", "))
		c.Fix = "start codex, run /hooks and enable kk's hooks"
	case len(untrusted) > 0:
		c.Level = "warn"
		c.Message = fmt.Sprintf("%d of kk's %d hooks are not trusted in Codex yet (%s), and Codex skips untrusted hooks silently", len(untrusted), len(positions), strings.Join(slices.Compact(untrusted), ", "))
		c.Fix = trustFix
	default:
		c.Level = "ok"
		c.Message = "Codex trusts the project and kk's hooks (a hook changed since it was trusted shows as modified in /hooks and needs trusting again)"
	}
	return c
}

// labels are Codex's snake_case names of events in hook state keys.
var labels = map[string]string{
	"SessionStart":     "session_start",
	"UserPromptSubmit": "user_prompt_submit",
	"Stop":             "stop",
	"PreCompact":       "pre_compact",
	"SessionEnd":       "session_end",
}

// stateKey finds the trusted state entry of the handler at p.
func stateKey(trusted map[string]bool, roots []string, p position) (string, bool) {
	label, ok := labels[p.on]
	if !ok {
		return "", false
	}
	for _, r := range roots {
		suffix := fmt.Sprintf("%s:%s:%d:%d", filepath.Join(r, filepath.FromSlash(hooksFile)), label, p.group, p.handler)
		for _, key := range []string{suffix, "file:" + suffix} {
			if trusted[key] {
				return key, true
			}
		}
	}
	return "", false
}

// coversAny reports whether dir is one of roots or a folder above one.
func coversAny(dir string, roots []string) bool {
	for _, r := range roots {
		rel, err := filepath.Rel(dir, r)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && filepath.IsAbs(dir) {
			return true
		}
	}
	return false
}
