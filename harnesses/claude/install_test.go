package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
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
	tree          = harnesstest.Tree
	jsonEqual     = harnesstest.JSONEqual
	mapsEqual     = maps.Equal[map[string]string, map[string]string]
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

func TestInstallFreshRepo(t *testing.T) {
	root := t.TempDir()
	a := New()
	ch, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Change{
		{Path: ".claude/settings.json", Action: "created"},
		{Path: ".claude/skills/kk-add/SKILL.md", Action: "created"},
		{Path: ".claude/skills/kk-curate/SKILL.md", Action: "created"},
	}
	if !slices.Equal(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	settings := read(t, filepath.Join(root, settingsFile))
	golden(t, "settings.fresh.json", settings)
	validate(t, settingsSchema(t), settings)
	golden(t, "skill.kk-curate.md", read(t, filepath.Join(root, ".claude/skills/kk-curate/SKILL.md")))

	ch, err = a.Uninstall(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	want = []harness.Change{
		{Path: ".claude/settings.json", Action: "removed"},
		{Path: ".claude/skills/kk-add", Action: "removed"},
		{Path: ".claude/skills/kk-curate", Action: "removed"},
	}
	if !slices.Equal(ch, want) {
		t.Fatalf("uninstall changes %v, want %v", ch, want)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("uninstall left %v", entries)
	}
}

func TestInstallMergesWithUserSettings(t *testing.T) {
	root := t.TempDir()
	user := read(t, "testdata/user-settings.json")
	p := filepath.Join(root, settingsFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, user, 0o644); err != nil {
		t.Fatal(err)
	}
	userSkill := filepath.Join(root, skillsDir, "my-skill", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(userSkill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(userSkill, []byte("---\nname: my-skill\ndescription: mine\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New()
	ctx := context.Background()

	// phase: install keeps every user key, in order, and the user's hooks.
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	installed := read(t, p)
	golden(t, "settings.merged.json", installed)
	validate(t, settingsSchema(t), installed)
	checkUserContent(t, user, installed)

	// phase: a second install changes nothing.
	before := tree(t, root)
	ch, err := a.Install(ctx, opts(root))
	if err != nil || len(ch) != 0 {
		t.Fatalf("second install: %v %v", ch, err)
	}
	if after := tree(t, root); !mapsEqual(before, after) {
		t.Fatal("second install changed files")
	}

	// phase: an upgrade over an older kk's hooks (another kk command, an
	// event kk no longer uses, a changed handler) gives the same file.
	old := strings.ReplaceAll(string(installed), `"kk hook`, `"/opt/old/kk hook`)
	old = strings.Replace(old, `"timeout": 30`, `"timeout": 99`, 1)
	var doc map[string]any
	if err := json.Unmarshal([]byte(old), &doc); err != nil {
		t.Fatal(err)
	}
	doc["hooks"].(map[string]any)["Notification"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "/opt/old/kk hook notify --harness claude"}}}}
	oldData, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(p, oldData, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(read(t, p), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(installed, &want); err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(got, want) {
		t.Fatalf("upgrade gave\n%s\nwant\n%s", read(t, p), installed)
	}

	// phase: uninstall gives back the user's file byte for byte and keeps
	// the user's skill.
	if err := os.WriteFile(p, installed, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Uninstall(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, p); !bytes.Equal(got, user) {
		t.Fatalf("uninstall did not restore the user's settings:\n%s", got)
	}
	if files := tree(t, root); len(files) != 2 || files[".claude/skills/my-skill/SKILL.md"] == "" {
		t.Fatalf("uninstall left %v", files)
	}
}

// checkUserContent checks that installed keeps the user's keys and hooks
// (see harnesstest.KeepsUserHooks).
func checkUserContent(t *testing.T, user, installed []byte) {
	t.Helper()
	harnesstest.KeepsUserHooks(t, user, installed, "PostToolUse,Stop,SessionStart,UserPromptSubmit,PreCompact,SessionEnd")
}

func TestInstallCustomCommand(t *testing.T) {
	root := t.TempDir()
	a := New()
	ctx := context.Background()
	o := opts(root)
	o.Command = "/opt/my hook tools/kk"
	if _, err := a.Install(ctx, o); err != nil {
		t.Fatal(err)
	}
	data := string(read(t, filepath.Join(root, settingsFile)))
	if !strings.Contains(data, `"command": "'/opt/my hook tools/kk' hook session-start --harness claude"`) {
		t.Fatalf("command not quoted for the shell:\n%s", data)
	}
	if c := hooksCheck(root); c.Level != "ok" {
		t.Fatalf("doctor on a custom command: %+v", c)
	}
	// Going back to the default command replaces kk's entries.
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, settingsFile)); bytes.Contains(got, []byte("my hook tools")) {
		t.Fatalf("old entries kept:\n%s", got)
	}
	if got := read(t, filepath.Join(root, settingsFile)); strings.Count(string(got), "hook capture") != 3 {
		t.Fatalf("capture handlers duplicated:\n%s", got)
	}
}

func TestInstallUserHandlerInKKGroup(t *testing.T) {
	root := t.TempDir()
	a := New()
	ctx := context.Background()
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, settingsFile)
	var doc map[string]any
	if err := json.Unmarshal(read(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	stop := doc["hooks"].(map[string]any)["Stop"].([]any)[0].(map[string]any)
	stop["hooks"] = append(stop["hooks"].([]any), map[string]any{"type": "command", "command": "say done"})
	data, _ := json.MarshalIndent(doc, "", "  ")
	if err := os.WriteFile(p, append(data, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Uninstall(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"command\": \"say done\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if got := string(read(t, p)); got != want {
		t.Fatalf("uninstall gave\n%s", got)
	}
}

func TestInstallRejectsBadSettings(t *testing.T) {
	for name, content := range map[string]string{
		"not json":         "{\"hooks\": ",
		"not an object":    "[1, 2]",
		"hooks not object": `{"hooks": []}`,
		"event not array":  `{"hooks": {"Stop": {"hooks": []}}}`,
		"group not object": `{"hooks": {"SessionStart": ["kk"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			p := filepath.Join(root, settingsFile)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New().Install(context.Background(), opts(root))
			if err == nil || !strings.Contains(err.Error(), settingsFile) {
				t.Fatalf("error %v does not name %s", err, settingsFile)
			}
			if files := tree(t, root); len(files) != 1 || files[".claude/settings.json"] != content {
				t.Fatalf("a failed install wrote files: %v", files)
			}
		})
	}
}

func TestInstallLeavesForeignEventShapes(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, settingsFile)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	user := "{\n  \"hooks\": {\n    \"Notification\": \"not ours\"\n  }\n}\n"
	if err := os.WriteFile(p, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	a := New()
	if _, err := a.Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Uninstall(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := string(read(t, p)); got != user {
		t.Fatalf("got\n%s", got)
	}
}

func TestSkillsUpgradeRemovesRetiredAndStrayFiles(t *testing.T) {
	root := t.TempDir()
	a := New()
	ctx := context.Background()
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	stray := filepath.Join(root, skillsDir, "kk-add", "notes.txt")
	if err := os.WriteFile(stray, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	o := opts(root)
	delete(o.Skills, "kk-curate")
	ch, err := a.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Change{
		{Path: ".claude/skills/kk-add/notes.txt", Action: "removed"},
		{Path: ".claude/skills/kk-curate", Action: "removed"},
	}
	if !slices.Equal(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
}

func TestRenderSkillRejectsBadTemplates(t *testing.T) {
	for name, src := range map[string]string{
		"kk-x":   "---\nname: kk-y\ndescription: d\n---\n",
		"kk-z":   "---\nname: kk-z\n---\n",
		"../up":  "---\nname: ../up\ndescription: d\n---\n",
		"kk-bad": "---\nname: [\n---\n",
	} {
		root := t.TempDir()
		o := opts(root)
		o.Skills = map[string][]byte{name: []byte(src)}
		if _, err := New().Install(context.Background(), o); err == nil {
			t.Errorf("%s: no error", name)
		}
		if files := tree(t, root); len(files) != 0 {
			t.Errorf("%s: wrote %v", name, files)
		}
	}
}

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
