package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
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
// There is no session-start or prompt-context entry: Copilot ignores the
// output of sessionStart and userPromptSubmitted hooks.
var hookSpecs = []hookSpec{
	{"sessionStart", harness.ProposalDrain},
	{"agentStop", harness.Capture},
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
	args := " hook " + string(ev) + " --harness " + id
	e := hookEntry{
		Type:       "command",
		Bash:       bashQuote(command) + args,
		PowerShell: powerShellQuote(command) + args,
		TimeoutSec: hookTimeoutSec,
	}
	if !filepath.IsAbs(command) && strings.ContainsAny(command, `/\`) {
		e.CWD = "."
	}
	return e
}

var shellSafe = regexp.MustCompile(`^[A-Za-z0-9_./:@%+,=-]+$`)

// bashQuote quotes s for a POSIX shell when it needs quoting.
func bashQuote(s string) string {
	if shellSafe.MatchString(s) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

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
		raw, err := rawJSON(lists[ev])
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
// skill, byte for byte. Everything is checked before the first write.
func (a *Adapter) Install(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := checkRoot(o.Root); err != nil {
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
	command := o.Command
	if command == "" {
		command = "kk"
	}
	hooks, err := renderHooksFile(command)
	if err != nil {
		return nil, fmt.Errorf("rendering %s: %w", hooksFile, err)
	}
	var changes []harness.Change
	put := func(rel string, data []byte) error {
		action, err := putFile(o.Root, rel, data)
		if err != nil {
			return err
		}
		if action != "" {
			changes = append(changes, harness.Change{Path: rel, Action: action})
		}
		return nil
	}
	if err := put(hooksFile, hooks); err != nil {
		return changes, err
	}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return changes, err
		}
		if err := put(skillFile(name), o.Skills[name]); err != nil {
			return changes, err
		}
	}
	return changes, nil
}

// Uninstall implements harness.Adapter. It removes .github/hooks/kk.json
// and the skills named in opts.Skills (the ones this kk ships when none
// are named), then the folders left empty; other hook files and skills
// are not touched.
func (a *Adapter) Uninstall(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := checkRoot(o.Root); err != nil {
		return nil, err
	}
	names, err := skillNames(uninstallSkills(o.Skills))
	if err != nil {
		return nil, err
	}
	var changes []harness.Change
	rm := func(rel string) error {
		removed, err := removeFile(o.Root, rel)
		if err != nil {
			return err
		}
		if removed {
			changes = append(changes, harness.Change{Path: rel, Action: "removed"})
		}
		return nil
	}
	if err := rm(hooksFile); err != nil {
		return changes, err
	}
	dirs := []string{path.Dir(hooksFile)}
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return changes, err
		}
		if err := rm(skillFile(name)); err != nil {
			return changes, err
		}
		dirs = append(dirs, path.Dir(skillFile(name)))
	}
	dirs = append(dirs, skillsDir, ".github")
	removeEmptyDirs(o.Root, dirs)
	return changes, nil
}

// rawJSON encodes v without HTML escaping, so shell commands keep their
// & < > readable in the file.
func rawJSON(v any) (json.RawMessage, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return json.RawMessage(bytes.TrimRight(b.Bytes(), "\n")), nil
}

func skillFile(name string) string { return skillsDir + "/" + name + "/SKILL.md" }

var skillName = regexp.MustCompile(`^[a-z0-9][a-z0-9-]*$`)

// skillNames checks the skill names (Copilot wants lowercase names with
// hyphens, used as folder names) and returns them sorted.
// uninstallSkills is the set of skills to remove: the ones given, or,
// when none are, the ones this kk ships.
func uninstallSkills(given map[string][]byte) map[string][]byte {
	if len(given) > 0 {
		return given
	}
	return shippedSkills()
}

func skillNames(skills map[string][]byte) ([]string, error) {
	names := make([]string, 0, len(skills))
	for name := range skills {
		if !skillName.MatchString(name) {
			return nil, fmt.Errorf("skill name %q: want lowercase letters, digits and hyphens", name)
		}
		names = append(names, name)
	}
	slices.Sort(names)
	return names, nil
}

func checkRoot(root string) error {
	if root == "" {
		return errors.New("no repository root given")
	}
	fi, err := os.Stat(root)
	if err != nil {
		return fmt.Errorf("repository root: %w", err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("repository root %s is not a folder", root)
	}
	return nil
}

// putFile writes data to root/rel when it differs from what is there and
// reports "created", "updated" or "" (unchanged).
func putFile(root, rel string, data []byte) (string, error) {
	p := filepath.Join(root, filepath.FromSlash(rel))
	_, statErr := os.Stat(p)
	exists := statErr == nil
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", fmt.Errorf("writing %s: %w", rel, err)
	}
	wrote, err := atomicfile.WriteIfChanged(p, data, 0o644)
	switch {
	case err != nil:
		return "", err
	case !wrote:
		return "", nil
	case exists:
		return "updated", nil
	}
	return "created", nil
}

// removeFile removes root/rel and reports whether it existed.
func removeFile(root, rel string) (bool, error) {
	err := os.Remove(filepath.Join(root, filepath.FromSlash(rel)))
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing %s: %w", rel, err)
	}
	return true, nil
}

// removeEmptyDirs removes each of the folders (relative to root, in
// order) that is empty; folders with anything in them stay.
func removeEmptyDirs(root string, rels []string) {
	for _, rel := range rels {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if entries, err := os.ReadDir(p); err == nil && len(entries) == 0 {
			os.Remove(p)
		}
	}
}
