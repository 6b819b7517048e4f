package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	harnesstest.Golden(t, filepath.Join("testdata", "golden", name), got, *update)
}

// The shared helpers, under the names the tests use.
var (
	read          = harnesstest.ReadFile
	shippedSkills = harness.ShippedSkills
	renderSkills  = harness.RenderSkills
)

// handler is a command handler as kk writes it.
type handler = harness.HookHandler

// testSkills are two skill templates in the harness-neutral format.
func testSkills() map[string][]byte {
	return map[string][]byte{
		"kk-add":    []byte("---\nname: kk-add\ndescription: Add one node from what the user says.\nversion: 1\n---\n\n# kk-add\n\n1. Ask.\n2. Write.\n"),
		"kk-curate": []byte("---\nname: kk-curate\ndescription: Curate the session logs.\nversion: 2\n---\n\n# kk-curate\n\n1. Read.\n2. Judge.\n"),
	}
}

func opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills()}
}

// shared drives the install tests codex shares with the other adapters
// whose hooks live in a Claude-shaped JSON file (harnesstest.HookFile).
var shared = harnesstest.HookFile{
	New:          func() harness.Adapter { return New() },
	Harness:      id,
	File:         hooksFile,
	SkillsDir:    skillsDir,
	Skills:       testSkills(),
	Golden:       golden,
	FreshGolden:  "hooks.fresh.json",
	MergedGolden: "hooks.merged.json",
	Validate:     func(t *testing.T, data []byte) { validate(t, hooksSchema(t), data) },
	User:         "testdata/user-hooks.json",
	UserEvents:   "PreToolUse,Stop,SessionStart,UserPromptSubmit,PreCompact,SessionEnd",
	Check:        func(root string) harness.Check { c, _ := hooksCheck(root); return c },
}

// hooksSchema compiles the vendored Codex hooks-file schema.
func hooksSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(read(t, "testdata/codex-hooks.schema.json")))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	if err := c.AddResource("codex-hooks.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("codex-hooks.json")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func validate(t *testing.T, s *jsonschema.Schema, data []byte) {
	t.Helper()
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(inst); err != nil {
		t.Errorf("hooks file does not match the Codex hooks schema: %v", err)
	}
}

func TestInstallFreshRepo(t *testing.T) { shared.FreshRepo(t) }

func TestInstallMergesWithUserSettings(t *testing.T) { shared.MergesWithUserFile(t) }

func TestInstallCustomCommand(t *testing.T) { shared.CustomCommand(t) }

func TestInstallUserHandlerInKKGroup(t *testing.T) { shared.UserHandlerInKKGroup(t) }

func TestInstallRejectsBadSettings(t *testing.T) { shared.RejectsBadFile(t) }

func TestInstallLeavesForeignEventShapes(t *testing.T) { shared.LeavesForeignEventShapes(t) }

func TestSkillsUpgradeRemovesRetiredAndStrayFiles(t *testing.T) { shared.SkillsUpgrade(t) }

func TestRenderSkillRejectsBadTemplates(t *testing.T) { shared.RejectsBadSkillTemplates(t) }

func TestShippedSkillsRender(t *testing.T) {
	skills, err := shippedSkills()
	if err != nil {
		t.Fatal(err)
	}
	if len(skills) == 0 {
		t.Fatal("no shipped skills")
	}
	if _, err := renderSkills(skills); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsSchemaIsLive(t *testing.T) {
	s := hooksSchema(t)
	for _, doc := range []string{
		`{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","async":"yes"}]}]}}`,
		`{"hooks":{"NoSuchEvent":[]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x"}]}]},"extra":1}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if s.Validate(inst) == nil {
			t.Errorf("schema accepted %s", doc)
		}
	}
}

// A kk command relative to the repository root is anchored at the git
// top level, so the hook finds kk from any folder; the test runs the
// installed command through sh from a subfolder of a git repository.
func TestInstallRelativeCommand(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("git is not installed")
	}
	root := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", root).CombinedOutput(); err != nil {
		t.Fatalf("git init: %s %v", out, err)
	}
	tool := filepath.Join(root, "bin", "kk")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"ran $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := opts(root)
	o.Command = "bin/kk"
	if _, err := New().Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []handler `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(root, hooksFile)), &doc); err != nil {
		t.Fatal(err)
	}
	command := doc.Hooks["Stop"][0].Hooks[0].Command
	if command != `"$(git rev-parse --show-toplevel)"/bin/kk hook capture --harness codex` {
		t.Fatalf("command %s", command)
	}
	sub := filepath.Join(root, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = sub
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ran hook capture --harness codex\n" {
		t.Fatalf("running the hook command: %q %v", out, err)
	}
	if c, _ := hooksCheck(root); c.Level != "ok" {
		t.Fatalf("doctor: %+v", c)
	}
}
