package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/safetext"
)

// HookCommand is the shell command of a kk hook: `<kk> hook <event>
// --harness <id>`, kk being the kk command as the shell reads it.
func HookCommand(kk string, ev Event, id string) string {
	return kk + " hook " + string(ev) + " --harness " + id
}

// KKCommand is the kk command hooks run: opts.Command, or "kk".
func KKCommand(opts InstallOptions) string {
	if opts.Command == "" {
		return "kk"
	}
	return opts.Command
}

// AnchoredCommand is the kk command kk as a hook's shell reads it: quoted
// where it needs it (see ShellQuote), and, when it is a path relative to
// the repository root (it holds one of the separators seps), put after
// root, a shell expression for the root, since the harness may run its
// hooks in a subfolder.
func AnchoredCommand(kk, root, seps string) string {
	if filepath.IsAbs(kk) || !strings.ContainsAny(kk, seps) {
		return safetext.ShellQuote(kk)
	}
	return root + safetext.ShellQuote(strings.TrimPrefix(kk, "./"))
}

// hookCommandShape matches HookCommand's commands with any kk command:
// the kk command, then the event.
var hookCommandShape = regexp.MustCompile(`^(\S.*?)\s+hook ([a-z][a-z-]*) --harness (\S+)$`)

// MatchHookCommand reports whether command is a kk hook command for
// harness id, whatever kk command it was written with (an earlier `kk
// init --kk-command`), and returns that kk command as written and the
// event.
func MatchHookCommand(command, id string) (kk, event string, ok bool) {
	m := hookCommandShape.FindStringSubmatch(command)
	if m == nil || m[3] != id {
		return "", "", false
	}
	return m[1], m[2], true
}

// ReplaceOwned returns list with the items owned reports taken out and
// ours put where the first of them was, or at the end; the other items
// keep their order. had reports whether there was an owned item.
func ReplaceOwned(list []json.RawMessage, owned func(json.RawMessage) bool, ours ...json.RawMessage) (out []json.RawMessage, had bool) {
	at := -1
	for _, item := range list {
		if owned(item) {
			if at < 0 {
				at = len(out)
			}
			had = true
			continue
		}
		out = append(out, item)
	}
	if len(ours) == 0 {
		return out, had
	}
	if at < 0 {
		at = len(out)
	}
	return slices.Insert(out, at, ours...), had
}

// HookSpec is one of kk's handlers in a HookFile.
type HookSpec struct {
	On    string // the harness's event name (SessionStart, Stop, …)
	Event Event  // the kk hook it runs
	Async bool   // the harness does not wait for it (Claude Code's "async")
	// Timeout (seconds) replaces the file's Timeout for this handler, for
	// an event the harness caps lower (Codex's SessionEnd: 3 s).
	Timeout int
}

// HookFile is a hooks file in the shape Claude Code defined and Codex
// shares: {"hooks": {"<Event>": [{"matcher": …, "hooks": [{"type":
// "command", "command": …}]}]}}. kk keeps its handlers of an event in one
// matcher group of its own, recognised by the handlers' commands, and
// leaves everything else in the file as it is.
type HookFile struct {
	Path    string     // the file, relative to the repository root
	Harness string     // the harness id the hook commands name
	Specs   []HookSpec // kk's handlers, in file order
	Timeout int        // seconds, on every synchronous handler
	// Kenkeep are pieces of the commands kenkeep, the tool kk succeeds,
	// wrote into the file (its hooks ran generated scripts from these
	// folders). kk takes them out with its own handlers, so a repository
	// moving from kenkeep to kk does not run both on every event.
	Kenkeep []string
}

// HookHandler is a command handler as kk writes it into a HookFile.
type HookHandler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout,omitempty"`
	Async   bool   `json:"async,omitempty"`
}

// Want returns kk's matcher group for each event, and the events in file
// order. kk is the kk command as the shell reads it.
func (f HookFile) Want(kk string) (order []string, groups map[string]json.RawMessage) {
	handlers := map[string][]json.RawMessage{}
	for _, s := range f.Specs {
		h := HookHandler{Type: "command", Command: HookCommand(kk, s.Event, f.Harness)}
		switch {
		case s.Async:
			h.Async = true
		case s.Timeout > 0:
			h.Timeout = s.Timeout
		default:
			h.Timeout = f.Timeout
		}
		if _, seen := handlers[s.On]; !seen {
			order = append(order, s.On)
		}
		handlers[s.On] = append(handlers[s.On], MustRawJSON(h))
	}
	groups = map[string]json.RawMessage{}
	for on, hs := range handlers {
		groups[on] = json.RawMessage(`{"hooks":` + string(rawArray(hs)) + `}`)
	}
	return order, groups
}

