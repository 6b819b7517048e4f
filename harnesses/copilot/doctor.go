package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/templates"
)

// Doctor check levels.
const (
	levelOK    = "ok"
	levelWarn  = "warn"
	levelError = "error"
)

var (
	fixInstall = "run `kk init --harnesses " + id + "`"
	fixUpgrade = "run `kk init --upgrade --harnesses " + id + "`"
)

// Doctor implements harness.Adapter: the binary, a sign-in heuristic, the
// hooks file and skills against what this kk installs, user-level kk hooks
// that would fire twice, and the platform's limits. It reads only; the
// user folder is found through $COPILOT_HOME and the home folder.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	return []harness.Check{
		checkBinary(),
		checkAuth(),
		checkHooksFile(root),
		checkCommand(root),
		checkSkills(root),
		checkUserHooks(),
		{
			Name:  "session-start context",
			Level: levelOK,
			Message: "platform limit: Copilot ignores the output of sessionStart and userPromptSubmitted hooks, so kk cannot inject ENTRY.md or prompt-time context; " +
				"Copilot reads AGENTS.md, where kk's block points to .ai/kenkeep/ENTRY.md, and kk writes no per-session content into committed instruction files",
		},
		{
			Name:  "prompt mode",
			Level: levelOK,
			Message: "platform limit: `copilot -p` runs repository hooks only in a trusted folder (or with GITHUB_COPILOT_PROMPT_MODE_REPO_HOOKS=true), " +
				"so sessions started that way are captured only there",
		},
	}
}

func checkBinary() harness.Check {
	c := harness.Check{Name: "binary"}
	p, err := exec.LookPath(binary)
	if err != nil {
		c.Level, c.Message, c.Fix = levelWarn, binary+" is not on PATH: kk's hooks are installed but nothing runs them, and launchers cannot start Copilot", (&Adapter{}).InstallHint()
		return c
	}
	c.Level, c.Message = levelOK, binary+" found at "+p
	return c
}

// authEnv are the token variables Copilot reads, highest precedence first.
var authEnv = []string{"COPILOT_GITHUB_TOKEN", "GH_TOKEN", "GITHUB_TOKEN"}

func checkAuth() harness.Check {
	c := harness.Check{Name: "authentication"}
	for _, k := range authEnv {
		if os.Getenv(k) != "" {
			c.Level, c.Message = levelOK, "a token is set in $"+k
			return c
		}
	}
	if home := copilotHome(); home != "" {
		for _, f := range []string{"config.json", "settings.json"} {
			if _, err := os.Stat(filepath.Join(home, f)); err == nil {
				c.Level, c.Message = levelOK, fmt.Sprintf("Copilot's user settings exist (%s); sign-in is likely", filepath.Join(home, f))
				return c
			}
		}
	}
	c.Level = levelWarn
	c.Message = "no $" + strings.Join(authEnv, ", $") + " and no Copilot user settings: Copilot may not be signed in (a heuristic)"
	c.Fix = "run `copilot` and sign in with /login, or set COPILOT_GITHUB_TOKEN"
	return c
}

// kkBash matches the bash of a kk hook entry and captures the kk event.
var kkBash = regexp.MustCompile(`\shook (\S+) --harness ` + id + `$`)

func checkHooksFile(root string) harness.Check {
	c := harness.Check{Name: "hooks file"}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(hooksFile)))
	if errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message, c.Fix = levelError, hooksFile+" is missing: Copilot runs none of kk's hooks", fixInstall
		return c
	}
	if err != nil {
		c.Level, c.Message, c.Fix = levelError, fmt.Sprintf("%s cannot be read: %v", hooksFile, err), "check the file's permissions"
		return c
	}
	var file struct {
		Version int                          `json:"version"`
		Hooks   map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		c.Level, c.Message, c.Fix = levelError, fmt.Sprintf("%s is not a valid hooks file: %v", hooksFile, err), fixUpgrade+" (kk owns the file and rewrites it)"
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
			json.Unmarshal(raw, &e)
			m := kkBash.FindStringSubmatch(e.Bash)
			if e.Type != "command" || m == nil {
				problems = append(problems, fmt.Sprintf("%s has an entry that is not a kk hook: %s", ev, bytes.TrimSpace(raw)))
				continue
			}
			have = append(have, ev+" → "+m[1])
		}
	}
	slices.Sort(have)
	sortedWant := slices.Sorted(slices.Values(want))
	if !slices.Equal(have, sortedWant) {
		problems = append(problems, fmt.Sprintf("registered hooks are [%s], want [%s]", strings.Join(have, ", "), strings.Join(sortedWant, ", ")))
	}
	if len(problems) > 0 {
		c.Level, c.Message, c.Fix = levelWarn, hooksFile+" is not what this kk installs", fixUpgrade
		c.Message += ": " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = levelOK, fmt.Sprintf("%s registers %s", hooksFile, strings.Join(want, ", "))
	return c
}

