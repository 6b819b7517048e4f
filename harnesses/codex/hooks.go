package codex

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// handlerSpec is one kk handler in .codex/hooks.json.
type handlerSpec struct {
	on    string // Codex's event name
	event harness.Event
}

// handlerSpecs are kk's hooks in Codex, in file order (harnesses.md §2.1).
// Codex skips async handlers, so every handler is synchronous: the
// proposal-drain hook starts a detached drain and returns at once, and
// lint-tick only lints every lintEveryNSessions sessions, within kk's hook
// deadline. Codex starts the handlers of one event together. There is no
// SessionEnd in the Codex builds the reference verified; Stop (every turn)
// and PreCompact capture the session.
var handlerSpecs = []handlerSpec{
	{on: "SessionStart", event: harness.SessionStart},
	{on: "SessionStart", event: harness.ProposalDrain},
	{on: "SessionStart", event: harness.LintTick},
	{on: "UserPromptSubmit", event: harness.PromptContext},
	{on: "Stop", event: harness.Capture},
	{on: "PreCompact", event: harness.Capture},
}

// hookTimeout (seconds) bounds each kk handler; Codex's default is 600.
// kk keeps its own, shorter deadlines; this only guards against a hung
// process. The key is "timeout" (openai/codex#35382).
const hookTimeout = 30

// handler is a command handler as written into .codex/hooks.json.
type handler struct {
	Type    string `json:"type"`
	Command string `json:"command"`
	Timeout int    `json:"timeout"`
}

// hookCommand is the shell command a handler runs; kk is the kk command
// as the shell reads it (quoted where needed).
func hookCommand(kk string, ev harness.Event) string {
	return kk + " hook " + string(ev) + " --harness " + id
}

// kkShape matches a kk hook command whatever kk command it was installed
// with, so that changing `kk init --kk-command` replaces the old entries.
var kkShape = regexp.MustCompile(`^\S.* hook [a-z][a-z-]* --harness ` + id + `$`)

// ownedBy returns the test for kk's own handlers: commands that start with
// "<kk> hook " or have the shape of a kk hook command for this harness.
func ownedBy(kk string) func(string) bool {
	prefix := kk + " hook "
	return func(command string) bool {
		return strings.HasPrefix(command, prefix) || kkShape.MatchString(command)
	}
}

// wantHooks returns kk's matcher group for each Codex event, and the
// events in file order. kk is the kk command as the shell reads it.
func wantHooks(kk string) (order []string, groups map[string]json.RawMessage) {
	handlers := map[string][]json.RawMessage{}
	for _, s := range handlerSpecs {
		h := handler{Type: "command", Command: hookCommand(kk, s.event), Timeout: hookTimeout}
		if _, seen := handlers[s.on]; !seen {
			order = append(order, s.on)
		}
		handlers[s.on] = append(handlers[s.on], marshal(h))
	}
	groups = map[string]json.RawMessage{}
	for on, hs := range handlers {
		groups[on] = json.RawMessage(`{"hooks":` + string(rawArray(hs)) + `}`)
	}
	return order, groups
}

// marshal encodes v without HTML escaping (a command may hold & or <).
func marshal(v any) json.RawMessage {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err) // only kk's own plain structs are marshalled here
	}
	return bytes.TrimRight(b.Bytes(), "\n")
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

// editHooks rewrites the "hooks" object of a settings document. kk's
// handlers (those owned reports) are taken out of every matcher group;
// groups and event lists that this leaves empty are dropped; then want's
// group for each event goes back where kk's handlers of that event were,
// or at the end. Everything else keeps its bytes and its place. With an
// empty want it removes kk's hooks.
func editHooks(doc *harness.Object, owned func(string) bool, order []string, want map[string]json.RawMessage) error {
	raw, had := doc.Get("hooks")
	hooks, err := harness.ParseObject(raw)
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
		grp, err := harness.ParseObject(g)
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
			var c struct {
				Command string `json:"command"`
			}
			if json.Unmarshal(h, &c) == nil && c.Command != "" && owned(c.Command) {
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

// installedHandlers lists kk's handlers in a settings document by event,
// compacted, and the kk command they were installed with (as the shell
// reads it).
func installedHandlers(doc *harness.Object) (map[string][]string, string) {
	found := map[string][]string{}
	kk := ""
	raw, ok := doc.Get("hooks")
	if !ok {
		return found, kk
	}
	hooks, err := harness.ParseObject(raw)
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
				if json.Unmarshal(h, &c) != nil || !kkShape.MatchString(c.Command) {
					continue
				}
				if kk == "" {
					kk = c.Command[:strings.LastIndex(c.Command, " hook ")]
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

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
