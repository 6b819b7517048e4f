package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/harness"
)

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	changes, err := New().Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	settings := readFile(t, filepath.Join(root, ".gemini/settings.json"))
	golden(t, "settings.fresh.json", settings)
	validateSettings(t, settings)
	golden(t, "kk-curate.toml", readFile(t, filepath.Join(root, ".gemini/commands/kk-curate.toml")))
	want := []harness.Change{{Path: ".gemini/settings.json", Action: "created"}}
	names := []string{"kk-add", "kk-bootstrap", "kk-curate", "kk-graph", "kk-migrate", "kk-phrasings", "kk-session-extract"}
	for _, n := range names {
		want = append(want, harness.Change{Path: ".gemini/commands/" + n + ".toml", Action: "created"})
	}
	for _, n := range names {
		want = append(want, harness.Change{Path: ".gemini/skills/" + n + "/SKILL.md", Action: "created"})
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %v", changes)
	}
	if strings.Contains(string(settings), "KK_INTERNAL") {
		t.Error("the recursion guard was written into the hooks' environment")
	}

	before := tree(t, root)
	changes, err = New().Install(context.Background(), opts(root))
	if err != nil || len(changes) != 0 {
		t.Fatalf("second install: %v %v", changes, err)
	}
	if !reflect.DeepEqual(before, tree(t, root)) {
		t.Error("second install changed the tree")
	}

	// Without a skill list, uninstall removes the commands and skills of
	// the skills this kk ships.
	changes, err = New().Uninstall(context.Background(), harness.InstallOptions{Root: root})
	if err != nil || len(changes) != 1+2*len(names) || changes[0] != (harness.Change{Path: ".gemini/settings.json", Action: "removed"}) {
		t.Fatalf("uninstall: %v %v", changes, err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("uninstall left %v", entries)
	}
}

// A user's settings survive install, upgrade (another kk command) and
// uninstall untouched.
func TestMergeKeepsUserSettings(t *testing.T) {
	user := readFile(t, "testdata/settings/user.json")
	if o, _ := harness.ParseObject(user); o == nil {
		t.Fatal("fixture does not parse")
	} else if canon, _ := o.Indented(); !bytes.Equal(canon, user) {
		t.Fatalf("fixture is not in the canonical layout:\n%s", canon)
	}
	validateSettings(t, user)
	root := t.TempDir()
	p := filepath.Join(root, ".gemini/settings.json")
	writeFile(t, p, string(user))
	userCommand := "description = \"mine\"\nprompt = \"do it\"\n"
	writeFile(t, filepath.Join(root, ".gemini/commands/deploy.toml"), userCommand)

	a := New()
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if changes[0] != (harness.Change{Path: ".gemini/settings.json", Action: "updated"}) {
		t.Errorf("changes = %v", changes)
	}
	merged := readFile(t, p)
	golden(t, "settings.merged.json", merged)
	validateSettings(t, merged)
	keepsUser(t, user, merged)

	if changes, err := a.Install(context.Background(), opts(root)); err != nil || len(changes) != 0 {
		t.Errorf("second install: %v %v", changes, err)
	}

	o := opts(root)
	o.Command = "/opt/kk dev/kk"
	if _, err := a.Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	upgraded := readFile(t, p)
	golden(t, "settings.upgraded.json", upgraded)
	validateSettings(t, upgraded)
	keepsUser(t, user, upgraded)

	if _, err := a.Uninstall(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	if got := readFile(t, p); !bytes.Equal(got, user) {
		t.Errorf("uninstall did not restore the user's settings:\n%s", got)
	}
	if got := tree(t, root); !reflect.DeepEqual(got, map[string]string{".gemini/settings.json": string(user), ".gemini/commands/deploy.toml": userCommand}) {
		t.Errorf("after uninstall: %v", got)
	}
}

func TestInstallReplacesKKEntriesInPlace(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, ".gemini/settings.json")
	writeFile(t, p, string(readFile(t, "testdata/settings/moved.json")))
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk"}); err != nil {
		t.Fatal(err)
	}
	got := readFile(t, p)
	golden(t, "settings.moved.json", got)
	validateSettings(t, got)
	// hooks holds the events' groups and "disabled", a list of names.
	var doc struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(got, &doc); err != nil {
		t.Fatal(err)
	}
	type group struct {
		Matcher string      `json:"matcher"`
		Hooks   []hookEntry `json:"hooks"`
	}
	var s struct{ Hooks map[string][]group }
	s.Hooks = map[string][]group{}
	for _, ev := range []string{"SessionStart", "AfterAgent"} {
		var gs []group
		if err := json.Unmarshal(doc.Hooks[ev], &gs); err != nil {
			t.Fatalf("%s: %v", ev, err)
		}
		s.Hooks[ev] = gs
	}
	start := s.Hooks["SessionStart"]
	if len(start) != 1 || start[0].Matcher != "startup" || len(start[0].Hooks) != 3 ||
		start[0].Hooks[0].Name != "greet" || start[0].Hooks[1].Command != "kk hook session-start --harness gemini" ||
		start[0].Hooks[2].Name != "kk-proposal-drain" {
		t.Errorf("SessionStart = %+v", start)
	}
	if after := s.Hooks["AfterAgent"]; len(after) != 1 || len(after[0].Hooks) != 2 || after[0].Hooks[0].Name != "kk-capture" || after[0].Hooks[1].Name != "kk-graph-hint" {
		t.Errorf("AfterAgent = %+v (a retired kk hook must go)", after)
	}

	if _, err := New().Uninstall(context.Background(), harness.InstallOptions{Root: root}); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"startup\",\n        \"hooks\": [\n          {\n            \"name\": \"greet\",\n            \"type\": \"command\",\n            \"command\": \"echo hi\"\n          }\n        ]\n      }\n    ],\n    \"disabled\": [\n      \"greet\"\n    ]\n  }\n}\n"
	if got := string(readFile(t, p)); got != want {
		t.Errorf("after uninstall:\n%s", got)
	}
}