// shippedSkills returns the skill templates this kk ships: name → SKILL.md.
func shippedSkills() map[string][]byte {
	out := map[string][]byte{}
	entries, err := fs.ReadDir(templates.Skills, "skills")
	if err != nil {
		return out
	}
	for _, e := range entries {
		if data, err := fs.ReadFile(templates.Skills, "skills/"+e.Name()+"/SKILL.md"); err == nil {
			out[e.Name()] = data
		}
	}
	return out
}

func checkSkills(root string) harness.Check {
	c := harness.Check{Name: "skills"}
	skills := shippedSkills()
	names := make([]string, 0, len(skills))
	for n := range skills {
		names = append(names, n)
	}
	slices.Sort(names)
	var missing, stale []string
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(skillFile(n))))
		switch {
		case err != nil:
			missing = append(missing, skillFile(n))
		case !bytes.Equal(data, skills[n]):
			stale = append(stale, skillFile(n))
		}
	}
	var problems []string
	if len(missing) > 0 {
		problems = append(problems, fmt.Sprintf("%d of %d are missing (%s)", len(missing), len(names), strings.Join(missing, ", ")))
	}
	if len(stale) > 0 {
		problems = append(problems, fmt.Sprintf("%d differ from this kk's (%s)", len(stale), strings.Join(stale, ", ")))
	}
	if len(problems) > 0 {
		c.Level, c.Fix = levelWarn, fixUpgrade
		c.Message = "kk's skills: " + strings.Join(problems, "; ")
		return c
	}
	c.Level, c.Message = levelOK, fmt.Sprintf("%d kk skills installed in %s", len(names), skillsDir)
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
		c.Level = levelWarn
		c.Message = "kk hooks are also registered at user level, so Copilot fires them twice in this repository: " + strings.Join(found, ", ")
		c.Fix = "remove kk's hooks from those user-level files; the repository's " + hooksFile + " is enough"
		return c
	}
	c.Level, c.Message = levelOK, "no user-level kk hooks"
	return c
}

// checkCommand checks that the kk command the hooks run can be found: on
// PATH for a bare name, else as a file (a relative path is resolved
// against the repository root, where the entries' cwd puts it).
func checkCommand(root string) harness.Check {
	c := harness.Check{Name: "kk command"}
	var file struct {
		Hooks map[string][]hookEntry `json:"hooks"`
	}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(hooksFile)))
	if err == nil {
		json.Unmarshal(data, &file)
	}
	var words []string
	for _, list := range file.Hooks {
		for _, e := range list {
			if m := kkBash.FindStringIndex(e.Bash); m != nil && !slices.Contains(words, e.Bash[:m[0]]) {
				words = append(words, e.Bash[:m[0]])
			}
		}
	}
	if len(words) == 0 {
		c.Level, c.Message = levelOK, "no kk hook entries to check"
		return c
	}
	slices.Sort(words)
	var found, missing []string
	for _, w := range words {
		cmd := unquote(w)
		if p, err := resolveCommand(root, cmd); err != nil {
			missing = append(missing, cmd)
		} else {
			found = append(found, fmt.Sprintf("%s (%s)", cmd, p))
		}
	}
	if len(missing) > 0 {
		c.Level = levelWarn
		c.Message = fmt.Sprintf("the hooks run %s, which cannot be found from here: every kk hook would fail in Copilot", strings.Join(missing, ", "))
		c.Fix = "put kk on PATH, or run `kk init --upgrade --harnesses " + id + " --kk-command <path to kk>`"
		return c
	}
	c.Level, c.Message = levelOK, "the hooks run "+strings.Join(found, ", ")
	return c
}

// unquote undoes bashQuote.
func unquote(w string) string {
	if len(w) >= 2 && w[0] == '\'' && w[len(w)-1] == '\'' {
		return strings.ReplaceAll(w[1:len(w)-1], `'\''`, "'")
	}
	return w
}

// resolveCommand finds the program a hook command names.
func resolveCommand(root, cmd string) (string, error) {
	if !strings.ContainsAny(cmd, `/\`) {
		return exec.LookPath(cmd)
	}
	p := cmd
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, filepath.FromSlash(p))
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", p)
	}
	return p, nil
}
