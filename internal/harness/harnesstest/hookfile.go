package harnesstest

import (
	"bytes"
	"context"
	"encoding/json"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// HookFile describes an adapter whose hooks live in a Claude-shaped JSON
// file that the user may share with kk (Claude Code's settings.json,
// Codex's hooks.json), for the install tests such adapters share: each
// adapter's tests call the methods under their own test names, and keep
// only their harness's quirks to themselves.
type HookFile struct {
	New       func() harness.Adapter
	Harness   string // the adapter's id, as --harness names it
	File      string // the hooks file, relative to the root
	SkillsDir string // where the skills go, relative to the root
	// Skills are the skill templates the tests install (two, named
	// kk-add and kk-curate).
	Skills map[string][]byte
	// Golden compares got with the adapter's golden file name, or
	// rewrites it; FreshGolden and MergedGolden name the hooks file
	// after an install in an empty root and over the user's file.
	Golden                    func(t *testing.T, name string, got []byte)
	FreshGolden, MergedGolden string
	// Validate checks a hooks file against the harness's own schema.
	Validate func(t *testing.T, data []byte)
	// User is the user's own hooks file (testdata), UserEvents the events
	// of the file kk's install gives, comma-separated in order.
	User, UserEvents string
	// Check is the adapter's doctor check of its hooks.
	Check func(root string) harness.Check
}

// opts are the install options for root: the command kk, a copy of
// the skills (a test may drop one).
func (h HookFile) opts(root string) harness.InstallOptions {
	return harness.InstallOptions{Root: root, Command: "kk", Skills: maps.Clone(h.Skills)}
}

// path is the hooks file's path under root.
func (h HookFile) path(root string) string { return filepath.Join(root, filepath.FromSlash(h.File)) }

// changes are the changes of an install ("created", the skills'
// SKILL.md files) or an uninstall ("removed", their folders): the hooks
// file first, then the skills by name.
func (h HookFile) changes(action, skillFile string) []harness.Change {
	ch := []harness.Change{{Path: h.File, Action: action}}
	for _, name := range []string{"kk-add", "kk-curate"} {
		ch = append(ch, harness.Change{Path: path.Join(h.SkillsDir, name, skillFile), Action: action})
	}
	return ch
}

// FreshRepo: an install in an empty root creates the hooks file (as the
// golden file, valid by the harness's schema) and the skills; an
// uninstall removes all of it and leaves the root empty.
func (h HookFile) FreshRepo(t *testing.T) {
	root := t.TempDir()
	a := h.New()
	ch, err := a.Install(context.Background(), h.opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if want := h.changes("created", "SKILL.md"); !slices.Equal(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	data := ReadFile(t, h.path(root))
	h.Golden(t, h.FreshGolden, data)
	h.Validate(t, data)
	h.Golden(t, "skill.kk-curate.md", ReadFile(t, filepath.Join(root, filepath.FromSlash(h.SkillsDir), "kk-curate", "SKILL.md")))

	ch, err = a.Uninstall(context.Background(), h.opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if want := h.changes("removed", ""); !slices.Equal(ch, want) {
		t.Fatalf("uninstall changes %v, want %v", ch, want)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Fatalf("uninstall left %v", entries)
	}
}

// MergesWithUserFile: over the user's own hooks file and skill, install
// keeps every user key in order and the user's hooks; a second install
// changes nothing; an upgrade over an older kk's hooks gives the same
// file; uninstall gives back the user's file byte for byte and keeps
// the user's skill.
func (h HookFile) MergesWithUserFile(t *testing.T) {
	root := t.TempDir()
	user := ReadFile(t, h.User)
	p := h.path(root)
	WriteFile(t, p, user)
	userSkill := filepath.Join(root, filepath.FromSlash(h.SkillsDir), "my-skill", "SKILL.md")
	WriteFile(t, userSkill, []byte("---\nname: my-skill\ndescription: mine\n---\nbody\n"))
	a := h.New()
	ctx := context.Background()

	if _, err := a.Install(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	installed := ReadFile(t, p)
	h.Golden(t, h.MergedGolden, installed)
	h.Validate(t, installed)
	KeepsUserHooks(t, user, installed, h.UserEvents)

	before := Tree(t, root)
	ch, err := a.Install(ctx, h.opts(root))
	if err != nil || len(ch) != 0 {
		t.Fatalf("second install: %v %v", ch, err)
	}
	if after := Tree(t, root); !mapsEqual(before, after) {
		t.Fatal("second install changed files")
	}

	// An older kk's hooks: another kk command, an event kk no longer
	// uses, a changed handler.
	old := strings.ReplaceAll(string(installed), `"kk hook`, `"/opt/old/kk hook`)
	old = strings.Replace(old, `"timeout": 30`, `"timeout": 99`, 1)
	var doc map[string]any
	if err := json.Unmarshal([]byte(old), &doc); err != nil {
		t.Fatal(err)
	}
	doc["hooks"].(map[string]any)["Notification"] = []any{map[string]any{"hooks": []any{map[string]any{"type": "command", "command": "/opt/old/kk hook notify --harness " + h.Harness}}}}
	oldData, _ := json.MarshalIndent(doc, "", "  ")
	WriteFile(t, p, oldData)
	if _, err := a.Install(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	var got, want any
	if err := json.Unmarshal(ReadFile(t, p), &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(installed, &want); err != nil {
		t.Fatal(err)
	}
	if !JSONEqual(got, want) {
		t.Fatalf("upgrade gave\n%s\nwant\n%s", ReadFile(t, p), installed)
	}

	WriteFile(t, p, installed)
	if _, err := a.Uninstall(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := ReadFile(t, p); !bytes.Equal(got, user) {
		t.Fatalf("uninstall did not restore the user's %s:\n%s", h.File, got)
	}
	if files := Tree(t, root); len(files) != 2 || files[path.Join(h.SkillsDir, "my-skill", "SKILL.md")] == "" {
		t.Fatalf("uninstall left %v", files)
	}
}

// CustomCommand: a kk command with spaces is quoted for the shell and
// doctor accepts it; going back to the default command replaces kk's
// entries instead of adding to them.
func (h HookFile) CustomCommand(t *testing.T) {
	root := t.TempDir()
	a := h.New()
	ctx := context.Background()
	o := h.opts(root)
	o.Command = "/opt/my hook tools/kk"
	if _, err := a.Install(ctx, o); err != nil {
		t.Fatal(err)
	}
	data := string(ReadFile(t, h.path(root)))
	if !strings.Contains(data, `"command": "'/opt/my hook tools/kk' hook session-start --harness `+h.Harness+`"`) {
		t.Fatalf("command not quoted for the shell:\n%s", data)
	}
	if c := h.Check(root); c.Level != "ok" {
		t.Fatalf("doctor on a custom command: %+v", c)
	}
	if _, err := a.Install(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	got := ReadFile(t, h.path(root))
	if bytes.Contains(got, []byte("my hook tools")) {
		t.Fatalf("old entries kept:\n%s", got)
	}
	if strings.Count(string(got), "hook capture") != 3 {
		t.Fatalf("capture handlers duplicated:\n%s", got)
	}
}

// UserHandlerInKKGroup: a handler the user added to a group kk wrote
// stays, alone, after uninstall.
func (h HookFile) UserHandlerInKKGroup(t *testing.T) {
	root := t.TempDir()
	a := h.New()
	ctx := context.Background()
	if _, err := a.Install(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	p := h.path(root)
	var doc map[string]any
	if err := json.Unmarshal(ReadFile(t, p), &doc); err != nil {
		t.Fatal(err)
	}
	stop := doc["hooks"].(map[string]any)["Stop"].([]any)[0].(map[string]any)
	stop["hooks"] = append(stop["hooks"].([]any), map[string]any{"type": "command", "command": "say done"})
	data, _ := json.MarshalIndent(doc, "", "  ")
	WriteFile(t, p, append(data, '\n'))
	if _, err := a.Uninstall(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"command\": \"say done\",\n            \"type\": \"command\"\n          }\n        ]\n      }\n    ]\n  }\n}\n"
	if got := string(ReadFile(t, p)); got != want {
		t.Fatalf("uninstall gave\n%s", got)
	}
}

// RejectsBadFile: a hooks file kk cannot merge into is an error naming
// it, and nothing is written.
func (h HookFile) RejectsBadFile(t *testing.T) {
	for name, content := range map[string]string{
		"not json":         "{\"hooks\": ",
		"not an object":    "[1, 2]",
		"hooks not object": `{"hooks": []}`,
		"event not array":  `{"hooks": {"Stop": {"hooks": []}}}`,
		"group not object": `{"hooks": {"SessionStart": ["kk"]}}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			WriteFile(t, h.path(root), []byte(content))
			_, err := h.New().Install(context.Background(), h.opts(root))
			if err == nil || !strings.Contains(err.Error(), h.File) {
				t.Fatalf("error %v does not name %s", err, h.File)
			}
			if files := Tree(t, root); len(files) != 1 || files[h.File] != content {
				t.Fatalf("a failed install wrote files: %v", files)
			}
		})
	}
}

// LeavesForeignEventShapes: an event whose value is not kk's shape is
// the user's, left as it is through install and uninstall.
func (h HookFile) LeavesForeignEventShapes(t *testing.T) {
	root := t.TempDir()
	p := h.path(root)
	user := "{\n  \"hooks\": {\n    \"Notification\": \"not ours\"\n  }\n}\n"
	WriteFile(t, p, []byte(user))
	a := h.New()
	if _, err := a.Install(context.Background(), h.opts(root)); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Uninstall(context.Background(), h.opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := string(ReadFile(t, p)); got != user {
		t.Fatalf("got\n%s", got)
	}
}

// SkillsUpgrade: an install that no longer ships a skill removes its
// folder, and a stray file in a kk skill folder goes.
func (h HookFile) SkillsUpgrade(t *testing.T) {
	root := t.TempDir()
	a := h.New()
	ctx := context.Background()
	if _, err := a.Install(ctx, h.opts(root)); err != nil {
		t.Fatal(err)
	}
	WriteFile(t, filepath.Join(root, filepath.FromSlash(h.SkillsDir), "kk-add", "notes.txt"), []byte("x"))
	o := h.opts(root)
	delete(o.Skills, "kk-curate")
	ch, err := a.Install(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	want := []harness.Change{
		{Path: path.Join(h.SkillsDir, "kk-add", "notes.txt"), Action: "removed"},
		{Path: path.Join(h.SkillsDir, "kk-curate"), Action: "removed"},
	}
	if !slices.Equal(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
}

// RejectsBadSkillTemplates: a skill template whose name disagrees with
// its key, that lacks a description, names a path or is not YAML fails
// the install, and nothing is written.
func (h HookFile) RejectsBadSkillTemplates(t *testing.T) {
	for name, src := range map[string]string{
		"kk-x":   "---\nname: kk-y\ndescription: d\n---\n",
		"kk-z":   "---\nname: kk-z\n---\n",
		"../up":  "---\nname: ../up\ndescription: d\n---\n",
		"kk-bad": "---\nname: [\n---\n",
	} {
		root := t.TempDir()
		o := h.opts(root)
		o.Skills = map[string][]byte{name: []byte(src)}
		if _, err := h.New().Install(context.Background(), o); err == nil {
			t.Errorf("%s: no error", name)
		}
		if files := Tree(t, root); len(files) != 0 {
			t.Errorf("%s: wrote %v", name, files)
		}
	}
}
