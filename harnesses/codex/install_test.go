package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
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

func TestInstallFreshRepo(t *testing.T) {
	root := t.TempDir()
	a := New()
	ch, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Change{
		{Path: ".codex/hooks.json", Action: "created"},
		{Path: ".agents/skills/kk-add/SKILL.md", Action: "created"},
		{Path: ".agents/skills/kk-curate/SKILL.md", Action: "created"},
	}
	if !slices.Equal(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	settings := read(t, filepath.Join(root, hooksFile))
	golden(t, "hooks.fresh.json", settings)
	validate(t, hooksSchema(t), settings)
	golden(t, "skill.kk-curate.md", read(t, filepath.Join(root, ".agents/skills/kk-curate/SKILL.md")))

	ch, err = a.Uninstall(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	want = []harness.Change{
		{Path: ".codex/hooks.json", Action: "removed"},
		{Path: ".agents/skills/kk-add", Action: "removed"},
		{Path: ".agents/skills/kk-curate", Action: "removed"},
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
	user := read(t, "testdata/user-hooks.json")
	p := filepath.Join(root, hooksFile)
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
	golden(t, "hooks.merged.json", installed)
	validate(t, hooksSchema(t), installed)
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
	doc["hooks"].(map[string]any)["Notification"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "/opt/old/kk hook notify --harness codex"}}}}
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
		t.Fatalf("uninstall did not restore the user's hooks file:\n%s", got)
	}
	if files := tree(t, root); len(files) != 2 || files[".agents/skills/my-skill/SKILL.md"] == "" {
		t.Fatalf("uninstall left %v", files)
	}
}

// checkUserContent checks that installed keeps the user's keys and hooks
// (see harnesstest.KeepsUserHooks).
func checkUserContent(t *testing.T, user, installed []byte) {
	t.Helper()
	harnesstest.KeepsUserHooks(t, user, installed, "PreToolUse,Stop,SessionStart,UserPromptSubmit,PreCompact,SessionEnd")
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
	data := string(read(t, filepath.Join(root, hooksFile)))
	if !strings.Contains(data, `"command": "'/opt/my hook tools/kk' hook session-start --harness codex"`) {
		t.Fatalf("command not quoted for the shell:\n%s", data)
	}
	if c, _ := hooksCheck(root); c.Level != "ok" {
		t.Fatalf("doctor on a custom command: %+v", c)
	}
	// Going back to the default command replaces kk's entries.
	if _, err := a.Install(ctx, opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := read(t, filepath.Join(root, hooksFile)); bytes.Contains(got, []byte("my hook tools")) {
		t.Fatalf("old entries kept:\n%s", got)
	}
	if got := read(t, filepath.Join(root, hooksFile)); strings.Count(string(got), "hook capture") != 3 {
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
	p := filepath.Join(root, hooksFile)
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
			p := filepath.Join(root, hooksFile)
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := New().Install(context.Background(), opts(root))
			if err == nil || !strings.Contains(err.Error(), hooksFile) {
				t.Fatalf("error %v does not name %s", err, hooksFile)
			}
			if files := tree(t, root); len(files) != 1 || files[".codex/hooks.json"] != content {
				t.Fatalf("a failed install wrote files: %v", files)
			}
		})
	}
}

func TestInstallLeavesForeignEventShapes(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, hooksFile)
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
		{Path: ".agents/skills/kk-add/notes.txt", Action: "removed"},
		{Path: ".agents/skills/kk-curate", Action: "removed"},
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
