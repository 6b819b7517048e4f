package harness

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestHookCommand(t *testing.T) {
	if got := HookCommand("'/opt/my kk'", Capture, "fake"); got != "'/opt/my kk' hook capture --harness fake" {
		t.Errorf("HookCommand = %s", got)
	}
	for cmd, want := range map[string][2]string{
		"kk hook capture --harness fake":                                 {"kk", "capture"},
		"'/opt/my hook tools/kk' hook lint-tick --harness fake":          {"'/opt/my hook tools/kk'", "lint-tick"},
		`"$CLAUDE_PROJECT_DIR"/bin/kk hook session-start --harness fake`: {`"$CLAUDE_PROJECT_DIR"/bin/kk`, "session-start"},
		"a hook b hook frobnicate --harness fake":                        {"a hook b", "frobnicate"},
	} {
		kk, ev, ok := MatchHookCommand(cmd, "fake")
		if !ok || kk != want[0] || ev != want[1] {
			t.Errorf("%s: %q %q %v", cmd, kk, ev, ok)
		}
	}
	for _, cmd := range []string{
		"kk hook capture --harness other",
		"kk hook capture --harness fake --loud",
		"kk hook capture --harness fake && rm -rf /",
		"kk hook Capture --harness fake",
		" hook capture --harness fake",
		"hook capture --harness fake",
		"echo kk",
	} {
		if kk, ev, ok := MatchHookCommand(cmd, "fake"); ok {
			t.Errorf("%s matched: %q %q", cmd, kk, ev)
		}
	}
}

