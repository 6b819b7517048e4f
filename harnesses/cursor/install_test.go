package cursor

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	ch := install(t, root, "kk")
	want := []harness.Change{
		{Path: ".cursor/hooks.json", Action: "created"},
		{Path: ".cursor/skills/kk-add/SKILL.md", Action: "created"},
		{Path: ".cursor/skills/kk-curate/SKILL.md", Action: "created"},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	golden(t, "hooks.json", read(t, filepath.Join(root, ".cursor", "hooks.json")))
	if got := read(t, filepath.Join(root, ".cursor", "skills", "kk-add", "SKILL.md")); !bytes.Equal(got, testSkills["kk-add"]) {
		t.Errorf("skill not copied byte for byte: %q", got)
	}
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}
	if ch := uninstall(t, root); len(ch) != 3 {
		t.Errorf("uninstall changes %v", ch)
	}
	if exists(filepath.Join(root, ".cursor")) {
		t.Error("uninstall left .cursor behind though kk created everything in it")
	}
	if again := uninstall(t, root); len(again) != 0 {
		t.Errorf("second uninstall changed %v", again)
	}
}

func TestInstallKeepsUserHooks(t *testing.T) {
	root := t.TempDir()
	user := read(t, filepath.Join("testdata", "user-hooks.json"))
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, user)
	userSkill := filepath.Join(root, ".cursor", "skills", "review", "SKILL.md")
	write(t, userSkill, []byte("---\nname: review\n---\nmine\n"))

	ch := install(t, root, "kk")
	if ch[0] != (harness.Change{Path: ".cursor/hooks.json", Action: "updated"}) {
		t.Errorf("changes %v", ch)
	}
	golden(t, "hooks-merged.json", read(t, hooksPath))
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}

	// An upgrade with another kk command replaces kk's entries where they
	// are instead of adding a second set.
	install(t, root, "/opt/kk tools/kk")
	golden(t, "hooks-upgraded.json", read(t, hooksPath))

	uninstall(t, root)
	if got := read(t, hooksPath); !bytes.Equal(got, user) {
		t.Errorf("uninstall did not give back the user's file:\n%s\nwant\n%s", got, user)
	}
	if got := read(t, userSkill); string(got) != "---\nname: review\n---\nmine\n" {
		t.Errorf("user skill changed: %q", got)
	}
	if exists(filepath.Join(root, ".cursor", "skills", "kk-add")) {
		t.Error("kk's skill folder left behind")
	}
}

func TestInstallKeepsLayoutOfUnchangedFile(t *testing.T) {
	root := t.TempDir()
	install(t, root, "kk")
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	// The same document, indented with four spaces instead of two.
	var b bytes.Buffer
	if err := json.Indent(&b, compactBytes(t, read(t, hooksPath)), "", "    "); err != nil {
		t.Fatal(err)
	}
	write(t, hooksPath, b.Bytes())
	if ch := install(t, root, "kk"); len(ch) != 0 {
		t.Errorf("a layout-only difference rewrote the file: %v", ch)
	}
	if got := read(t, hooksPath); !bytes.Equal(got, b.Bytes()) {
		t.Error("the user's layout was not kept")
	}
}

