package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// versionTimeout bounds `claude --version`.
var versionTimeout = 5 * time.Second

// Doctor checks that claude is on PATH, that kk's hooks in
// .claude/settings.json are there, current and not switched off, and that
// the skills match this kk build.
func (*Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	return []harness.Check{
		binaryCheck(ctx),
		hooksCheck(root),
		skillsCheck(root),
	}
}

// binaryCheck looks for claude on PATH and asks it for its version.
func binaryCheck(ctx context.Context) harness.Check {
	c := harness.Check{Name: "claude binary"}
	p, err := exec.LookPath(binary)
	if err != nil {
		c.Level, c.Message = "warn", "claude is not on PATH; the hooks, launchers and headless runs need it"
		c.Fix = (&Adapter{}).InstallHint()
		return c
	}
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, p, "--version")
	cmd.Env = guardEnv(os.Environ())
	cmd.WaitDelay = time.Second
	out, err := cmd.Output()
	if err != nil {
		c.Level, c.Message = "warn", fmt.Sprintf("%s --version failed: %v", p, err)
		c.Fix = "check that " + p + " is a working Claude Code install"
		return c
	}
	version, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	c.Level, c.Message = "ok", fmt.Sprintf("%s (%s)", p, version)
	return c
}

// hooksCheck compares kk's handlers in the settings file with the ones
// this kk build installs.
func hooksCheck(root string) harness.Check {
	c := harness.Check{Name: "claude hooks"}
	install := "kk init --harnesses " + id
	data, err := os.ReadFile(filepath.Join(root, settingsFile))
	if errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message, c.Fix = "error", settingsFile+" does not exist, so kk's hooks are not installed", install
		return c
	}
	if err != nil {
		c.Level, c.Message = "error", err.Error()
		return c
	}
	doc, err := harness.ParseObject(data)
	if err != nil {
		c.Level, c.Message = "error", fmt.Sprintf("%s: %v", settingsFile, err)
		c.Fix = "fix the JSON in " + settingsFile + ", then run " + install + " --upgrade"
		return c
	}
	for _, f := range []string{settingsFile, localFile} {
		if hooksDisabled(filepath.Join(root, f)) {
			c.Level, c.Message = "error", f+" sets disableAllHooks, so Claude Code runs none of kk's hooks"
			c.Fix = "remove disableAllHooks from " + f
			return c
		}
	}
	found, kk := installedHandlers(doc)
	if len(found) == 0 {
		c.Level, c.Message, c.Fix = "error", "kk's hooks are not in "+settingsFile, install
		return c
	}
	if !handlersEqual(found, wantHandlers(kk)) {
		c.Level, c.Message = "warn", "kk's hooks in "+settingsFile+" differ from the ones this kk version installs"
		c.Fix = install + " --upgrade"
		return c
	}
	c.Level, c.Message = "ok", fmt.Sprintf("kk's hooks are installed in %s (%s)", settingsFile, strings.Join(sortedKeys(found), ", "))
	return c
}

// wantHandlers is wantHooks as compacted handlers by event.
func wantHandlers(kk string) map[string][]string {
	_, groups := wantHooks(kk)
	out := map[string][]string{}
	for on, g := range groups {
		var grp struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		json.Unmarshal(g, &grp)
		for _, h := range grp.Hooks {
			var b bytes.Buffer
			json.Compact(&b, h)
			out[on] = append(out[on], b.String())
		}
	}
	return out
}

// handlersEqual reports whether a and b hold the same handlers, in the
// same order, for the same events.
func handlersEqual(a, b map[string][]string) bool {
	for k, v := range a {
		if !slices.Equal(v, b[k]) {
			return false
		}
	}
	return len(a) == len(b)
}

// hooksDisabled reports whether the settings file at p sets
// disableAllHooks.
func hooksDisabled(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	var s struct {
		DisableAllHooks bool `json:"disableAllHooks"`
	}
	return json.Unmarshal(data, &s) == nil && s.DisableAllHooks
}

// skillsCheck compares the installed skills with the ones this kk build
// ships.
func skillsCheck(root string) harness.Check {
	c := harness.Check{Name: "claude skills"}
	shipped, err := shippedSkills()
	if err == nil {
		shipped, err = renderSkills(shipped)
	}
	if err != nil {
		c.Level, c.Message = "error", "the skills built into kk: "+err.Error()
		return c
	}
	var missing, stale []string
	for _, name := range sortedKeys(shipped) {
		got, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(skillsDir), name, "SKILL.md"))
		switch {
		case err != nil:
			missing = append(missing, name)
		case !bytes.Equal(got, shipped[name]):
			stale = append(stale, name)
		}
	}
	switch {
	case len(missing) > 0:
		c.Level = "error"
		c.Message = fmt.Sprintf("missing from %s: %s", skillsDir, strings.Join(missing, ", "))
		c.Fix = "kk init --harnesses " + id + " --upgrade"
	case len(stale) > 0:
		c.Level = "warn"
		c.Message = fmt.Sprintf("differ from this kk version's: %s", strings.Join(prefixAll(skillsDir, stale), ", "))
		c.Fix = "kk init --harnesses " + id + " --upgrade"
	default:
		c.Level, c.Message = "ok", fmt.Sprintf("%d skills in %s", len(shipped), skillsDir)
	}
	return c
}

// prefixAll returns the SKILL.md paths of the named skills.
func prefixAll(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = path.Join(dir, n, "SKILL.md")
	}
	return out
}
