package cursor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/templates"
)

const (
	levelOK   = "ok"
	levelWarn = "warn"
	levelErr  = "error"

	reinstall = "run `kk init --harnesses cursor`"
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
		checkInstalledSkills(root),
		harness.Check{Name: "context", Level: levelOK, Message: "session start hands ENTRY.md to Cursor as additional_context; Cursor silently dropped that field for a while (around May 2026), so kk's block in AGENTS.md points agents at the knowledge base too"},
		a.checkTranscripts(root),
		harness.Check{Name: "limits", Level: levelOK, Message: "Cursor cannot add context at prompt time (beforeSubmitPrompt has no context field), so there is no prompt-time retrieval; `agent -p` runs fire no stop hook and are captured at sessionEnd; Cursor runs project hooks only in a trusted workspace"},
	)
	return out
}

func (a *Adapter) checkBinary(ctx context.Context) harness.Check {
	c := harness.Check{Name: "binary"}
	bin, err := a.lookPath(binary, oldBinary)
	if err != nil {
		c.Level, c.Message, c.Fix = levelWarn, "Cursor's `agent` CLI is not on PATH: kk curate, kk bootstrap and the background proposal drain cannot run Cursor", a.InstallHint()
		return c
	}
	v, err := version(ctx, bin)
	if err != nil {
		c.Level, c.Message, c.Fix = levelWarn, err.Error(), a.InstallHint()
		return c
	}
	c.Level, c.Message = levelOK, fmt.Sprintf("%s %s", filepath.Base(bin), v)
	return c
}

// checkHooks checks kk's entries in .cursor/hooks.json and returns the
// word they invoke kk with ("" when there are none).
func checkHooks(root string) (harness.Check, string) {
	c := harness.Check{Name: "hooks"}
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(hooksFile)))
	if os.IsNotExist(err) {
		c.Level, c.Message, c.Fix = levelWarn, hooksFile+" is missing: Cursor runs none of kk's hooks", reinstall
		return c, ""
	}
	if err != nil {
		c.Level, c.Message, c.Fix = levelErr, fmt.Sprintf("%s cannot be read: %v", hooksFile, err), "check the file's permissions"
		return c, ""
	}
	var file struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		c.Level, c.Message, c.Fix = levelErr, fmt.Sprintf("%s is not a valid hooks file (%v): Cursor runs none of its hooks", hooksFile, err), "fix the file, then "+reinstall
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
			m := ownedCommand.FindStringSubmatch(cmd)
			if m == nil {
				legacy = true
				continue
			}
			if word == "" {
				word = m[1]
			}
			got[ev] = append(got[ev], compact(e))
		}
	}
	switch {
	case word == "" && legacy:
		c.Level, c.Message, c.Fix = levelWarn, hooksFile+" has kenkeep's hooks, not kk's", upgrade+", which replaces them"
		return c, ""
	case word == "":
		c.Level, c.Message, c.Fix = levelWarn, hooksFile+" has none of kk's hooks: Cursor sessions are neither given the knowledge base nor captured", reinstall
		return c, ""
	case legacy:
		c.Level, c.Message, c.Fix = levelWarn, hooksFile+" still has kenkeep's hooks next to kk's: sessions are captured twice", upgrade+", which removes them"
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
			c.Level, c.Message, c.Fix = levelWarn, hooksFile+" has an older set of kk's hooks (event "+ev+" differs)", upgrade
			return c, word
		}
	}
	c.Level, c.Message = levelOK, "kk's hooks are in "+hooksFile+" ("+strings.Join(nativeEvents, ", ")+")"
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
		c.Level, c.Message, c.Fix = levelWarn, fmt.Sprintf("the hooks run %q, which is not on PATH here: every kk hook would fail in Cursor", cmd), "put kk on PATH, or run `kk init --upgrade --kk-command <path to kk>`"
		return c
	}
	c.Level, c.Message = levelOK, fmt.Sprintf("the hooks run %s (%s)", cmd, p)
	return c
}

// shippedSkills are the skill templates embedded in kk: name → SKILL.md.
func shippedSkills() map[string][]byte {
	out := map[string][]byte{}
	entries, _ := fs.ReadDir(templates.Skills, "skills") // embedded: cannot fail
	for _, e := range entries {
		if data, err := fs.ReadFile(templates.Skills, path.Join("skills", e.Name(), "SKILL.md")); err == nil {
			out[e.Name()] = data
		}
	}
	return out
}

// checkInstalledSkills compares the installed skills with the ones this kk ships.
func checkInstalledSkills(root string) harness.Check {
	c := harness.Check{Name: "skills"}
	var missing, old []string
	skills := shippedSkills()
	for _, name := range sortedNames(skills) {
		data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(skillsDir), name, "SKILL.md"))
		switch {
		case err != nil:
			missing = append(missing, name)
		case !bytes.Equal(data, skills[name]):
			old = append(old, name)
		}
	}
	switch {
	case len(missing) > 0:
		c.Level, c.Message, c.Fix = levelWarn, fmt.Sprintf("skills missing from %s: %s", skillsDir, strings.Join(missing, ", ")), reinstall
	case len(old) > 0:
		c.Level, c.Message, c.Fix = levelWarn, fmt.Sprintf("skills in %s differ from this kk's: %s", skillsDir, strings.Join(old, ", ")), upgrade
	default:
		c.Level, c.Message = levelOK, fmt.Sprintf("%d skills in %s are current", len(skills), skillsDir)
	}
	return c
}

// checkTranscripts says where capture finds transcripts, since Cursor's
// CLI does not tell it.
func (a *Adapter) checkTranscripts(root string) harness.Check {
	c := harness.Check{Name: "transcripts"}
	projects := a.projectsDir()
	if projects == "" {
		c.Level, c.Message, c.Fix = levelWarn, "Cursor's CLI sends no transcript path and there is no home folder to look in: capture records nothing (\"no transcript\")", "set HOME, or CURSOR_TRANSCRIPT_PATH in Cursor's environment"
		return c
	}
	dir := filepath.Join(projects, slug(root), "agent-transcripts")
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		c.Level, c.Message, c.Fix = levelWarn, fmt.Sprintf("Cursor's CLI sends no transcript path, and %s does not exist: capture records nothing (\"no transcript\") until Cursor writes transcripts there", dir), "run a Cursor agent session in this repository; if Cursor keeps transcripts elsewhere, set CURSOR_TRANSCRIPT_PATH in its environment"
		return c
	}
	c.Level, c.Message = levelOK, fmt.Sprintf("Cursor's CLI sends no transcript path; capture reads transcripts from %s", dir)
	return c
}
