package copilot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/safetext"
)

// hookTimeoutSec is the timeoutSec of every kk entry: Copilot's default,
// written out so the file says what the hooks may take. kk's hook runtime
// keeps its own, much shorter, deadlines.
const hookTimeoutSec = 30

// hookSpec maps one Copilot hook event onto one kk hook event.
type hookSpec struct {
	Event string // Copilot's camelCase event name
	KK    harness.Event
}

// hookSpecs are kk's hooks in Copilot, in the order they are written.
var hookSpecs = []hookSpec{
	{"sessionStart", harness.SessionStart},
	{"sessionStart", harness.ProposalDrain},
	{"userPromptSubmitted", harness.PromptContext},
	{"agentStop", harness.Capture},
	{"agentStop", harness.GraphHint},
	{"preCompact", harness.Capture},
	{"sessionEnd", harness.Capture},
	{"sessionEnd", harness.LintTick},
}

// hookEntry is one command hook of .github/hooks/*.json.
type hookEntry struct {
	Type       string `json:"type"`
	Bash       string `json:"bash"`
	PowerShell string `json:"powershell"`
	CWD        string `json:"cwd,omitempty"`
	TimeoutSec int    `json:"timeoutSec"`
}

// hookCommand returns the entry that runs `<command> hook <event> --harness copilot`.
// The commands work from any directory of the repository: kk finds the
// knowledge base by walking up from its working directory. A relative
// command path is resolved against the repository root by setting the
// entry's cwd to the root (Copilot resolves cwd against it).
func hookCommand(command string, ev harness.Event) hookEntry {
	e := hookEntry{
		Type:       "command",
		Bash:       harness.HookCommand(safetext.ShellQuote(command), ev, id),
		PowerShell: harness.HookCommand(powerShellQuote(command), ev, id),
		TimeoutSec: hookTimeoutSec,
	}
	if !filepath.IsAbs(command) && strings.ContainsAny(command, `/\`) {
		e.CWD = "."
	}
	return e
}

// shellSafe matches a command that needs no quoting (the characters
// safetext.ShellQuote leaves alone).
var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]+$`)

// powerShellQuote quotes s as a PowerShell command when it needs quoting:
// a quoted string is run with the call operator.
func powerShellQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "& '" + strings.ReplaceAll(s, "'", "''") + "'"
}

// renderHooksFile returns the content of .github/hooks/kk.json.
func renderHooksFile(command string) ([]byte, error) {
	var order []string
	lists := map[string][]hookEntry{}
	for _, s := range hookSpecs {
		if _, ok := lists[s.Event]; !ok {
			order = append(order, s.Event)
		}
		lists[s.Event] = append(lists[s.Event], hookCommand(command, s.KK))
	}
	hooks, _ := harness.ParseObject(nil)
	for _, ev := range order {
		raw, err := harness.RawJSON(lists[ev])
		if err != nil {
			return nil, err
		}
		if err := hooks.Set(ev, raw); err != nil {
			return nil, err
		}
	}
	file, _ := harness.ParseObject(nil)
	if err := file.Set("version", 1); err != nil {
		return nil, err
	}
	if err := file.Set("hooks", hooks); err != nil {
		return nil, err
	}
	return file.Indented()
}

// Install implements harness.Adapter. It writes .github/hooks/kk.json
// (kk owns the whole file) and one .github/skills/<name>/SKILL.md per
// skill, byte for byte, and takes kenkeep's block out of
// .github/copilot-instructions.md (the file goes when nothing else is in
// it). Everything is checked before the first write.
func (a *Adapter) Install(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := harness.CheckRoot(o.Root); err != nil {
		return nil, err
	}
	names, err := skillNames(o.Skills)
	if err != nil {
		return nil, err
	}
	for _, name := range names {
		if len(o.Skills[name]) == 0 {
			return nil, fmt.Errorf("skill %q: SKILL.md is empty", name)
		}
	}
	if err := refuseForeignHooks(o.Root); err != nil {
		return nil, err
	}
	hooks, err := renderHooksFile(harness.KKCommand(o))
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", hooksFile, err)
	}
	instructions, err := os.ReadFile(filepath.Join(o.Root, filepath.FromSlash(instructionsFile)))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	files := append([]harness.File{{Rel: hooksFile, Data: hooks}}, harness.SkillFiles(skillsDir, o.Skills)...)
	changes, err := harness.WriteFiles(ctx, o.Root, files)
	if err != nil {
		return changes, err
	}
	// kenkeep, the tool kk succeeds, kept a copy of its session-start
	// context (a catalog, with this machine's path and host) in a block of
	// the committed .github/copilot-instructions.md; kk hands Copilot the
	// context from its hook instead, so the copy would only go stale.
	if text := string(instructions); strings.Contains(text, harness.BlockStart) {
		// A block whose markers are not one start line then one end line
		// is left as it is: kk does not own the file, and which lines are
		// the block cannot be told.
		rest, err := harness.RemoveBlock(text)
		switch {
		case err != nil || rest == text:
		case strings.TrimSpace(rest) == "":
			c, err := harness.RemoveFiles(ctx, o.Root, []string{instructionsFile})
			return append(changes, c...), err
		default:
			action, err := harness.PutFile(o.Root, instructionsFile, []byte(rest))
			if err != nil {
				return changes, err
			}
			changes = harness.AddChange(changes, instructionsFile, action)
		}
	}
	return changes, nil
}

