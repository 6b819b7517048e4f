package gemini

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// hookSpec maps one Gemini CLI hook event onto one kk hook event.
type hookSpec struct {
	Event     string // Gemini's event name
	KK        harness.Event
	TimeoutMS int
	About     string // the hook's description, shown in /hooks panel
}

// hookSpecs are kk's hooks in Gemini CLI, in the order they are written.
// Gemini waits for its hooks (default timeout 60 s); kk's runtime keeps
// far shorter deadlines and detaches slow work, so the timeouts here are
// only a backstop.
var hookSpecs = []hookSpec{
	{"SessionStart", harness.SessionStart, 10000, "kk: give the model the knowledge base entry point (ENTRY.md)"},
	{"SessionStart", harness.ProposalDrain, 10000, "kk: extract knowledge candidates from captured sessions in the background"},
	{"BeforeAgent", harness.PromptContext, 10000, "kk: add the knowledge nodes relevant to the prompt"},
	{"AfterAgent", harness.Capture, 30000, "kk: capture the session into .ai/kenkeep/_sessions"},
	{"AfterAgent", harness.GraphHint, 10000, "kk: once per session, ask to record in the knowledge graph what the work changed"},
	{"PreCompress", harness.Capture, 30000, "kk: capture the session before history is compressed"},
	{"SessionEnd", harness.Capture, 30000, "kk: capture the session as it ends"},
	{"SessionEnd", harness.LintTick, 10000, "kk: lint the knowledge base every few sessions"},
}

// hookEntry is one hook configuration of a hook definition.
type hookEntry struct {
	Name        string `json:"name"`
	Type        string `json:"type"`
	Command     string `json:"command"`
	Description string `json:"description,omitempty"`
	Timeout     int    `json:"timeout,omitempty"`
}

// hookName is the name of kk's entry for a kk event; /hooks disable
// <name> turns it off in Gemini CLI.
func hookName(ev harness.Event) string { return "kk-" + string(ev) }