// Owned returns the test for kk's own handler commands: those that start
// with "<kk> hook " and those of the shape of a kk hook command for this
// harness, so that changing `kk init --kk-command` replaces the old ones,
// and kenkeep's (f.Kenkeep).
func (f HookFile) Owned(kk string) func(command string) bool {
	prefix := kk + " hook "
	return func(command string) bool {
		_, _, ok := MatchHookCommand(command, f.Harness)
		return strings.HasPrefix(command, prefix) || ok ||
			slices.ContainsFunc(f.Kenkeep, func(s string) bool { return strings.Contains(command, s) })
	}
}

// Install merges kk's handlers, invoking kk as the shell word kk, into
// the file under root. The user's keys keep their order and bytes; kk's
// handlers are replaced, so an upgrade updates them and a second run
// changes nothing.
func (f HookFile) Install(root, kk string) ([]Change, error) {
	order, want := f.Want(kk)
	return f.edit(root, filepath.Join(root, f.Path), kk, order, want, false)
}

// Uninstall takes kk's handlers out of the file under root. The file
// itself goes only when it had keys and taking kk's out emptied it, so a
// file that only ever held kk's hooks is removed and a user's own empty
// file stays.
//
// A file that is not there has no handler of kk's, and is not made: an
// uninstall of a harness kk was never installed in leaves its folder as
// it was.
func (f HookFile) Uninstall(root, kk string) ([]Change, error) {
	p := filepath.Join(root, f.Path)
	if _, err := os.Lstat(p); errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	return f.edit(root, p, kk, nil, nil, hasKeys(p))
}

func (f HookFile) edit(root, p, kk string, order []string, want map[string]json.RawMessage, removeIfEmpty bool) ([]Change, error) {
	action, err := EditJSONFile(root, p, func(doc *Object) error {
		if err := editHookGroups(doc, f.Owned(kk), order, want); err != nil {
			return fmt.Errorf("%s: %w; fix the file, then run kk again", f.Path, err)
		}
		return nil
	}, removeIfEmpty)
	if err != nil || action == "" {
		return nil, err
	}
	return []Change{{Path: f.Path, Action: action}}, nil
}

// hasKeys reports whether the JSON object in p has any key.
func hasKeys(p string) bool {
	data, err := os.ReadFile(p)
	if err != nil {
		return false
	}
	o, err := ParseObject(data)
	return err == nil && o.Len() > 0
}

// rawArray joins raw JSON values into an array, keeping their bytes
// (json.Marshal would re-escape <, > and & inside the user's strings).
func rawArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

// editHookGroups rewrites the "hooks" object of a settings document.
// kk's handlers (those owned reports) are taken out of every matcher
// group; groups and event lists that this leaves empty are dropped; then
// want's group for each event goes back where kk's handlers of that event
// were, or at the end. Everything else keeps its bytes and its place.
// With an empty want it removes kk's hooks.
func editHookGroups(doc *Object, owned func(string) bool, order []string, want map[string]json.RawMessage) error {
	raw, had := doc.Get("hooks")
	hooks, err := ParseObject(raw)
	if err != nil {
		return fmt.Errorf(`"hooks" is not a JSON object`)
	}
	emptied := false
	for _, on := range hooks.Keys() {
		evRaw, _ := hooks.Get(on)
		g, wanted := want[on]
		groups, pos, removed, err := stripGroups(evRaw, owned)
		if err != nil {
			if !wanted {
				continue // not kk's shape, so not kk's handlers: leave it to the user
			}
			return fmt.Errorf("hooks.%s: %v", on, err)
		}
		if !removed && !wanted {
			continue
		}
		if wanted {
			if pos < 0 {
				pos = len(groups)
			}
			groups = slices.Insert(groups, pos, g)
		}
		if len(groups) == 0 {
			hooks.Delete(on)
			emptied = true
			continue
		}
		if err := hooks.Set(on, rawArray(groups)); err != nil {
			return err
		}
	}
	for _, on := range order {
		if _, ok := hooks.Get(on); !ok {
			if err := hooks.Set(on, rawArray([]json.RawMessage{want[on]})); err != nil {
				return err
			}
		}
	}
	if hooks.Len() == 0 {
		if had && emptied {
			doc.Delete("hooks")
		}
		return nil
	}
	return doc.Set("hooks", hooks)
}

