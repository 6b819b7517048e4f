package gemini

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/safetext"
)

var (
	fixInstall = harness.InstallFix(id)
	fixUpgrade = harness.UpgradeFix(id)
)

// Doctor implements harness.Adapter: the binary, kk's hooks and commands
// against what this kk installs, whether Gemini CLI will run them (hooks
// system switched off, kk hooks disabled by name, folder not trusted),
// whether the recursion guard reaches kk's hooks, and the platform's
// limits. It reads only; user settings are found through the home folder.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	project := readSettings(filepath.Join(root, filepath.FromSlash(settingsFile)))
	user := readSettings(userSettingsPath())
	return []harness.Check{
		harness.PathCheck(binary, "Gemini CLI", spec.InstallHint),
		checkHooks(root),
		checkCommand(root),
		checkCommands(root),
		harness.CheckManagedSkills(root, skillsDir, id),
		checkHooksEnabled(project, user),
		checkTrust(root, user),
		checkRecursionGuard(project, user),
		{
			Name:  "context file",
			Level: harness.LevelOK,
			Message: "Gemini CLI reads GEMINI.md, not AGENTS.md, unless context.fileName says otherwise; " +
				"kk gives it ENTRY.md through its SessionStart hook and leaves the context files alone",
		},
		{
			Name:  "hook trust",
			Level: harness.LevelOK,
			Message: "platform limit: Gemini CLI fingerprints project hooks, so after a hook command changes " +
				"(kk init --upgrade with another --kk-command) it asks once before running the new command",
		},
	}
}

// settings is a Gemini settings file as read by Doctor.
type settings struct {
	Path   string
	Exists bool
	Err    error
	Data   map[string]any
}

func readSettings(p string) settings {
	s := settings{Path: p}
	if p == "" {
		return s
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return s
	}
	s.Exists = true
	if err != nil {
		s.Err = err
		return s
	}
	if err := json.Unmarshal(data, &s.Data); err != nil {
		s.Err = fmt.Errorf("not a JSON object: %w", err)
	}
	return s
}

// lookup returns the value at a dotted path of the settings.
func (s settings) lookup(keys ...string) (any, bool) {
	var v any = s.Data
	for _, k := range keys {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[k]; !ok {
			return nil, false
		}
	}
	return v, true
}

func (s settings) strings(keys ...string) []string {
	v, _ := s.lookup(keys...)
	list, _ := v.([]any)
	var out []string
	for _, x := range list {
		if str, ok := x.(string); ok {
			out = append(out, str)
		}
	}
	return out
}

func userSettingsPath() string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		return ""
	}
	return filepath.Join(home, userDirRel, "settings.json")
}

