package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
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

// shared drives the install tests claude shares with the other adapters
// whose hooks live in a Claude-shaped JSON file (harnesstest.HookFile).
var shared = harnesstest.HookFile{
	New:          func() harness.Adapter { return New() },
	Harness:      id,
	File:         settingsFile,
	SkillsDir:    skillsDir,
	Skills:       testSkills(),
	Golden:       golden,
	FreshGolden:  "settings.fresh.json",
	MergedGolden: "settings.merged.json",
	Validate:     func(t *testing.T, data []byte) { validate(t, settingsSchema(t), data) },
	User:         "testdata/user-settings.json",
	UserEvents:   "PostToolUse,Stop,SessionStart,UserPromptSubmit,PreCompact,SessionEnd",
	Check:        hooksCheck,
}

// settingsSchema compiles the vendored Claude Code settings schema. The
// copy predates the documented `async` handler key (harnesses.md §1.1), so
// the test adds it to the command handler; and Go's regexp has no
// lookahead, so the one lookahead in a permission-rule pattern is dropped
// (the rest of the pattern still applies).
func settingsSchema(t *testing.T) *jsonschema.Schema {
	t.Helper()
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(read(t, "testdata/claude-code-settings.schema.json")))
	if err != nil {
		t.Fatal(err)
	}
	cmd := doc.(map[string]any)["$defs"].(map[string]any)["hookCommand"].(map[string]any)["anyOf"].([]any)[0].(map[string]any)
	cmd["properties"].(map[string]any)["async"] = map[string]any{"type": "boolean"}
	c := jsonschema.NewCompiler()
	c.UseRegexpEngine(func(s string) (jsonschema.Regexp, error) {
		return regexp.Compile(strings.ReplaceAll(s, "(?=.*[^)*?])", ""))
	})
	if err := c.AddResource("claude-code-settings.json", doc); err != nil {
		t.Fatal(err)
	}
	s, err := c.Compile("claude-code-settings.json")
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
		t.Errorf("settings do not match the Claude Code settings schema: %v", err)
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
	s := settingsSchema(t)
	for _, doc := range []string{
		`{"hooks":{"Stop":[{"hooks":[{"type":"command"}]}]}}`,
		`{"hooks":{"Stop":[{"hooks":[{"type":"command","command":"x","async":"yes"}]}]}}`,
		`{"hooks":{"NoSuchEvent":[]}}`,
	} {
		inst, _ := jsonschema.UnmarshalJSON(strings.NewReader(doc))
		if s.Validate(inst) == nil {
			t.Errorf("schema accepted %s", doc)
		}
	}
}

// A kk command relative to the repository root is anchored at
// $CLAUDE_PROJECT_DIR, so the hook finds kk from any folder; the test runs
// the installed command through sh from a subfolder.
func TestInstallRelativeCommand(t *testing.T) {
	root := t.TempDir()
	tool := filepath.Join(root, "my tools", "kk")
	if err := os.MkdirAll(filepath.Dir(tool), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(tool, []byte("#!/bin/sh\necho \"ran $*\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	o := opts(root)
	o.Command = "./my tools/kk"
	if _, err := New().Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Hooks map[string][]struct {
			Hooks []handler `json:"hooks"`
		} `json:"hooks"`
	}
	if err := json.Unmarshal(read(t, filepath.Join(root, settingsFile)), &doc); err != nil {
		t.Fatal(err)
	}
	command := doc.Hooks["Stop"][0].Hooks[0].Command
	if command != `"$CLAUDE_PROJECT_DIR"/'my tools/kk' hook capture --harness claude` {
		t.Fatalf("command %s", command)
	}
	sub := filepath.Join(root, "src", "deep")
	if err := os.MkdirAll(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("sh", "-c", command)
	cmd.Dir = sub
	cmd.Env = append(os.Environ(), "CLAUDE_PROJECT_DIR="+root)
	out, err := cmd.CombinedOutput()
	if err != nil || string(out) != "ran hook capture --harness claude\n" {
		t.Fatalf("running the hook command: %q %v", out, err)
	}
	if c := hooksCheck(root); c.Level != "ok" {
		t.Fatalf("doctor: %+v", c)
	}
}