// owned reports whether a hook entry is kk's: named kk-… and running
// `… hook <event> --harness gemini`, whatever the kk command was.
func owned(raw json.RawMessage) bool {
	var e struct {
		Name    string `json:"name"`
		Command string `json:"command"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return false
	}
	_, _, ok := harness.MatchHookCommand(e.Command, id)
	return strings.HasPrefix(e.Name, "kk-") && ok
}

// hookCommand returns `<command> hook <event> --harness gemini`. A
// relative command path is anchored at $GEMINI_PROJECT_DIR, which Gemini
// CLI replaces with the (quoted) project directory before running it.
func hookCommand(command string, ev harness.Event) string {
	return harness.HookCommand(harness.AnchoredCommand(command, projectDirVar, `/\`), ev, id)
}

// desiredHooks returns kk's entries per Gemini event, and the events in
// the order they are first written.
func desiredHooks(command string) (map[string][]json.RawMessage, []string, error) {
	out := map[string][]json.RawMessage{}
	var order []string
	for _, s := range hookSpecs {
		raw, err := harness.RawJSON(hookEntry{
			Name:        hookName(s.KK),
			Type:        "command",
			Command:     hookCommand(command, s.KK),
			Description: s.About,
			Timeout:     s.TimeoutMS,
		})
		if err != nil {
			return nil, nil, err
		}
		if _, ok := out[s.Event]; !ok {
			order = append(order, s.Event)
		}
		out[s.Event] = append(out[s.Event], raw)
	}
	return out, order, nil
}

// set sets key of o to v, encoded without HTML escaping (Object.Set
// would escape the & < > of commands).
func set(o *harness.Object, key string, v any) error {
	raw, err := harness.RawJSON(v)
	if err != nil {
		return err
	}
	return o.Set(key, raw)
}

// setHooks makes kk's entries in settings (the parsed settings.json) equal
// to want (event → entries; nil removes them all). kk's entries are
// replaced where they stand, in the first group that holds any for that
// event; an event without them gets a new group at the end of its list.
// Groups, events and the "hooks" object left empty by removing kk's
// entries are removed; everything else — other keys, other hooks, group
// matchers, legacy non-event fields such as hooks.disabled — is kept.
func setHooks(settings *harness.Object, want map[string][]json.RawMessage, order []string) error {
	hooks, _ := harness.ParseObject(nil)
	if raw, ok := settings.Get("hooks"); ok {
		var err error
		if hooks, err = harness.ParseObject(raw); err != nil {
			return fmt.Errorf(`%s: field "hooks" is not a JSON object; fix it, then run kk again`, settingsFile)
		}
	}
	removed := false
	placed := map[string]bool{}
	for _, ev := range hooks.Keys() {
		raw, _ := hooks.Get(ev)
		var groups []json.RawMessage
		if json.Unmarshal(raw, &groups) != nil {
			continue // not an event list (hooks.enabled, hooks.disabled, …)
		}
		var kept []json.RawMessage
		changed := false
		for _, g := range groups {
			group, err := harness.ParseObject(g)
			if err != nil {
				kept = append(kept, g)
				continue
			}
			entriesRaw, _ := group.Get("hooks")
			var entries []json.RawMessage
			if json.Unmarshal(entriesRaw, &entries) != nil {
				kept = append(kept, g)
				continue
			}
			var next []json.RawMessage
			hadKK := false
			for _, e := range entries {
				if !owned(e) {
					next = append(next, e)
					continue
				}
				if !hadKK && !placed[ev] && want[ev] != nil {
					next = append(next, want[ev]...)
					placed[ev] = true
				}
				hadKK = true
			}
			if !hadKK {
				kept = append(kept, g)
				continue
			}
			changed, removed = true, true
			if len(next) == 0 {
				continue // the group held only kk's entries
			}
			if err := set(group, "hooks", next); err != nil {
				return err
			}
			b, err := group.MarshalJSON()
			if err != nil {
				return err
			}
			kept = append(kept, b)
		}
		if !changed {
			continue
		}
		if len(kept) == 0 {
			hooks.Delete(ev)
		} else if err := set(hooks, ev, kept); err != nil {
			return err
		}
	}
	for _, ev := range order {
		if placed[ev] || want[ev] == nil {
			continue
		}
		var groups []json.RawMessage
		if raw, ok := hooks.Get(ev); ok {
			if json.Unmarshal(raw, &groups) != nil {
				return fmt.Errorf(`%s: field "hooks.%s" is not a list of hook definitions; fix it, then run kk again`, settingsFile, ev)
			}
		}
		group, err := harness.RawJSON(struct {
			Hooks []json.RawMessage `json:"hooks"`
		}{want[ev]})
		if err != nil {
			return err
		}
		if err := set(hooks, ev, append(groups, group)); err != nil {
			return err
		}
	}
	if hooks.Len() == 0 {
		if removed {
			settings.Delete("hooks")
		}
		return nil
	}
	return settings.Set("hooks", hooks)
}

// Install implements harness.Adapter. It merges kk's hooks into
// .gemini/settings.json and writes one .gemini/commands/<name>.toml and
// one .gemini/skills/<name>/SKILL.md per skill. Every command and skill is
// rendered and the settings file parsed before the first write.
func (a *Adapter) Install(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := harness.CheckRoot(o.Root); err != nil {
		return nil, err
	}
	cmds, err := renderCommands(o.Skills)
	if err != nil {
		return nil, err
	}
	skills, err := harness.RenderSkills(o.Skills)
	if err != nil {
		return nil, err
	}
	want, order, err := desiredHooks(harness.KKCommand(o))
	if err != nil {
		return nil, err
	}
	action, err := harness.EditJSONFile(o.Root, filepath.Join(o.Root, filepath.FromSlash(settingsFile)), func(s *harness.Object) error {
		return setHooks(s, want, order)
	}, false)
	if err != nil {
		return nil, err
	}
	changes := harness.AddChange(nil, settingsFile, action)
	cc, err := harness.WriteFiles(ctx, o.Root, cmds)
	changes = append(changes, cc...)
	if err != nil {
		return changes, err
	}
	sc, err := harness.InstallManagedSkills(o.Root, skillsDir, skills)
	return append(changes, sc...), err
}

// Uninstall implements harness.Adapter. It removes kk's entries from
// .gemini/settings.json (the file itself when nothing else is left in
// it), the command files of opts.Skills (of the skills this kk ships
// when none are named) and kk's skill folders, then the folders left
// empty.
func (a *Adapter) Uninstall(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := harness.CheckRoot(o.Root); err != nil {
		return nil, err
	}
	names, err := skillNames(harness.SkillsOrShipped(o.Skills))
	if err != nil {
		return nil, err
	}
	action, err := harness.EditJSONFile(o.Root, filepath.Join(o.Root, filepath.FromSlash(settingsFile)), func(s *harness.Object) error {
		return setHooks(s, nil, nil)
	}, true)
	if err != nil {
		return nil, err
	}
	changes := harness.AddChange(nil, settingsFile, action)
	rels := make([]string, len(names))
	for i, name := range names {
		rels[i] = commandFile(name)
	}
	cc, err := harness.RemoveFiles(ctx, o.Root, rels)
	changes = append(changes, cc...)
	if err != nil {
		return changes, err
	}
	sc, err := harness.UninstallManagedSkills(o.Root, skillsDir, o.Skills)
	changes = append(changes, sc...)
	harness.RemoveEmptyDirs(o.Root, commandsDir, skillsDir, path.Dir(settingsFile))
	return changes, err
}

// renderCommands renders every skill into its command file, in name
// order.
func renderCommands(skills map[string][]byte) ([]harness.File, error) {
	names, err := skillNames(skills)
	if err != nil {
		return nil, err
	}
	out := make([]harness.File, len(names))
	for i, n := range names {
		data, err := renderCommand(n, skills[n])
		if err != nil {
			return nil, err
		}
		out[i] = harness.File{Name: n, Rel: commandFile(n), Data: data}
	}
	return out, nil
}

// skillNames checks the skill names and returns them sorted.
func skillNames(skills map[string][]byte) ([]string, error) {
	return harness.SkillNames(skills, commandName.MatchString, "want lowercase letters, digits and hyphens")
}