func checkHooks(root string) harness.Check {
	c := harness.Check{Name: "hooks"}
	s := readSettings(filepath.Join(root, filepath.FromSlash(settingsFile)))
	switch {
	case !s.Exists:
		c.Level, c.Message, c.Fix = harness.LevelError, settingsFile+" is missing: Gemini CLI runs none of kk's hooks", fixInstall
		return c
	case s.Err != nil:
		c.Level, c.Message, c.Fix = harness.LevelError, fmt.Sprintf("%s cannot be read: %v", settingsFile, s.Err), "fix the file, then "+fixUpgrade
		return c
	}
	var want, have []string
	for _, sp := range hookSpecs {
		want = append(want, sp.Event+" → "+string(sp.KK))
	}
	var problems []string
	hooks, _ := s.lookup("hooks")
	events, _ := hooks.(map[string]any)
	names := make([]string, 0, len(events))
	for ev := range events {
		names = append(names, ev)
	}
	slices.Sort(names)
	for _, ev := range names {
		groups, _ := events[ev].([]any)
		for _, g := range groups {
			group, _ := g.(map[string]any)
			entries, _ := group["hooks"].([]any)
			for _, e := range entries {
				raw, _ := json.Marshal(e)
				if !owned(raw) {
					continue
				}
				entry, _ := e.(map[string]any)
				command, _ := entry["command"].(string)
				_, kk, _ := harness.MatchHookCommand(command, id)
				have = append(have, ev+" → "+kk)
				if name, _ := entry["name"].(string); name != hookName(harness.Event(kk)) {
					problems = append(problems, fmt.Sprintf("the %s hook of %s is named %q, want %q", kk, ev, name, hookName(harness.Event(kk))))
				}
				if t, _ := entry["type"].(string); t != "command" {
					problems = append(problems, fmt.Sprintf("the %s hook of %s has type %q, want \"command\"", kk, ev, t))
				}
			}
		}
	}
	slices.Sort(have)
	sortedWant := slices.Sorted(slices.Values(want))
	if !slices.Equal(have, sortedWant) {
		problems = append(problems, fmt.Sprintf("kk's hooks are [%s], want [%s]", strings.Join(have, ", "), strings.Join(sortedWant, ", ")))
	}
	if len(problems) > 0 {
		c.Level, c.Fix = harness.LevelWarn, fixUpgrade
		c.Message = settingsFile + " does not hold the hooks this kk installs: " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%s registers %s", settingsFile, strings.Join(want, ", "))
	return c
}

func checkCommands(root string) harness.Check {
	c := harness.Check{Name: "commands"}
	skills, _ := harness.ShippedSkills() // embedded: cannot fail
	cmds, err := renderCommands(skills)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelError, "this kk's skills cannot be rendered as Gemini commands: "+err.Error(), "report this as a kk bug"
		return c
	}
	if problems := harness.FileProblems(root, cmds); len(problems) > 0 {
		c.Level, c.Fix = harness.LevelWarn, fixUpgrade
		c.Message = "kk's custom commands: " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%d kk commands installed in %s", len(cmds), commandsDir)
	return c
}

// checkHooksEnabled looks for the settings that stop Gemini CLI from
// running kk's hooks: the hooks system switched off (hooksConfig.enabled,
// or tools.enableHooks in releases from before hooks were on by default)
// and kk's hook names in a disabled list.
func checkHooksEnabled(sets ...settings) harness.Check {
	c := harness.Check{Name: "hooks enabled"}
	kkNames := map[string]bool{}
	for _, sp := range hookSpecs {
		kkNames[hookName(sp.KK)] = true
	}
	var problems []string
	for _, s := range sets {
		if !s.Exists || s.Err != nil {
			continue
		}
		if v, ok := s.lookup("hooksConfig", "enabled"); ok && v == false {
			problems = append(problems, s.Path+" sets hooksConfig.enabled to false")
		}
		if v, ok := s.lookup("tools", "enableHooks"); ok && v == false {
			problems = append(problems, s.Path+" sets tools.enableHooks to false")
		}
		for _, key := range [][]string{{"hooksConfig", "disabled"}, {"hooks", "disabled"}} {
			for _, n := range s.strings(key...) {
				if kkNames[n] {
					problems = append(problems, fmt.Sprintf("%s lists %s in %s", s.Path, n, strings.Join(key, ".")))
				}
			}
		}
	}
	if len(problems) > 0 {
		c.Level, c.Message = harness.LevelWarn, "Gemini CLI will not run some or all of kk's hooks: "+strings.Join(problems, "; ")
		c.Fix = "remove those settings, or run /hooks enable-all in Gemini CLI"
		return c
	}
	c.Level, c.Message = harness.LevelOK, "no setting turns kk's hooks off"
	return c
}

// checkTrust reads ~/.gemini/trustedFolders.json (absolute path →
// TRUST_FOLDER, TRUST_PARENT or DO_NOT_TRUST). In a folder that is not
// trusted Gemini CLI ignores .gemini/settings.json and .gemini/commands.
func checkTrust(root string, user settings) harness.Check {
	c := harness.Check{Name: "folder trust"}
	if v, ok := user.lookup("security", "folderTrust", "enabled"); ok && v == false {
		c.Level, c.Message = harness.LevelOK, "folder trust is off in "+user.Path+", so Gemini CLI loads the project's settings and commands"
		return c
	}
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	fix := "start `gemini` in " + abs + " and trust the folder (or change it with /permissions)"
	home, _ := os.UserHomeDir()
	file := filepath.Join(home, userDirRel, "trustedFolders.json")
	var rules map[string]string
	if data, err := os.ReadFile(file); err == nil {
		_ = json.Unmarshal(data, &rules)
	}
	paths := make([]string, 0, len(rules))
	for p := range rules {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		switch rules[p] {
		case "TRUST_FOLDER":
			if within(abs, p) {
				c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%s is trusted (%s in %s)", abs, p, file)
				return c
			}
		case "TRUST_PARENT":
			if within(abs, filepath.Dir(p)) {
				c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%s is trusted (parent of %s in %s)", abs, p, file)
				return c
			}
		}
	}
	const headless = "; headless `gemini -p` (kk curate, kk bootstrap, the background extraction) refuses to start there at all (exit 55) unless GEMINI_CLI_TRUST_WORKSPACE=true"
	if rules[abs] == "DO_NOT_TRUST" {
		c.Level, c.Fix = harness.LevelWarn, fix
		c.Message = fmt.Sprintf("%s is marked untrusted in %s: Gemini CLI ignores .gemini/settings.json, .gemini/commands and .gemini/skills there, so none of kk's hooks, commands or skills run", abs, file) + headless
		return c
	}
	if os.Getenv("GEMINI_CLI_TRUST_WORKSPACE") == "true" {
		c.Level, c.Message = harness.LevelOK, "GEMINI_CLI_TRUST_WORKSPACE=true trusts every folder for this environment"
		return c
	}
	c.Level, c.Fix = harness.LevelWarn, fix
	c.Message = fmt.Sprintf("%s is not in %s: with folder trust on (the default in current releases) Gemini CLI asks on first start, and until the folder is trusted it runs none of kk's hooks, commands or skills", abs, file) + headless
	return c
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(filepath.Clean(dir), filepath.Clean(p))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// checkRecursionGuard: Gemini CLI runs hooks with a sanitized environment.
// With redaction on (security.environmentVariableRedaction.enabled), and
// always under GitHub Actions, it drops every variable it does not know —
// KK_INTERNAL included — unless the variable is listed in
// security.environmentVariableRedaction.allowed. kk's hooks then cannot
// tell that they run inside kk's own headless run.
func checkRecursionGuard(sets ...settings) harness.Check {
	c := harness.Check{Name: "recursion guard"}
	var why []string
	if os.Getenv("GITHUB_SHA") != "" || os.Getenv("SURFACE") == "Github" {
		why = append(why, "this is GitHub Actions (GITHUB_SHA is set)")
	}
	allowed := false
	for _, s := range sets {
		if v, ok := s.lookup("security", "environmentVariableRedaction", "enabled"); ok && v == true {
			why = append(why, s.Path+" turns environment redaction on")
		}
		for _, n := range s.strings("security", "environmentVariableRedaction", "allowed") {
			if strings.EqualFold(n, harness.RecursionEnv) {
				allowed = true
			}
		}
	}
	if len(why) > 0 && !allowed {
		c.Level = harness.LevelWarn
		c.Message = fmt.Sprintf("%s, so Gemini CLI strips %s from its hooks' environment and kk's hooks would run inside kk's own headless Gemini runs", strings.Join(why, "; "), harness.RecursionEnv)
		c.Fix = fmt.Sprintf("add %q to security.environmentVariableRedaction.allowed in %s", harness.RecursionEnv, userSettingsPath())
		return c
	}
	c.Level, c.Message = harness.LevelOK, harness.RecursionEnv+" reaches kk's hooks inside kk's headless Gemini runs"
	return c
}

// projectDirVar is how a relative kk command is anchored in a hook
// command (see hookCommand).
const projectDirVar = "$GEMINI_PROJECT_DIR/"

// checkCommand checks that the kk command the hooks run can be found: on
// PATH for a bare name, else as a file ($GEMINI_PROJECT_DIR is the
// repository root).
func checkCommand(root string) harness.Check {
	s := readSettings(filepath.Join(root, filepath.FromSlash(settingsFile)))
	var words []string
	hooks, _ := s.lookup("hooks")
	events, _ := hooks.(map[string]any)
	for _, groups := range events {
		list, _ := groups.([]any)
		for _, g := range list {
			group, _ := g.(map[string]any)
			entries, _ := group["hooks"].([]any)
			for _, e := range entries {
				raw, _ := json.Marshal(e)
				if !owned(raw) {
					continue
				}
				command, _ := e.(map[string]any)["command"].(string)
				if w, _, _ := harness.MatchHookCommand(command, id); !slices.Contains(words, w) {
					words = append(words, w)
				}
			}
		}
	}
	slices.Sort(words)
	commands := make([]string, len(words))
	for i, w := range words {
		commands[i] = safetext.ShellUnquote(w)
		if rest, ok := strings.CutPrefix(w, projectDirVar); ok {
			commands[i] = "./" + safetext.ShellUnquote(rest)
		}
	}
	return harness.CommandCheck(root, commands, "Gemini CLI", id)
}