func TestAnchoredCommand(t *testing.T) {
	if got := KKCommand(InstallOptions{}); got != "kk" {
		t.Errorf("default command %q", got)
	}
	if got := KKCommand(InstallOptions{Command: "/x/kk"}); got != "/x/kk" {
		t.Errorf("command %q", got)
	}
	for _, c := range []struct{ kk, seps, want string }{
		{"kk", "/", "kk"},
		{"/opt/my tools/kk", "/", "'/opt/my tools/kk'"},
		{"./my tools/kk", "/", "$ROOT/'my tools/kk'"},
		{"bin/kk", "/", "$ROOT/bin/kk"},
		{`bin\kk`, "/", `'bin\kk'`},
		{`bin\kk`, `/\`, `$ROOT/'bin\kk'`},
	} {
		if got := AnchoredCommand(c.kk, "$ROOT/", c.seps); got != c.want {
			t.Errorf("AnchoredCommand(%q, %q) = %s, want %s", c.kk, c.seps, got, c.want)
		}
	}
}

func TestReplaceOwned(t *testing.T) {
	raw := func(ss ...string) []json.RawMessage {
		var out []json.RawMessage
		for _, s := range ss {
			out = append(out, json.RawMessage(s))
		}
		return out
	}
	owned := func(r json.RawMessage) bool { return strings.HasPrefix(string(r), `"kk`) }
	str := func(rs []json.RawMessage) string {
		var ss []string
		for _, r := range rs {
			ss = append(ss, string(r))
		}
		return strings.Join(ss, " ")
	}
	for _, c := range []struct {
		list, ours []json.RawMessage
		want       string
		had        bool
	}{
		{raw(`"a"`, `"kk1"`, `"b"`, `"kk2"`), raw(`"kkN"`), `"a" "kkN" "b"`, true},
		{raw(`"a"`, `"b"`), raw(`"kkN"`, `"kkM"`), `"a" "b" "kkN" "kkM"`, false},
		{raw(`"kk1"`, `"a"`), nil, `"a"`, true},
		{nil, nil, "", false},
	} {
		out, had := ReplaceOwned(c.list, owned, c.ours...)
		if str(out) != c.want || had != c.had {
			t.Errorf("%s + %s: %s %v, want %s %v", str(c.list), str(c.ours), str(out), had, c.want, c.had)
		}
	}
}

// testHookFile is a Claude-shaped hooks file with one async handler.
var testHookFile = HookFile{
	Path:    ".fake/settings.json",
	Harness: "fake",
	Specs: []HookSpec{
		{On: "SessionStart", Event: SessionStart},
		{On: "SessionStart", Event: LintTick, Async: true},
		{On: "Stop", Event: Capture},
	},
	Timeout: 30,
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestHookFileFresh(t *testing.T) {
	root := t.TempDir()
	ch, err := testHookFile.Install(root, "kk")
	if err != nil || !slices.Equal(ch, []Change{{Path: ".fake/settings.json", Action: "created"}}) {
		t.Fatalf("install: %v %v", ch, err)
	}
	want := `{
  "hooks": {
    "SessionStart": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "kk hook session-start --harness fake",
            "timeout": 30
          },
          {
            "type": "command",
            "command": "kk hook lint-tick --harness fake",
            "async": true
          }
        ]
      }
    ],
    "Stop": [
      {
        "hooks": [
          {
            "type": "command",
            "command": "kk hook capture --harness fake",
            "timeout": 30
          }
        ]
      }
    ]
  }
}
`
	p := filepath.Join(root, ".fake", "settings.json")
	if got := readFile(t, p); got != want {
		t.Fatalf("file:\n%s", got)
	}
	if ch, err := testHookFile.Install(root, "kk"); err != nil || len(ch) != 0 {
		t.Fatalf("second install: %v %v", ch, err)
	}
	if c, found := testHookFile.Check(root, "upgrade", nil); c.Level != LevelOK || c.Name != "fake hooks" || len(found) != 2 {
		t.Fatalf("check: %+v %v", c, found)
	}
	ch, err = testHookFile.Uninstall(root, "kk")
	if err != nil || !slices.Equal(ch, []Change{{Path: ".fake/settings.json", Action: "removed"}}) {
		t.Fatalf("uninstall: %v %v", ch, err)
	}
	if _, err := os.Stat(p); !os.IsNotExist(err) {
		t.Fatal("the file kk created is still there")
	}
}

func TestHookFileMerge(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".fake", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	user := `{
  "model": "x",
  "hooks": {
    "Stop": [
      {"matcher": "", "hooks": [{"type": "command", "command": "notify <done> & exit"}]},
      {"hooks": [
        {"type": "command", "command": "/old/kk hook capture --harness fake", "timeout": 9},
        {"type": "command", "command": "mine"}
      ]}
    ],
    "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "guard"}]}]
  },
  "z": 1
}
`
	if err := os.WriteFile(p, []byte(user), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := testHookFile.Install(root, "kk"); err != nil {
		t.Fatal(err)
	}
	doc, err := ParseObject([]byte(readFile(t, p)))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(doc.Keys(), []string{"model", "hooks", "z"}) {
		t.Errorf("keys %v", doc.Keys())
	}
	raw, _ := doc.Get("hooks")
	hooks, _ := ParseObject(raw)
	if !slices.Equal(hooks.Keys(), []string{"Stop", "PreToolUse", "SessionStart"}) {
		t.Errorf("events %v", hooks.Keys())
	}
	stop, _ := hooks.Get("Stop")
	var groups []struct {
		Matcher *string       `json:"matcher"`
		Hooks   []HookHandler `json:"hooks"`
	}
	if err := json.Unmarshal(stop, &groups); err != nil {
		t.Fatal(err)
	}
	// The user's group, then the user's handler left in kk's old group,
	// then kk's new group.
	if len(groups) != 3 || groups[0].Hooks[0].Command != "notify <done> & exit" || groups[1].Hooks[0].Command != "mine" ||
		len(groups[1].Hooks) != 1 || groups[2].Hooks[0].Command != "kk hook capture --harness fake" {
		t.Errorf("Stop groups %+v", groups)
	}
	if !strings.Contains(readFile(t, p), "notify <done> & exit") {
		t.Error("the user's command was re-escaped")
	}
	found, kk := testHookFile.Installed(doc)
	if kk != "kk" || !handlersEqual(found, testHookFile.Wanted("kk")) {
		t.Errorf("installed %v %q", found, kk)
	}

	// phase: uninstall leaves the user's content (kk's old group, now the
	// user's, keeps only the user's handler).
	if _, err := testHookFile.Uninstall(root, "kk"); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, p)
	if strings.Contains(got, "hook capture") || strings.Contains(got, "SessionStart") || !strings.Contains(got, `"mine"`) || !strings.Contains(got, `"guard"`) {
		t.Errorf("after uninstall:\n%s", got)
	}
}

func TestHookFileErrors(t *testing.T) {
	for _, content := range []string{
		`{"hooks": []}`,
		`{"hooks": {"Stop": {"x": 1}}}`,
		`{"hooks": {"Stop": [1]}}`,
		`{"hooks": {"Stop": null}}`,
		`[1]`,
		`{"a":`,
	} {
		root := t.TempDir()
		p := filepath.Join(root, ".fake", "settings.json")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := testHookFile.Install(root, "kk")
		if err == nil || !strings.Contains(err.Error(), ".fake/settings.json") {
			t.Errorf("%s: error %v does not name the file", content, err)
		}
		if got := readFile(t, p); got != content {
			t.Errorf("%s: the file was changed to %s", content, got)
		}
	}
	// An event kk does not use is left alone whatever its shape.
	root := t.TempDir()
	p := filepath.Join(root, ".fake", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(`{"hooks": {"Other": {"x": 1}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := testHookFile.Install(root, "kk"); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(readFile(t, p), `"x": 1`) {
		t.Error("the user's odd event was changed")
	}
}

func TestHookFileUpgradeAndCheck(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".fake", "settings.json")
	if c, _ := testHookFile.Check(root, "upgrade", nil); c.Level != LevelError || c.Fix != "kk init --harnesses fake" {
		t.Errorf("missing file: %+v", c)
	}
	if _, err := testHookFile.Install(root, "/opt/old/kk"); err != nil {
		t.Fatal(err)
	}
	old := readFile(t, p)
	if err := os.WriteFile(p, []byte(strings.Replace(old, `"timeout": 30`, `"timeout": 31`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, found := testHookFile.Check(root, "run the upgrade", nil); c.Level != LevelWarn || c.Fix != "run the upgrade" || len(found) == 0 {
		t.Errorf("stale: %+v", c)
	}
	// Another kk command replaces the old handlers instead of adding a
	// second set.
	if _, err := testHookFile.Install(root, "kk"); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); strings.Contains(got, "/opt/old/kk") || strings.Count(got, "hook capture") != 1 {
		t.Errorf("after the upgrade:\n%s", got)
	}
	off := Check{Name: "fake hooks", Level: LevelError, Message: "hooks are off"}
	if c, _ := testHookFile.Check(root, "upgrade", func() (Check, bool) { return off, true }); c != off {
		t.Errorf("switched off: %+v", c)
	}
	if err := os.WriteFile(p, []byte(`{"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "mine"}]}]}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := testHookFile.Check(root, "upgrade", nil); c.Level != LevelError || !strings.Contains(c.Message, "not in") {
		t.Errorf("no kk hooks: %+v", c)
	}
	if err := os.WriteFile(p, []byte(`{`), 0o644); err != nil {
		t.Fatal(err)
	}
	if c, _ := testHookFile.Check(root, "upgrade", nil); c.Level != LevelError || !strings.HasPrefix(c.Fix, "fix the JSON in .fake/settings.json") {
		t.Errorf("broken: %+v", c)
	}
}

func TestHookFileUninstallKeepsEmptyUserFile(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".fake", "settings.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if ch, err := testHookFile.Uninstall(root, "kk"); err != nil || len(ch) != 0 {
		t.Fatalf("uninstall: %v %v", ch, err)
	}
	if got := readFile(t, p); got != "{}\n" {
		t.Errorf("the user's empty file became %q", got)
	}
}

func TestHooksAndSkills(t *testing.T) {
	root := t.TempDir()
	l := HooksAndSkills{Hooks: testHookFile, SkillsDir: ".agents/skills", Root: `"$R"/`, Prune: []string{".fake"}}
	opts := InstallOptions{Root: root, Command: "./bin/kk", Skills: map[string][]byte{
		"kk-add": []byte("---\nname: kk-add\ndescription: Add.\n---\n\nBody.\n"),
	}}
	ch, err := l.Install(opts)
	want := []Change{{Path: ".fake/settings.json", Action: "created"}, {Path: ".agents/skills/kk-add/SKILL.md", Action: "created"}}
	if err != nil || !slices.Equal(ch, want) {
		t.Fatalf("install: %v %v", ch, err)
	}
	if got := readFile(t, filepath.Join(root, ".fake", "settings.json")); !strings.Contains(got, `"command": "\"$R\"/bin/kk hook capture --harness fake"`) {
		t.Errorf("relative command not anchored:\n%s", got)
	}
	bad := opts
	bad.Skills = map[string][]byte{"kk-x": []byte("no front matter")}
	if _, err := l.Install(bad); err == nil {
		t.Error("a bad skill was installed")
	}
	ch, err = l.Uninstall(opts)
	want = []Change{{Path: ".fake/settings.json", Action: "removed"}, {Path: ".agents/skills/kk-add", Action: "removed"}}
	if err != nil || !slices.Equal(ch, want) {
		t.Fatalf("uninstall: %v %v", ch, err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("uninstall left %v", entries)
	}
}