// refuseForeignHooks refuses a .github/hooks/kk.json that holds hooks of
// a person's (a file of kk's name written by hand, or kk's with an entry
// added): kk writes that file whole and removes it on uninstall, which
// would lose them. Copilot reads every .json file under .github/hooks/,
// so they belong in one of their own.
func refuseForeignHooks(root string) error {
	data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(hooksFile)))
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	var f struct {
		Hooks map[string][]json.RawMessage `json:"hooks"`
	}
	var foreign []string
	if json.Unmarshal(data, &f) != nil {
		foreign = append(foreign, "text that does not read as kk's JSON")
	}
	for _, ev := range slices.Sorted(maps.Keys(f.Hooks)) {
		for _, raw := range f.Hooks[ev] {
			var e struct {
				hookEntry
				Env map[string]any `json:"env"`
			}
			if json.Unmarshal(raw, &e) != nil {
				foreign = append(foreign, ev+": "+string(raw))
				continue
			}
			// kk's entries, of any kk command, and those of an earlier
			// kk or of kenkeep (scripts under .ai/kenkeep/, KK_INTERNAL
			// in their env), which the install replaces.
			_, _, ours := harness.MatchHookCommand(e.Bash, id)
			_, internal := e.Env[harness.RecursionEnv]
			_, kenkeep := e.Env[harness.KenkeepRecursionEnv]
			if !ours && !internal && !kenkeep && !strings.Contains(e.Bash+e.PowerShell, ".ai/kenkeep/") {
				foreign = append(foreign, ev+": "+e.Bash)
			}
		}
	}
	if len(foreign) == 0 {
		return nil
	}
	return fmt.Errorf("%s holds hooks that are not kk's (%s); kk writes that file whole and removes it on uninstall: move them to a file of their own under %s (Copilot reads every .json file there), then run kk again",
		hooksFile, strings.Join(foreign, "; "), path.Dir(hooksFile))
}

// instructionsFile is Copilot's repository instructions file, where
// kenkeep kept a <!-- kk:start --> block; kk writes nothing there.
const instructionsFile = ".github/copilot-instructions.md"

// Uninstall implements harness.Adapter. It removes .github/hooks/kk.json
// and the skills named in opts.Skills (the ones this kk ships when none
// are named), then the folders left empty; other hook files and skills
// are not touched.
func (a *Adapter) Uninstall(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := harness.CheckRoot(o.Root); err != nil {
		return nil, err
	}
	skills := harness.SkillsOrShipped(o.Skills)
	if _, err := skillNames(skills); err != nil {
		return nil, err
	}
	if err := refuseForeignHooks(o.Root); err != nil {
		return nil, err
	}
	files := harness.SkillFiles(skillsDir, skills)
	changes, err := harness.RemoveFiles(ctx, o.Root, append([]string{hooksFile}, harness.Rels(files)...))
	if err != nil {
		return changes, err
	}
	dirs := append([]string{path.Dir(hooksFile)}, harness.Dirs(files)...)
	harness.RemoveEmptyDirs(o.Root, append(dirs, skillsDir, ".github")...)
	return changes, nil
}

// skillName is the form Copilot wants of a skill's name, which is also
// its folder's name.
var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// skillNames checks the skill names and returns them sorted.
func skillNames(skills map[string][]byte) ([]string, error) {
	return harness.SkillNames(skills, skillName.MatchString, "want lowercase letters, digits and hyphens")
}
