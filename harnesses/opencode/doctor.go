package opencode

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

var (
	reinstall = harness.InstallFix(id)
	upgrade   = "run `kk init --upgrade`"
)

// Doctor implements harness.Adapter: the opencode CLI, the plugin and its
// registration, the command it runs, the skills, and what OpenCode cannot
// do.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	out := []harness.Check{a.checkBinary(ctx), checkConfig(root)}
	pluginCheck, command := checkPlugin(root)
	out = append(out, pluginCheck)
	if command != "" {
		out = append(out, a.checkCommand(command))
	}
	return append(out,
		harness.CheckSkillCopies(root, skillsDir, reinstall, upgrade),
		harness.Check{Name: "context", Level: harness.LevelOK, Message: "OpenCode takes no context from hooks: at every session start kk writes " + contextFile + " (kept out of git by .ai/kenkeep/.gitignore), which " + configFile + " lists under instructions; a turn that starts before the hook has written it sees the previous session's context"},
		harness.Check{Name: "limits", Level: harness.LevelOK, Message: "OpenCode has no session-end event: capture runs at the end of every turn (session.idle) and before compaction, each time through `opencode export` (1.4–3 s, in the background); there is no prompt-time retrieval; sub-agent sessions are not captured on their own"},
	)
}

func (a *Adapter) checkBinary(ctx context.Context) harness.Check {
	c := harness.Check{Name: "binary"}
	bin, err := a.lookPath(binary)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, "`opencode` is not on PATH: capture cannot export transcripts, and kk curate, kk bootstrap and the background proposal drain cannot run OpenCode", a.InstallHint()
		return c
	}
	v, err := harness.Version(ctx, bin, nil, versionTimeout, 0)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, err.Error(), a.InstallHint()
		return c
	}
	c.Level, c.Message = harness.LevelOK, "opencode "+strings.TrimSpace(v)
	return c
}

// checkConfig checks that .opencode/opencode.json lists the plugin and
// the context file.
func checkConfig(root string) harness.Check {
	c := harness.Check{Name: "config"}
	data, ok := harness.ReadForCheck(&c, root, configFile, harness.LevelWarn, configFile+" is missing: OpenCode loads neither kk's plugin nor its context file", reinstall)
	if !ok {
		return c
	}
	var cfg struct {
		Plugin       []json.RawMessage `json:"plugin"`
		Instructions []json.RawMessage `json:"instructions"`
	}
	if err := json.Unmarshal(data, &cfg); err != nil {
		c.Level, c.Message, c.Fix = harness.LevelError, fmt.Sprintf("%s is not a valid OpenCode config for kk (%v)", configFile, err), "fix the file, then "+reinstall
		return c
	}
	var missing []string
	if !hasEntry(cfg.Plugin, func(raw json.RawMessage) bool { return sameString(raw, pluginEntry) }) {
		missing = append(missing, fmt.Sprintf("%q under plugin (without it OpenCode never loads kk's plugin: no hook runs)", pluginEntry))
	}
	if !hasEntry(cfg.Instructions, isContextEntry) {
		missing = append(missing, fmt.Sprintf("%q under instructions (without it OpenCode never reads the session-start context)", contextFile))
	}
	if len(missing) > 0 {
		c.Level, c.Message, c.Fix = harness.LevelWarn, configFile+" lacks "+strings.Join(missing, " and "), reinstall
		return c
	}
	c.Level, c.Message = harness.LevelOK, configFile+" loads kk's plugin and lists "+contextFile+" under instructions"
	return c
}

func hasEntry(list []json.RawMessage, match func(json.RawMessage) bool) bool {
	for _, raw := range list {
		if match(raw) {
			return true
		}
	}
	return false
}

// checkPlugin checks the plugin file and returns the kk command it runs
// ("" when there is no plugin of kk's).
func checkPlugin(root string) (harness.Check, string) {
	c := harness.Check{Name: "plugin"}
	src, ok := harness.ReadForCheck(&c, root, pluginFile, harness.LevelWarn, pluginFile+" is missing: OpenCode sessions are neither given the knowledge base nor captured", reinstall)
	if !ok {
		return c, ""
	}
	command, ok := installedCommand(src)
	if !bytes.HasPrefix(src, pluginHeader) || !ok {
		c.Level, c.Message, c.Fix = harness.LevelWarn, pluginFile+" is not kk's plugin (kenkeep's, or edited)", upgrade+", which writes kk's"
		return c, ""
	}
	if want, err := renderPlugin(command); err != nil || !bytes.Equal(src, want) {
		c.Level, c.Message, c.Fix = harness.LevelWarn, pluginFile+" differs from this kk's plugin", upgrade
		return c, command
	}
	c.Level, c.Message = harness.LevelOK, pluginFile+" is current"
	return c, command
}

func (a *Adapter) checkCommand(command string) harness.Check {
	c := harness.Check{Name: "kk-command"}
	p, err := a.lookPath(command)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, fmt.Sprintf("the plugin runs %q, which is not on PATH here: every kk hook would fail in OpenCode", command), "put kk on PATH, or run `kk init --upgrade --kk-command <path to kk>`"
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("the plugin runs %s (%s)", command, p)
	return c
}