// stripGroups takes kk's handlers out of one event's matcher groups. pos
// is where kk's group belongs in out (where its handlers were), or -1.
func stripGroups(raw json.RawMessage, owned func(string) bool) (out []json.RawMessage, pos int, removed bool, err error) {
	var groups []json.RawMessage
	if err := json.Unmarshal(raw, &groups); err != nil || groups == nil {
		return nil, -1, false, fmt.Errorf("not an array of matcher groups")
	}
	pos = -1
	for i, g := range groups {
		grp, err := ParseObject(g)
		if err != nil {
			return nil, -1, false, fmt.Errorf("item %d is not a matcher group object", i)
		}
		hraw, ok := grp.Get("hooks")
		var handlers []json.RawMessage
		if !ok || json.Unmarshal(hraw, &handlers) != nil {
			out = append(out, g)
			continue
		}
		var keep []json.RawMessage
		for _, h := range handlers {
			if c := handlerCommand(h); c != "" && owned(c) {
				continue
			}
			keep = append(keep, h)
		}
		switch {
		case len(keep) == len(handlers):
			out = append(out, g)
		case len(keep) == 0:
			removed = true
			if pos < 0 {
				pos = len(out)
			}
		default: // the user added a handler of their own to kk's group
			removed = true
			if err := grp.Set("hooks", rawArray(keep)); err != nil {
				return nil, -1, false, err
			}
			b, err := grp.MarshalJSON()
			if err != nil {
				return nil, -1, false, err
			}
			out = append(out, b)
			if pos < 0 {
				pos = len(out)
			}
		}
	}
	return out, pos, removed, nil
}

// handlerCommand is the command of a handler, or "".
func handlerCommand(h json.RawMessage) string {
	var c struct {
		Command string `json:"command"`
	}
	if json.Unmarshal(h, &c) != nil {
		return ""
	}
	return c.Command
}

// Installed lists kk's handlers in a settings document by event,
// compacted, and the kk command they were installed with (as the shell
// reads it).
func (f HookFile) Installed(doc *Object) (found map[string][]string, kk string) {
	found = map[string][]string{}
	raw, ok := doc.Get("hooks")
	if !ok {
		return found, kk
	}
	hooks, err := ParseObject(raw)
	if err != nil {
		return found, kk
	}
	for _, on := range hooks.Keys() {
		evRaw, _ := hooks.Get(on)
		var groups []struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		if json.Unmarshal(evRaw, &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				var c struct {
					Command string `json:"command"`
				}
				if json.Unmarshal(h, &c) != nil {
					continue
				}
				word, _, ok := MatchHookCommand(c.Command, f.Harness)
				if !ok {
					continue
				}
				if kk == "" {
					kk = word
				}
				var b bytes.Buffer
				if json.Compact(&b, h) == nil {
					found[on] = append(found[on], b.String())
				}
			}
		}
	}
	return found, kk
}

// hasKenkeep reports whether a settings document holds a handler of
// kenkeep's (f.Kenkeep).
func (f HookFile) hasKenkeep(doc *Object) bool {
	if len(f.Kenkeep) == 0 {
		return false
	}
	raw, ok := doc.Get("hooks")
	if !ok {
		return false
	}
	hooks, err := ParseObject(raw)
	if err != nil {
		return false
	}
	for _, on := range hooks.Keys() {
		evRaw, _ := hooks.Get(on)
		var groups []struct {
			Hooks []struct {
				Command string `json:"command"`
			} `json:"hooks"`
		}
		if json.Unmarshal(evRaw, &groups) != nil {
			continue
		}
		for _, g := range groups {
			for _, h := range g.Hooks {
				if slices.ContainsFunc(f.Kenkeep, func(s string) bool { return strings.Contains(h.Command, s) }) {
					return true
				}
			}
		}
	}
	return false
}

// Wanted is Want as compacted handlers by event, for comparing with
// Installed.
func (f HookFile) Wanted(kk string) map[string][]string {
	_, groups := f.Want(kk)
	out := map[string][]string{}
	for on, g := range groups {
		var grp struct {
			Hooks []json.RawMessage `json:"hooks"`
		}
		_ = json.Unmarshal(g, &grp) // kk's own group: always well formed
		for _, h := range grp.Hooks {
			var b bytes.Buffer
			_ = json.Compact(&b, h) // a hook of that group, well formed too
			out[on] = append(out[on], b.String())
		}
	}
	return out
}