func TestInstallBadInputWritesNothing(t *testing.T) {
	cases := map[string]struct {
		settings string
		skills   map[string][]byte
		errPart  string
	}{
		"hooks not an object": {`{"hooks": []}`, nil, `field "hooks" is not a JSON object`},
		"event not a list":    {`{"hooks": {"SessionStart": {"x": 1}}}`, nil, `"hooks.SessionStart" is not a list`},
		"not an object":       {`[1]`, nil, "settings.json"},
		"not JSON":            {`{"a":`, nil, "settings.json"},
		"shell in skill":      {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\ndescription: d\n---\n\nRun !{rm -rf /}.\n")}, `"!{"`},
		"file in skill":       {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\ndescription: d\n---\n\nRead @{secrets.txt}.\n")}, `"@{"`},
		"no description":      {"", map[string][]byte{"kk-x": []byte("---\nname: kk-x\n---\n\nBody.\n")}, "no description"},
		"bad name":            {"", map[string][]byte{"../x": []byte("---\ndescription: d\n---\nB\n")}, "skill name"},
	}
	for name, c := range cases {
		root := t.TempDir()
		if c.settings != "" {
			writeFile(t, filepath.Join(root, ".gemini/settings.json"), c.settings)
		}
		before := tree(t, root)
		o := opts(root)
		if c.skills != nil {
			o.Skills = c.skills
		}
		_, err := New().Install(context.Background(), o)
		if err == nil || !strings.Contains(err.Error(), c.errPart) {
			t.Errorf("%s: err = %v, want one containing %q", name, err, c.errPart)
		}
		if !reflect.DeepEqual(before, tree(t, root)) {
			t.Errorf("%s: bad input changed the tree", name)
		}
	}
}

func TestCommandsParseBack(t *testing.T) {
	for name, skill := range shippedSkills() {
		data, err := renderCommand(name, skill)
		if err != nil {
			t.Fatal(err)
		}
		got := parseTOML(t, string(data))
		doc, _ := frontmatter.Parse(skill)
		desc, _ := doc.Value("description")
		body := strings.TrimLeft(string(doc.Body()), "\n")
		if got["description"] != desc || got["prompt"] != body {
			t.Errorf("%s: TOML does not read back as the skill:\n%s", name, data)
		}
		if len(got) != 2 {
			t.Errorf("%s: keys %v", name, got)
		}
	}
}

func TestTOMLEscaping(t *testing.T) {
	bodies := []string{
		"plain\n",
		"has ''' and \"\"\" and a \\ backslash\n",
		"ends with a quote'",
		"control \x01 char and\ttab and \r\n line\n",
		"\"\"\"\n",
		"quote at the end\"",
		"unicode: é — 日本\n",
	}
	for _, b := range bodies {
		src := "description = " + tomlBasic(b) + "\nprompt = " + tomlMultiline(b) + "\n"
		got := parseTOML(t, src)
		if got["description"] != b || got["prompt"] != b {
			t.Errorf("%q round-trips as %q / %q\n%s", b, got["description"], got["prompt"], src)
		}
	}
	if !strings.HasPrefix(tomlMultiline("plain\n"), "'''") {
		t.Error("plain text should use a literal string")
	}
}

func TestHookCommand(t *testing.T) {
	for command, want := range map[string]string{
		"kk":            "kk hook capture --harness gemini",
		"/usr/bin/kk":   "/usr/bin/kk hook capture --harness gemini",
		"/opt/my kk/kk": "'/opt/my kk/kk' hook capture --harness gemini",
		"./bin/kk":      "$GEMINI_PROJECT_DIR/bin/kk hook capture --harness gemini",
		"tools/it's/kk": `$GEMINI_PROJECT_DIR/'tools/it'\''s/kk' hook capture --harness gemini`,
	} {
		if got := hookCommand(command, harness.Capture); got != want {
			t.Errorf("hookCommand(%q) = %s, want %s", command, got, want)
		}
		raw, _ := rawJSON(hookEntry{Name: hookName(harness.Capture), Command: hookCommand(command, harness.Capture)})
		if !owned(raw) {
			t.Errorf("the entry for %q is not recognised as kk's", command)
		}
	}
	for _, foreign := range []string{
		`{"name":"kk-capture","command":"other hook capture --harness claude"}`,
		`{"name":"capture","command":"kk hook capture --harness gemini"}`,
		`{"name":"kk-x","command":"kk hook capture --harness gemini && rm -rf /"}`,
	} {
		if owned(json.RawMessage(foreign)) {
			t.Errorf("%s counted as kk's", foreign)
		}
	}
}