func TestInstallReplacesKenkeepHooks(t *testing.T) {
	root := t.TempDir()
	hooksPath := filepath.Join(root, ".cursor", "hooks.json")
	write(t, hooksPath, []byte(`{
  "version": 1,
  "hooks": {
    "sessionStart": [
      {"command": "node ./.ai/kenkeep/hooks/cursor/kk-session-start.cjs", "timeout": 30},
      {"command": "./scripts/warm-cache.sh"}
    ],
    "stop": [
      {"command": "node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs", "timeout": 30}
    ]
  }
}
`))
	install(t, root, "kk")
	got := string(read(t, hooksPath))
	if strings.Contains(got, "kenkeep/hooks") {
		t.Errorf("kenkeep's entries survived:\n%s", got)
	}
	var file struct {
		Hooks map[string][]entry `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(got), &file); err != nil {
		t.Fatal(err)
	}
	start := file.Hooks["sessionStart"]
	if len(start) != 3 || start[0].Command != "kk hook session-start --harness cursor" || start[2].Command != "./scripts/warm-cache.sh" {
		t.Errorf("sessionStart %+v: kk's entries should take kenkeep's place, before the user's", start)
	}
}

func TestInstallRejectsBadFiles(t *testing.T) {
	for name, content := range map[string]string{
		"not json":         "{\"version\": 1,",
		"hooks not object": `{"version": 1, "hooks": []}`,
		"event not list":   `{"version": 1, "hooks": {"stop": {"command": "x"}}}`,
		"array":            `[]`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			hooksPath := filepath.Join(root, ".cursor", "hooks.json")
			write(t, hooksPath, []byte(content))
			_, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills})
			if err == nil || !strings.Contains(err.Error(), "hooks.json") {
				t.Fatalf("error %v should name hooks.json", err)
			}
			if got := read(t, hooksPath); string(got) != content {
				t.Errorf("file changed to %q", got)
			}
			if exists(filepath.Join(root, ".cursor", "skills")) {
				t.Error("skills were written although the install failed")
			}
			if _, err := New().Uninstall(context.Background(), harness.InstallOptions{Root: root, Skills: testSkills}); err == nil {
				t.Error("uninstall accepted a broken file")
			}
			if got := read(t, hooksPath); string(got) != content {
				t.Errorf("uninstall changed the file to %q", got)
			}
		})
	}
}

func TestInstallRejectsBadInput(t *testing.T) {
	root := t.TempDir()
	for _, opts := range []harness.InstallOptions{
		{Root: root, Command: `/opt/$HOME/kk`, Skills: testSkills},
		{Root: root, Command: "kk", Skills: map[string][]byte{"../evil": []byte("x")}},
	} {
		if _, err := New().Install(context.Background(), opts); err == nil {
			t.Errorf("install %+v succeeded", opts)
		}
	}
	if exists(filepath.Join(root, ".cursor")) {
		t.Error("a rejected install wrote files")
	}
}

func TestCommandWord(t *testing.T) {
	for in, want := range map[string]string{
		"":                      "kk",
		"kk":                    "kk",
		"/usr/local/bin/kk":     "/usr/local/bin/kk",
		`C:\Tools\kk.exe`:       `C:\Tools\kk.exe`,
		"/opt/kk tools/kk":      `"/opt/kk tools/kk"`,
		"/home/me/it's/kk":      `"/home/me/it's/kk"`,
		"/opt/a&b/kk":           `"/opt/a&b/kk"`,
		"/Applications/K K/kk+": `"/Applications/K K/kk+"`,
	} {
		got, err := commandWord(in)
		if err != nil || got != want {
			t.Errorf("commandWord(%q) = %q, %v; want %q", in, got, err, want)
		}
		if err == nil && in != "" && unquoteWord(got) != in {
			t.Errorf("unquoteWord(%q) = %q", got, unquoteWord(got))
		}
	}
	for _, bad := range []string{`/opt/"x"/kk`, "/opt/$X/kk", "/opt/`x`/kk", "/opt/x!/kk", "/opt/x y\\kk"} {
		if _, err := commandWord(bad); err == nil {
			t.Errorf("commandWord(%q) accepted", bad)
		}
	}
}

func TestOwned(t *testing.T) {
	for cmd, want := range map[string]bool{
		"kk hook capture --harness cursor":                   true,
		`"/opt/kk tools/kk" hook lint-tick --harness cursor`: true,
		"node ./.ai/kenkeep/hooks/cursor/kk-capture.cjs":     true,
		"kk hook capture --harness claude":                   false,
		"kk hook frobnicate --harness cursor":                false,
		"./scripts/kk hook capture --harness cursor --loud":  false,
		"echo kk": false,
	} {
		raw := marshal(entry{Command: cmd})
		if got := owned(raw); got != want {
			t.Errorf("owned(%q) = %v", cmd, got)
		}
	}
	if owned(json.RawMessage(`"kk hook capture --harness cursor"`)) {
		t.Error("a string entry is owned")
	}
}
