package cursor

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// hook is one entry kk adds to .cursor/hooks.json.
type hook struct {
	native  string        // Cursor's event name
	event   harness.Event // the kk hook it runs
	timeout int           // seconds Cursor waits for it
}

// hooks are kk's entries, in the order they are written. Cursor runs the
// hooks of an event in list order and holds the first turn until the
// sessionStart hooks end, so those are short: proposal-drain detaches
// itself. In `agent -p` runs stop does not fire; sessionEnd captures them.
var hooks = []hook{
	{"sessionStart", harness.SessionStart, 10},
	{"sessionStart", harness.ProposalDrain, 10},
	{"stop", harness.Capture, 30},
	{"stop", harness.GraphHint, 10},
	{"preCompact", harness.Capture, 30},
	{"sessionEnd", harness.Capture, 30},
	{"sessionEnd", harness.LintTick, 10},
}

// nativeEvents are the Cursor events kk uses, in the order new event keys
// are added to the file.
var nativeEvents = []string{"sessionStart", "stop", "preCompact", "sessionEnd"}

// ownedCommand reports whether command is one of kk's hook commands for
// Cursor, whatever command invoked kk then (an earlier --kk-command), so
// that an upgrade replaces them instead of adding a second set; it
// returns the word that invoked kk.
func ownedCommand(command string) (word string, ok bool) {
	word, ev, ok := harness.MatchHookCommand(command, id)
	if !ok || !slices.Contains(harness.Events, harness.Event(ev)) {
		return "", false
	}
	return word, true
}

// kenkeepScripts mark the entries of kenkeep, the tool kk succeeds: its
// hooks ran generated scripts from these folders. kk replaces them, so a
// repository moving to kk does not capture every session twice.
var kenkeepScripts = []string{".ai/kenkeep/hooks/cursor/kk-", ".cursor/hooks/kk-"}

// entry is the shape of a .cursor/hooks.json hook.
type entry struct {
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
}

// entryCommand returns the command of a hook entry, if it has one.
func entryCommand(raw json.RawMessage) (string, bool) {
	var e struct {
		Command *string `json:"command"`
	}
	if json.Unmarshal(raw, &e) != nil || e.Command == nil {
		return "", false
	}
	return *e.Command, true
}

// owned reports whether a hook entry is kk's (or kenkeep's).
func owned(raw json.RawMessage) bool {
	cmd, ok := entryCommand(raw)
	if !ok {
		return false
	}
	if _, ok := ownedCommand(cmd); ok {
		return true
	}
	for _, s := range kenkeepScripts {
		if strings.Contains(cmd, s) {
			return true
		}
	}
	return false
}

// safeWord matches a command that needs no quoting in sh or cmd.exe.
var safeWord = regexp.MustCompile(`^[A-Za-z0-9_./:\\@%+=,-]+$`)

// commandWord returns how a hook command names kk: the command as is when
// it needs no quoting, in double quotes (which sh and cmd.exe both read)
// when it has spaces, and an error when neither shell could read it back.
func commandWord(command string) (string, error) {
	switch {
	case command == "":
		return "kk", nil
	case safeWord.MatchString(command):
		return command, nil
	case !strings.ContainsAny(command, "\"$`!\\\n\r"):
		return `"` + command + `"`, nil
	}
	return "", fmt.Errorf("kk command %q cannot be written into a hook command line; install kk on a path without quotes, $, backquotes, ! or backslashes", command)
}

// unquoteWord undoes commandWord.
func unquoteWord(w string) string {
	if len(w) >= 2 && strings.HasPrefix(w, `"`) && strings.HasSuffix(w, `"`) {
		return w[1 : len(w)-1]
	}
	return w
}

// wanted returns kk's entries per Cursor event, encoded.
func wanted(word string) map[string][]json.RawMessage {
	out := map[string][]json.RawMessage{}
	for _, h := range hooks {
		out[h.native] = append(out[h.native], harness.MustRawJSON(entry{Command: harness.HookCommand(word, h.event, id), Timeout: h.timeout}))
	}
	return out
}

