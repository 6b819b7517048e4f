package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
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

// Doctor implements harness.Adapter: the binary, a sign-in heuristic, the
// hooks file and skills against what this kk installs, user-level kk hooks
// that would fire twice, and the platform's limits. It reads only; the
// user folder is found through $COPILOT_HOME and the home folder.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	return []harness.Check{
		harness.PathCheck(binary, "Copilot", spec.InstallHint),
		checkAuth(),
		checkHooksFile(root),
		checkCommand(root),
		checkSkills(root),
		checkUserHooks(),
		{
			Name:  "session-start context",
			Level: harness.LevelOK,
			Message: "Copilot CLI 1.0.102 and later take kk's context from the sessionStart hook (ENTRY.md) and the userPromptSubmitted hook (nodes relevant to the prompt); " +
				"older builds ignore both, and read AGENTS.md, where kk's block points to .ai/kenkeep/ENTRY.md",
		},
		{
			Name:  "capture",
			Level: harness.LevelOK,
			Message: "Copilot writes a turn to its transcript only after its hooks have run, so kk captures in a detached process that waits up to 30 s for the transcript to settle; " +
				"a failure is logged in .ai/kenkeep/_logs/hook-errors-<date>.log",
		},
		{
			Name:  "prompt mode",
			Level: harness.LevelOK,
			Message: "platform limit: `copilot -p` runs repository hooks and project MCP servers only in a trusted folder (or with COPILOT_ALLOW_ALL=true, or GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true), " +
				"so sessions started that way are captured only there",
		},
	}
}

// authEnv are the token variables Copilot reads, highest precedence first.
var authEnv = []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"}

func checkAuth() harness.Check {
	c := harness.Check{Name: "authentication"}
	for _, k := range authEnv {
		if os.Getenv(k) != "" {
			c.Level, c.Message = harness.LevelOK, "a token is set in $"+k
			return c
		}
	}
	if home := copilotHome(); home != "" {
		for _, f := range []string{"config.json", "settings.json"} {
			if _, err := os.Stat(filepath.Join(home, f)); err == nil {
				c.Level, c.Message = harness.LevelOK, fmt.Sprintf("Copilot's user settings exist (%s); sign-in is likely", filepath.Join(home, f))
				return c
			}
		}
	}
	c.Level = harness.LevelWarn
	c.Message = "no $" + strings.Join(authEnv, ", $") + " and no Copilot user settings: Copilot may not be signed in (a heuristic)"
	c.Fix = "run `copilot` and sign in with /login, or set COPILOT_GITHUB_TOKEN"
	return c
}

func checkHooksFile(root string) harness.Check {
	c := harness.Check{Name: "hooks file"}
	data, ok := harness.ReadForCheck(&c, root, hooksFile, harness.LevelError, hooksFile+" is missing: Copilot runs none of kk's hooks", fixInstall)
	if !ok {
		return c
	}
	var file struct {
		Version int                          `json:"version"`
		Hooks   map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		c.Level, c.Message, c.Fix = harness.LevelError, fmt.Sprintf("%s is not a valid hooks file: %v", hooksFile, err), fixUpgrade+" (kk owns the file and rewrites it)"
		return c
	}
	var have, want []string
	for _, s := range hookSpecs {
		want = append(want, s.Event+" → "+string(s.KK))
	}
	var problems []string
	if file.Version != 1 {
		problems = append(problems, fmt.Sprintf("version is %d, want 1", file.Version))
	}
	events := make([]string, 0, len(file.Hooks))
	for ev := range file.Hooks {
		events = append(events, ev)
	}
	slices.Sort(events)
	for _, ev := range events {
		for _, raw := range file.Hooks[ev] {
			var e hookEntry
			_ = json.Unmarshal(raw, &e)
			_, kk, ok := harness.MatchHookCommand(e.Bash, id)
			if e.Type != "command" || !ok {
				problems = append(problems, fmt.Sprintf("%s has an entry that is not a kk hook: %s", ev, bytes.TrimSpace(raw)))
				continue
			}
			have = append(have, ev+" → "+kk)
		}
	}
	slices.Sort(have)
	sortedWant := slices.Sorted(slices.Values(want))
	if !slices.Equal(have, sortedWant) {
		problems = append(problems, fmt.Sprintf("registered hooks are [%s], want [%s]", strings.Join(have, ", "), strings.Join(sortedWant, ", ")))
	}
	if len(problems) > 0 {
		c.Level, c.Message, c.Fix = harness.LevelWarn, hooksFile+" is not what this kk installs", fixUpgrade
		c.Message += ": " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%s registers %s", hooksFile, strings.Join(want, ", "))
	return c
}

func checkSkills(root string) harness.Check {
	c := harness.Check{Name: "skills"}
	skills, _ := harness.ShippedSkills() // embedded: cannot fail
	if problems := harness.FileProblems(root, harness.SkillFiles(skillsDir, skills)); len(problems) > 0 {
		c.Level, c.Fix = harness.LevelWarn, fixUpgrade
		c.Message = "kk's skills: " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%d kk skills installed in %s", len(skills), skillsDir)
	return c
}

// checkUserHooks looks for kk hooks in Copilot's user folder. Repository
// and user hook files both run, so a kk hook in both fires twice (older
// kenkeep installs wrote ~/.copilot/hooks/kk.json).
func checkUserHooks() harness.Check {
	c := harness.Check{Name: "user-level hooks"}
	var dirs []string
	if h := os.Getenv(homeEnv); h != "" {
		dirs = append(dirs, h)
	}
	if home, err := os.UserHomeDir(); err == nil && home != "" {
		dirs = append(dirs, filepath.Join(home, userDirRel))
	}
	var found []string
	seen := map[string]bool{}
	for _, d := range dirs {
		files, _ := filepath.Glob(filepath.Join(d, "hooks", "*.json"))
		files = append(files, filepath.Join(d, "settings.json"))
		for _, f := range files {
			if seen[f] {
				continue
			}
			seen[f] = true
			data, err := os.ReadFile(f)
			if err != nil {
				continue
			}
			if filepath.Base(f) == "kk.json" || bytes.Contains(data, []byte("--harness "+id)) || bytes.Contains(data, []byte(".ai/kenkeep/hooks/copilot/")) {
				found = append(found, f)
			}
		}
	}
	if len(found) > 0 {
		c.Level = harness.LevelWarn
		c.Message = "kk hooks are also registered at user level, so Copilot fires them twice in this repository: " + strings.Join(found, ", ")
		c.Fix = "remove kk's hooks from those user-level files; the repository's " + hooksFile + " is enough"
		return c
	}
	c.Level, c.Message = harness.LevelOK, "no user-level kk hooks"
	return c
}

// checkCommand checks that the kk command the hooks run can be found: on
// PATH for a bare name, else as a file (a relative path is resolved
// against the repository root, where the entries' cwd puts it).
func checkCommand(root string) harness.Check {
	var file struct {
		Hooks map[string][]hookEntry `json:"hooks"`
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(hooksFile)))
	if err == nil {
		_ = json.Unmarshal(data, &file)
	}
	var words []string
	for _, list := range file.Hooks {
		for _, e := range list {
			if w, _, ok := harness.MatchHookCommand(e.Bash, id); ok && !slices.Contains(words, w) {
				words = append(words, w)
			}
		}
	}
	slices.Sort(words)
	commands := make([]string, len(words))
	for i, w := range words {
		commands[i] = safetext.ShellUnquote(w)
	}
	return harness.CommandCheck(root, commands, "Copilot", id)
}
