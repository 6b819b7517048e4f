package install

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// stubAdapter writes one file, .<id>/hooks, holding the hook command, and
// records the options it was called with.
type stubAdapter struct {
	id    string
	fail  error // returned by Install
	calls []harness.InstallOptions
}

func (s *stubAdapter) Spec() harness.Spec {
	return harness.Spec{ID: s.id, Name: s.Name(), Binary: s.id, InstallHint: "none", Priority: 100,
		PromptArgMax: harness.DefaultPromptArgMax, Files: s.Paths()}
}
func (s *stubAdapter) ID() string                                    { return s.id }
func (s *stubAdapter) Name() string                                  { return "Stub " + s.id }
func (s *stubAdapter) Binary() string                                { return s.id }
func (s *stubAdapter) LaunchArgs(p string, _ harness.Model) []string { return []string{p} }
func (s *stubAdapter) InstallHint() string                           { return "" }
func (s *stubAdapter) Detect(func(string) string) bool               { return false }
func (s *stubAdapter) Paths() harness.Paths                          { return harness.Paths{Config: []string{s.file()}} }
func (s *stubAdapter) ParseHookInput([]byte) (harness.HookInput, error) {
	return harness.HookInput{}, nil
}
func (s *stubAdapter) HookOutput(harness.Event, string) ([]byte, bool) { return nil, false }
func (s *stubAdapter) ParseTranscript(io.Reader) (harness.Transcript, error) {
	return harness.Transcript{}, nil
}
func (s *stubAdapter) Headless(context.Context, harness.HeadlessRun) (string, error) { return "", nil }
func (s *stubAdapter) file() string                                                  { return "." + s.id + "/hooks" }

func (s *stubAdapter) Install(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	s.calls = append(s.calls, o)
	if s.fail != nil {
		return nil, s.fail
	}
	p := filepath.Join(o.Root, s.file())
	old, err := os.ReadFile(p)
	if err == nil && string(old) == o.Command {
		return nil, nil
	}
	_ = os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(o.Command), 0o644); err != nil {
		return nil, err
	}
	if err == nil {
		return []harness.Change{{Path: s.file(), Action: "updated"}}, nil
	}
	return []harness.Change{{Path: s.file(), Action: "created"}}, nil
}

func (s *stubAdapter) Uninstall(ctx context.Context, o harness.InstallOptions) ([]harness.Change, error) {
	if err := os.RemoveAll(filepath.Join(o.Root, "."+s.id)); err != nil {
		return nil, err
	}
	return []harness.Change{{Path: s.file(), Action: "removed"}}, nil
}

func (s *stubAdapter) Doctor(ctx context.Context, root string) []harness.Check {
	return []harness.Check{{Name: "hooks", Level: "ok", Message: "fine"}}
}

func newKB(t *testing.T) *store.KB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "test", Now: time.Unix(0, 0)}); err != nil {
		t.Fatal(err)
	}
	return k
}

func paths(cs []harness.Change) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Action+" "+c.Path)
	}
	return out
}

