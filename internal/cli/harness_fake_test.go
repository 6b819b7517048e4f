package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/install"
)

// The test binary (which the scripts run as kk) knows two fake harnesses
// besides the real ones, so that init, uninstall, the launchers and doctor
// are tested apart from any real adapter: "fake" and "fake2". Each keeps
// its hooks under the key "kkHooks" of .<id>/settings.json (next to the
// user's keys) and its skills in .<id>/skills/<name>/SKILL.md, and starts
// the program <id>-agent.
func init() {
	real := newHarnessRegistry
	newHarnessRegistry = func() *harness.Registry {
		base := real()
		var adapters []harness.Adapter
		for _, id := range base.IDs() {
			a, _ := base.Get(id)
			adapters = append(adapters, a)
		}
		adapters = append(adapters, &fakeAdapter{id: "fake", name: "Fake Agent"}, &fakeAdapter{id: "fake2", name: "Fake Agent Two"})
		r, err := harness.NewRegistry(adapters...)
		if err != nil {
			panic(err)
		}
		return r
	}
}

type fakeAdapter struct {
	id, name string
}

func (f *fakeAdapter) Spec() harness.Spec {
	prio := 90
	if f.id == "fake2" {
		prio = 91
	}
	return harness.Spec{ID: f.id, Name: f.name, Binary: f.Binary(), InstallHint: f.InstallHint(),
		Detect: []harness.EnvMarker{{Name: "FAKE_AGENT", Value: f.id}}, Priority: prio, Drain: true,
		PromptArgMax: harness.DefaultPromptArgMax, Files: f.Paths(),
		// A model flag and no effort flag: a launch shows both what is
		// passed and what is reported as not honoured.
		Model: harness.ModelFlags{Name: []string{"--model", "%s"}}}
}

func (f *fakeAdapter) ID() string     { return f.id }
func (f *fakeAdapter) Name() string   { return f.name }
func (f *fakeAdapter) Binary() string { return f.id + "-agent" }
func (f *fakeAdapter) LaunchArgs(prompt string, m harness.Model) []string {
	margs, _ := f.Spec().ModelArgs(m)
	return append(append([]string{"run", "--headless"}, margs...), prompt)
}
func (f *fakeAdapter) InstallHint() string {
	return "install " + f.id + "-agent from https://example.invalid/" + f.id
}
func (f *fakeAdapter) Detect(getenv func(string) string) bool { return getenv("FAKE_AGENT") == f.id }

func (f *fakeAdapter) settings() string  { return "." + f.id + "/settings.json" }
func (f *fakeAdapter) skillsDir() string { return "." + f.id + "/skills" }

func (f *fakeAdapter) Paths() harness.Paths {
	return harness.Paths{Config: []string{f.settings()}, Skills: f.skillsDir()}
}

func (f *fakeAdapter) hooks(command string) map[string]string {
	m := map[string]string{}
	for _, e := range harness.Events {
		m[string(e)] = command + " hook " + string(e) + " --harness " + f.id
	}
	return m
}

func (f *fakeAdapter) Install(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	var changes []harness.Change
	action, err := harness.EditJSONFile(o.Root, filepath.Join(o.Root, f.settings()), func(obj *harness.Object) error {
		return obj.Set("kkHooks", f.hooks(o.Command))
	}, false)
	if err != nil {
		return nil, err
	}
	if action != "" {
		changes = append(changes, harness.Change{Path: f.settings(), Action: action})
	}
	names := make([]string, 0, len(o.Skills))
	for n := range o.Skills {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		rel := f.skillsDir() + "/" + n + "/SKILL.md"
		p := filepath.Join(o.Root, filepath.FromSlash(rel))
		_, statErr := os.Stat(p)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return changes, err
		}
		wrote, err := atomicfile.WriteIfChanged(p, o.Skills[n], 0o644)
		if err != nil {
			return changes, err
		}
		if wrote {
			a := "updated"
			if statErr != nil {
				a = "created"
			}
			changes = append(changes, harness.Change{Path: rel, Action: a})
		}
	}
	return changes, nil
}