// Check compares kk's handlers in the file under root with the ones this
// kk build installs; it is doctor's "<harness> hooks" check. disabled,
// when set, looks for settings that switch the hooks off, after the file
// parsed and before the comparison. staleFix is the fix of handlers that
// differ. found are the handlers Installed found.
func (f HookFile) Check(root, staleFix string, disabled func() (Check, bool)) (c Check, found map[string][]string) {
	c = Check{Name: f.Harness + " hooks"}
	install := "kk init --harnesses " + f.Harness
	data, err := os.ReadFile(filepath.Join(root, f.Path))
	if errors.Is(err, fs.ErrNotExist) {
		c.Level, c.Message, c.Fix = LevelError, f.Path+" does not exist, so kk's hooks are not installed", install
		return c, nil
	}
	if err != nil {
		c.Level, c.Message = LevelError, err.Error()
		return c, nil
	}
	doc, err := ParseObject(data)
	if err != nil {
		c.Level, c.Message = LevelError, fmt.Sprintf("%s: %v", f.Path, err)
		c.Fix = "fix the JSON in " + f.Path + ", then run " + install + " --upgrade"
		return c, nil
	}
	if disabled != nil {
		if off, ok := disabled(); ok {
			return off, nil
		}
	}
	found, kk := f.Installed(doc)
	kenkeep := f.hasKenkeep(doc)
	switch {
	case len(found) == 0 && kenkeep:
		c.Level, c.Message, c.Fix = LevelWarn, f.Path+" has kenkeep's hooks, not kk's", install+" --upgrade, which replaces them"
		return c, found
	case len(found) == 0:
		c.Level, c.Message, c.Fix = LevelError, "kk's hooks are not in "+f.Path, install
		return c, found
	case kenkeep:
		c.Level, c.Message, c.Fix = LevelWarn, f.Path+" still has kenkeep's hooks next to kk's: sessions are captured twice", install+" --upgrade, which removes them"
		return c, found
	}
	if !handlersEqual(found, f.Wanted(kk)) {
		c.Level, c.Message = LevelWarn, "kk's hooks in "+f.Path+" differ from the ones this kk version installs"
		c.Fix = staleFix
		return c, found
	}
	c.Level, c.Message = LevelOK, fmt.Sprintf("kk's hooks are installed in %s (%s)", f.Path, strings.Join(slices.Sorted(maps.Keys(found)), ", "))
	return c, found
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

// HooksAndSkills is what Claude Code's and Codex's adapters install: kk's
// handlers in a HookFile and the skills as managed folders (see
// InstallManagedSkills).
type HooksAndSkills struct {
	Hooks     HookFile
	SkillsDir string
	// Root is a shell expression for the repository root, where a kk
	// command relative to the root is anchored (see AnchoredCommand).
	Root string
	// Prune are folders Uninstall removes when it leaves them empty.
	Prune []string
}

// kk is the kk command as the hooks' shell reads it.
func (l HooksAndSkills) kk(opts InstallOptions) string {
	return AnchoredCommand(KKCommand(opts), l.Root, "/")
}

// Install renders the skills (a bad one stops it before anything is
// written), merges kk's handlers into the hooks file and writes the
// skills.
func (l HooksAndSkills) Install(opts InstallOptions) ([]Change, error) {
	rendered, err := RenderSkills(opts.Skills)
	if err != nil {
		return nil, err
	}
	changes, err := l.Hooks.Install(opts.Root, l.kk(opts))
	if err != nil {
		return nil, err
	}
	skillChanges, err := InstallManagedSkills(opts.Root, l.SkillsDir, rendered)
	return append(changes, skillChanges...), err
}

// Uninstall takes kk's handlers out of the hooks file and removes kk's
// skill folders, then the Prune folders left empty.
func (l HooksAndSkills) Uninstall(opts InstallOptions) ([]Change, error) {
	changes, err := l.Hooks.Uninstall(opts.Root, l.kk(opts))
	if err != nil {
		return nil, err
	}
	skillChanges, err := UninstallManagedSkills(opts.Root, l.SkillsDir, opts.Skills)
	RemoveEmptyDirs(opts.Root, l.Prune...)
	return append(changes, skillChanges...), err
}