func TestInstallRecordsAndIsIdempotent(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	a, b := &stubAdapter{id: "b-one"}, &stubAdapter{id: "a-two"}
	reg, _ := harness.NewRegistry(a, b)
	res, err := Install(ctx, k, reg, []harness.Adapter{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// Adapters run in id order; then AGENTS.md, then installed-version.
	want := []string{"created .a-two/hooks", "created .b-one/hooks", "created AGENTS.md", "updated .ai/kenkeep/.state/installed-version"}
	if !slices.Equal(paths(res.Changes), want) {
		t.Fatalf("changes %v, want %v", paths(res.Changes), want)
	}
	if !slices.Equal(res.Harnesses, []string{"a-two", "b-one"}) || res.Command != "kk" {
		t.Fatalf("harnesses %v command %q", res.Harnesses, res.Command)
	}
	if len(a.calls) != 1 || a.calls[0].Root != k.Root || a.calls[0].Command != "kk" || len(a.calls[0].Skills) != 7 || len(a.calls[0].Prompts) != 3 {
		t.Fatalf("install options %+v", a.calls)
	}
	res, err = Install(ctx, k, reg, []harness.Adapter{b}, Options{})
	if err != nil || len(res.Changes) != 0 {
		t.Fatalf("second run: %v %v", paths(res.Changes), err)
	}
	if len(a.calls) != 1 {
		t.Fatal("a harness that was not named was reinstalled without --upgrade")
	}
	if _, err := Install(ctx, k, reg, nil, Options{Upgrade: true}); err != nil || len(a.calls) != 2 || len(b.calls) != 3 {
		t.Fatalf("upgrade did not reinstall every recorded harness: %d %d %v", len(a.calls), len(b.calls), err)
	}
}

func TestInstallNewCommandRewritesEveryHarness(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	a, b := &stubAdapter{id: "a"}, &stubAdapter{id: "b"}
	reg, _ := harness.NewRegistry(a, b)
	if _, err := Install(ctx, k, reg, []harness.Adapter{a}, Options{}); err != nil {
		t.Fatal(err)
	}
	res, err := Install(ctx, k, reg, []harness.Adapter{b}, Options{Command: "/opt/kk"})
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(filepath.Join(k.Root, ".a/hooks")); string(got) != "/opt/kk" {
		t.Fatalf("a's hooks kept %q", got)
	}
	inst, _ := k.ReadInstalled()
	if inst.KKCommand != "/opt/kk" || res.Command != "/opt/kk" {
		t.Fatalf("command recorded %q, result %q", inst.KKCommand, res.Command)
	}
	// Later runs reuse the recorded command.
	if res, err := Install(ctx, k, reg, []harness.Adapter{a}, Options{}); err != nil || res.Command != "/opt/kk" || len(res.Changes) != 0 {
		t.Fatalf("rerun: %v %q %v", paths(res.Changes), res.Command, err)
	}
}

func TestInstallFailureRecordsWhatWasInstalled(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	a, b := &stubAdapter{id: "a"}, &stubAdapter{id: "b", fail: errors.New("settings.json: not a JSON object")}
	reg, _ := harness.NewRegistry(a, b)
	res, err := Install(ctx, k, reg, []harness.Adapter{a, b}, Options{})
	if err == nil || !strings.Contains(err.Error(), "installing kk into Stub b: settings.json: not a JSON object") {
		t.Fatalf("error %v", err)
	}
	if !slices.Equal(res.Harnesses, []string{"a"}) {
		t.Fatalf("recorded %v", res.Harnesses)
	}
	inst, _ := k.ReadInstalled()
	if !slices.Equal(inst.Harnesses, []string{"a"}) {
		t.Fatalf("installed-version lists %v", inst.Harnesses)
	}
}

func TestUninstallKeepsUserAgentsText(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	user := "# Agents\n\nUser text.\n"
	if err := os.WriteFile(k.AgentsPath(), []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	a, b := &stubAdapter{id: "a"}, &stubAdapter{id: "b"}
	reg, _ := harness.NewRegistry(a, b)
	if _, err := Install(ctx, k, reg, []harness.Adapter{a, b}, Options{Command: "/x/kk"}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(k.AgentsPath())
	if !strings.HasPrefix(string(data), user+"\n"+agentsMarkers.Start+"\n") || !strings.Contains(string(data), ".ai/kenkeep/ENTRY.md") {
		t.Fatalf("AGENTS.md:\n%s", data)
	}
	res, err := Uninstall(ctx, k, []harness.Adapter{a}, Options{})
	if err != nil || slices.Contains(paths(res.Changes), "updated AGENTS.md") || !slices.Equal(res.Harnesses, []string{"b"}) {
		t.Fatalf("uninstall a: %v %v %v", paths(res.Changes), res.Harnesses, err)
	}
	res, err = Uninstall(ctx, k, []harness.Adapter{b}, Options{})
	if err != nil || !slices.Contains(paths(res.Changes), "updated AGENTS.md") {
		t.Fatalf("uninstall b: %v %v", paths(res.Changes), err)
	}
	if data, _ := os.ReadFile(k.AgentsPath()); string(data) != user {
		t.Fatalf("AGENTS.md not restored: %q", data)
	}
	inst, _ := k.ReadInstalled()
	if len(inst.Harnesses) != 0 || inst.KKCommand != "" {
		t.Fatalf("installed-version keeps %v %q", inst.Harnesses, inst.KKCommand)
	}
}

func TestInstallNeedsInit(t *testing.T) {
	k := store.New(t.TempDir())
	a := &stubAdapter{id: "a"}
	reg, _ := harness.NewRegistry(a)
	if _, err := Install(context.Background(), k, reg, []harness.Adapter{a}, Options{}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("error %v", err)
	}
	if len(a.calls) != 0 {
		t.Fatal("the adapter ran without a knowledge base")
	}
	if _, err := os.Stat(k.AgentsPath()); err == nil {
		t.Fatal("AGENTS.md written without a knowledge base")
	}
}

func TestDoctorChecks(t *testing.T) {
	ctx := context.Background()
	k := newKB(t)
	a := &stubAdapter{id: "a"}
	reg, _ := harness.NewRegistry(a)
	if got := Doctor(ctx, k, reg, ""); len(got) != 0 {
		t.Fatalf("checks with no harness installed: %+v", got)
	}
	if _, err := Install(ctx, k, reg, []harness.Adapter{a}, Options{}); err != nil {
		t.Fatal(err)
	}
	got := Doctor(ctx, k, reg, "")
	if len(got) != 2 || got[0].Name != "a/hooks" || got[1].Name != "agents-block" || got[1].Level != checks.DoctorOK {
		t.Fatalf("checks %+v", got)
	}
	if err := os.WriteFile(k.AgentsPath(), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := Doctor(ctx, k, reg, "a"); got[1].Level != checks.DoctorWarn || !strings.Contains(got[1].Message, "no kk block") {
		t.Fatalf("checks %+v", got)
	}
}

func TestLookPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "tool")
	if err := os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "plain"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "folder"), 0o755); err != nil {
		t.Fatal(err)
	}
	list := "" + string(filepath.ListSeparator) + filepath.Join(dir, "missing") + string(filepath.ListSeparator) + dir
	if got, err := LookPath(list, "tool"); err != nil || got != exe {
		t.Fatalf("tool: %q %v", got, err)
	}
	for _, name := range []string{"plain", "folder", "nothing", ""} {
		if _, err := LookPath(list, name); !errors.Is(err, ErrNotOnPath) {
			t.Errorf("%q: %v", name, err)
		}
	}
	if got, err := LookPath("", exe); err != nil || got != exe {
		t.Fatalf("path: %q %v", got, err)
	}
	if _, err := LookPath(list, filepath.Join(dir, "plain")); err == nil {
		t.Fatal("a file that is not executable was accepted")
	}
}

func TestLoadPrompt(t *testing.T) {
	k := newKB(t)
	shipped, err := LoadPrompt(nil, "proposal-extract")
	if err != nil || shipped.Source != PromptShipped || !strings.Contains(shipped.Content, "PLACEHOLDER") {
		t.Fatalf("shipped: %+v %v", shipped, err)
	}
	if err := os.MkdirAll(k.PromptsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.PromptsDir(), "proposal-extract.md"), []byte("mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := LoadPrompt(k, "proposal-extract.md")
	if err != nil || p.Source != PromptOverride || p.Content != "mine\n" || p.Path != ".ai/kenkeep/.config/prompts/proposal-extract.md" {
		t.Fatalf("override: %+v %v", p, err)
	}
	for _, bad := range []string{"nope", "../config", ""} {
		if _, err := LoadPrompt(k, bad); !errors.Is(err, ErrUnknownPrompt) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