func (f *fakeAdapter) Uninstall(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	var changes []harness.Change
	p := filepath.Join(o.Root, f.settings())
	if _, err := os.Stat(p); err == nil {
		action, err := harness.EditJSONFile(o.Root, p, func(obj *harness.Object) error {
			obj.Delete("kkHooks")
			return nil
		}, true)
		if err != nil {
			return nil, err
		}
		if action != "" {
			changes = append(changes, harness.Change{Path: f.settings(), Action: action})
		}
	}
	names := make([]string, 0, len(o.Skills))
	for n := range o.Skills {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		rel := f.skillsDir() + "/" + n + "/SKILL.md"
		p := filepath.Join(o.Root, filepath.FromSlash(rel))
		if err := os.Remove(p); err == nil {
			changes = append(changes, harness.Change{Path: rel, Action: "removed"})
		} else if !errors.Is(err, fs.ErrNotExist) {
			return changes, err
		}
		_ = os.Remove(filepath.Dir(p)) // only when empty
	}
	_ = os.Remove(filepath.Join(o.Root, filepath.FromSlash(f.skillsDir())))
	_ = os.Remove(filepath.Join(o.Root, "."+f.id))
	return changes, nil
}

func (f *fakeAdapter) ParseHookInput(data []byte) (harness.HookInput, error) {
	var in struct {
		SessionID string `json:"session_id"`
		CWD       string `json:"cwd"`
	}
	err := json.Unmarshal(data, &in)
	return harness.HookInput{SessionID: in.SessionID, CWD: in.CWD}, err
}

func (f *fakeAdapter) HookOutput(event harness.Event, context string) ([]byte, bool) {
	return nil, false
}

func (f *fakeAdapter) ParseTranscript(r io.Reader) (harness.Transcript, error) {
	return harness.Transcript{}, errors.New("the fake harness has no transcripts")
}

func (f *fakeAdapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	return "", errors.New("the fake harness has no headless mode")
}

// Doctor reports whether the hooks carry the recorded command's entries,
// whether the skills match kk's, whether the program is on PATH, and one
// platform limit (a warning).
func (f *fakeAdapter) Doctor(ctx context.Context, root string) []harness.Check {
	var out []harness.Check
	hooks := harness.Check{Name: "hooks", Level: "ok", Message: f.settings() + " runs kk's hooks"}
	data, err := os.ReadFile(filepath.Join(root, f.settings()))
	obj, perr := harness.ParseObject(data)
	raw, ok := json.RawMessage(nil), false
	if err == nil && perr == nil {
		raw, ok = obj.Get("kkHooks")
	}
	if !ok {
		hooks.Level, hooks.Message, hooks.Fix = "error", f.settings()+" has no kk hooks", "run `kk init --harnesses "+f.id+"`"
	} else if !bytes.Contains(raw, []byte(" hook session-start --harness "+f.id)) {
		hooks.Level, hooks.Message, hooks.Fix = "warn", f.settings()+": kk's hooks are out of date", "run `kk init --upgrade`"
	}
	out = append(out, hooks)
	skills := harness.Check{Name: "skills", Level: "ok", Message: "the kk skills are installed"}
	want, _ := install.Skills()
	var stale []string
	for n, src := range want {
		got, err := os.ReadFile(filepath.Join(root, "."+f.id, "skills", n, "SKILL.md"))
		if err != nil || !bytes.Equal(got, src) {
			stale = append(stale, n)
		}
	}
	if len(stale) > 0 {
		slices.Sort(stale)
		skills.Level, skills.Message, skills.Fix = "warn", "missing or out of date: "+strings.Join(stale, ", "), "run `kk init --upgrade`"
	}
	out = append(out, skills)
	bin := harness.Check{Name: "binary", Level: "ok", Message: f.Binary() + " is on PATH"}
	if _, err := exec.LookPath(f.Binary()); err != nil {
		bin.Level, bin.Message, bin.Fix = "warn", f.Binary()+" is not on PATH", f.InstallHint()
	}
	out = append(out, bin)
	return append(out, harness.Check{Name: "prompt-context", Level: "warn", Message: f.name + " has no channel for prompt-time context"})
}