// Install implements harness.Adapter: kk's entries go into
// .cursor/hooks.json (where the user's entries stay as and where they
// are) and the skills into .cursor/skills/.
func (a *Adapter) Install(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	word, err := commandWord(opts.Command)
	if err != nil {
		return nil, err
	}
	if err := checkSkillNames(opts.Skills); err != nil {
		return nil, err
	}
	want := wanted(word)
	var changes []harness.Change
	action, err := harness.EditJSONFile(opts.Root, filepath.Join(opts.Root, filepath.FromSlash(hooksFile)), func(o *harness.Object) error {
		if _, ok := o.Get("version"); !ok {
			if err := o.Set("version", 1); err != nil {
				return err
			}
		}
		return editHooks(o, want)
	}, false)
	if err != nil {
		return nil, err
	}
	changes = harness.AddChange(changes, hooksFile, action)
	// The neutral SKILL.md (front matter name, description, version) is
	// already in the Agent Skills format Cursor reads: it is copied byte
	// for byte.
	sc, err := harness.WriteFiles(ctx, opts.Root, harness.SkillFiles(skillsDir, opts.Skills))
	return append(changes, sc...), err
}

// Uninstall implements harness.Adapter: it removes kk's (and kenkeep's)
// hook entries, the file when nothing else is left in it, and kk's skills.
func (a *Adapter) Uninstall(ctx context.Context, opts harness.InstallOptions) ([]harness.Change, error) {
	if err := checkSkillNames(opts.Skills); err != nil {
		return nil, err
	}
	var changes []harness.Change
	action, err := harness.EditJSONFile(opts.Root, filepath.Join(opts.Root, filepath.FromSlash(hooksFile)), func(o *harness.Object) error {
		if _, ok := o.Get("hooks"); !ok {
			return nil
		}
		if err := editHooks(o, nil); err != nil {
			return err
		}
		if keys := o.Keys(); len(keys) == 1 && keys[0] == "version" {
			o.Delete("version") // nothing of the user's is left: remove the file
		}
		return nil
	}, true)
	if err != nil {
		return nil, err
	}
	changes = harness.AddChange(changes, hooksFile, action)
	skills := harness.SkillFiles(skillsDir, opts.Skills)
	sc, err := harness.RemoveFiles(ctx, opts.Root, harness.Rels(skills))
	changes = append(changes, sc...)
	if err != nil {
		return changes, err
	}
	harness.RemoveEmptyDirs(opts.Root, append(harness.Dirs(skills), skillsDir, ".cursor")...)
	return changes, nil
}

// editHooks sets kk's entries of every event to want (nil removes them
// all). An event's entries that are not kk's keep their order; kk's go
// where its first entry was, or at the end.
func editHooks(o *harness.Object, want map[string][]json.RawMessage) error {
	hooksObj, err := harness.ParseObject(nil)
	if err != nil {
		return err
	}
	if raw, ok := o.Get("hooks"); ok {
		if hooksObj, err = harness.ParseObject(raw); err != nil {
			return fmt.Errorf("%s: \"hooks\" is not a JSON object (%v); fix the file, then run kk again", hooksFile, err)
		}
	}
	events := hooksObj.Keys()
	for _, ev := range nativeEvents {
		if !slices.Contains(events, ev) && len(want[ev]) > 0 {
			events = append(events, ev)
		}
	}
	for _, ev := range events {
		var list []json.RawMessage
		if raw, ok := hooksObj.Get(ev); ok {
			if err := json.Unmarshal(raw, &list); err != nil {
				return fmt.Errorf("%s: hooks.%s is not a list of hooks (%v); fix the file, then run kk again", hooksFile, ev, err)
			}
		}
		out, hadOwned := harness.ReplaceOwned(list, owned, want[ev]...)
		switch {
		case len(out) > 0:
			if err := hooksObj.Set(ev, out); err != nil {
				return err
			}
		case hadOwned:
			hooksObj.Delete(ev) // only kk's entries were there
		}
	}
	if hooksObj.Len() == 0 {
		o.Delete("hooks")
		return nil
	}
	return o.Set("hooks", hooksObj)
}

// skillName is the form of a skill's folder name (Agent Skills rules).
var skillName = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

func checkSkillNames(skills map[string][]byte) error {
	_, err := harness.SkillNames(skills, skillName.MatchString, "use lowercase letters, digits and single hyphens")
	return err
}
