package cursor

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
)

var (
	reinstall = harness.InstallFix(id)
	upgrade   = "run `kk init --upgrade`"
)

// Doctor implements harness.Adapter: the agent CLI, kk's hooks and the
// command they run, the skills, and what Cursor cannot do.
func (a *Adapter) Doctor(ctx context.Context, root string) []harness.Check {
	out := []harness.Check{a.checkBinary(ctx)}
	hooksCheck, word := checkHooks(root)
	out = append(out, hooksCheck)
	if word != "" {
		out = append(out, a.checkCommand(word))
	}
	out = append(out,
		harness.CheckSkillCopies(root, skillsDir, reinstall, upgrade),
		harness.Check{Name: "context", Level: harness.LevelOK, Message: "session start hands ENTRY.md to Cursor as additional_context; Cursor silently dropped that field for a while (around May 2026), so kk's block in AGENTS.md points agents at the knowledge base too"},
		a.checkTranscripts(root),
		harness.Check{Name: "limits", Level: harness.LevelOK, Message: "Cursor cannot add context at prompt time (beforeSubmitPrompt has no context field), so there is no prompt-time retrieval; `agent -p` runs fire no stop hook and are captured at sessionEnd; Cursor runs project hooks only in a trusted workspace"},
	)
	return out
}

func (a *Adapter) checkBinary(ctx context.Context) harness.Check {
	c := harness.Check{Name: "binary"}
	bin, err := a.lookPath(binary, oldBinary)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, "Cursor's `agent` CLI is not on PATH: kk curate, kk bootstrap and the background proposal drain cannot run Cursor", a.InstallHint()
		return c
	}
	v, err := harness.Version(ctx, bin, nil, versionTimeout, 0)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, err.Error(), a.InstallHint()
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("%s %s", filepath.Base(bin), strings.TrimSpace(v))
	return c
}

// checkHooks checks kk's entries in .cursor/hooks.json and returns the
// word they invoke kk with ("" when there are none).
func checkHooks(root string) (harness.Check, string) {
	c := harness.Check{Name: "hooks"}
	data, ok := harness.ReadForCheck(&c, root, hooksFile, harness.LevelWarn, hooksFile+" is missing: Cursor runs none of kk's hooks", reinstall)
	if !ok {
		return c, ""
	}
	var file struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		c.Level, c.Message, c.Fix = harness.LevelError, fmt.Sprintf("%s is not a valid hooks file (%v): Cursor runs none of its hooks", hooksFile, err), "fix the file, then "+reinstall
		return c, ""
	}
	word, legacy := "", false
	got := map[string][]string{}
	for ev, list := range file.Hooks {
		for _, e := range list {
			if !owned(e) {
				continue
			}
			cmd, _ := entryCommand(e)
			w, ok := ownedCommand(cmd)
			if !ok {
				legacy = true
				continue
			}
			if word == "" {
				word = w
			}
			got[ev] = append(got[ev], compact(e))
		}
	}
	switch {
	case word == "" && legacy:
		c.Level, c.Message, c.Fix = harness.LevelWarn, hooksFile+" has kenkeep's hooks, not kk's", upgrade+", which replaces them"
		return c, ""
	case word == "":
		c.Level, c.Message, c.Fix = harness.LevelWarn, hooksFile+" has none of kk's hooks: Cursor sessions are neither given the knowledge base nor captured", reinstall
		return c, ""
	case legacy:
		c.Level, c.Message, c.Fix = harness.LevelWarn, hooksFile+" still has kenkeep's hooks next to kk's: sessions are captured twice", upgrade+", which removes them"
		return c, word
	}
	want := map[string][]string{}
	for ev, list := range wanted(word) {
		for _, e := range list {
			want[ev] = append(want[ev], compact(e))
		}
	}
	for _, ev := range union(got, want) {
		if !slices.Equal(got[ev], want[ev]) {
			c.Level, c.Message, c.Fix = harness.LevelWarn, hooksFile+" has an older set of kk's hooks (event "+ev+" differs)", upgrade
			return c, word
		}
	}
	c.Level, c.Message = harness.LevelOK, "kk's hooks are in "+hooksFile+" ("+strings.Join(nativeEvents, ", ")+")"
	return c, word
}

func compact(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

func union(a, b map[string][]string) []string {
	var keys []string
	for k := range a {
		keys = append(keys, k)
	}
	for k := range b {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return slices.Compact(keys)
}

func (a *Adapter) checkCommand(word string) harness.Check {
	c := harness.Check{Name: "kk-command"}
	cmd := unquoteWord(word)
	p, err := a.lookPath(cmd)
	if err != nil {
		c.Level, c.Message, c.Fix = harness.LevelWarn, fmt.Sprintf("the hooks run %q, which is not on PATH here: every kk hook would fail in Cursor", cmd), "put kk on PATH, or run `kk init --upgrade --kk-command <path to kk>`"
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("the hooks run %s (%s)", cmd, p)
	return c
}

// checkTranscripts says where capture finds transcripts, since Cursor's
// CLI does not tell it.
func (a *Adapter) checkTranscripts(root string) harness.Check {
	c := harness.Check{Name: "transcripts"}
	projects := a.projectsDir()
	if projects == "" {
		c.Level, c.Message, c.Fix = harness.LevelWarn, "Cursor's CLI sends no transcript path and there is no home folder to look in: capture records nothing (\"no transcript\")", "set HOME, or CURSOR_TRANSCRIPT_PATH in Cursor's environment"
		return c
	}
	dir := filepath.Join(projects, slug(root), "agent-transcripts")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		c.Level, c.Message, c.Fix = harness.LevelWarn, fmt.Sprintf("Cursor's CLI sends no transcript path, and %s does not exist: capture records nothing (\"no transcript\") until Cursor writes transcripts there", dir), "run a Cursor agent session in this repository; if Cursor keeps transcripts elsewhere, set CURSOR_TRANSCRIPT_PATH in its environment"
		return c
	}
	c.Level, c.Message = harness.LevelOK, fmt.Sprintf("Cursor's CLI sends no transcript path; capture reads transcripts from %s", dir)
	return c
}
