package copilot

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestInstallFresh(t *testing.T) {
	root := t.TempDir()
	changes, err := New().Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "kk.json", readFile(t, filepath.Join(root, ".github/hooks/kk.json")))
	want := []harness.Change{{Path: ".github/hooks/kk.json", Action: "created"}}
	for _, n := range []string{"kk-add", "kk-bootstrap", "kk-curate", "kk-graph", "kk-migrate", "kk-phrasings", "kk-session-extract"} {
		want = append(want, harness.Change{Path: ".github/skills/" + n + "/SKILL.md", Action: "created"})
		if got := readFile(t, filepath.Join(root, ".github/skills", n, "SKILL.md")); !bytes.Equal(got, shippedSkills()[n]) {
			t.Errorf("skill %s is not a byte copy of the template", n)
		}
	}
	if !reflect.DeepEqual(changes, want) {
		t.Errorf("changes = %v\nwant %v", changes, want)
	}
	// The file has the documented shape: version 1, event → flat list of
	// {type: command, bash, timeoutSec}.
	var file struct {
		Version int                    `json:"version"`
		Hooks   map[string][]hookEntry `json:"hooks"`
	}
	if err := json.Unmarshal(readFile(t, filepath.Join(root, ".github/hooks/kk.json")), &file); err != nil {
		t.Fatal(err)
	}
	if file.Version != 1 || len(file.Hooks["sessionEnd"]) != 2 || file.Hooks["agentStop"][0].Bash != "kk hook capture --harness copilot" {
		t.Errorf("hooks file: %+v", file)
	}
	for ev, list := range file.Hooks {
		for _, e := range list {
			if e.Type != "command" || e.TimeoutSec != 30 || e.CWD != "" || strings.Contains(e.Bash, "KK_INTERNAL") {
				t.Errorf("%s entry %+v", ev, e)
			}
		}
	}
}

func TestInstallTwiceChangesNothing(t *testing.T) {
	root := t.TempDir()
	a := New()
	if _, err := a.Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	before := tree(t, root)
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil || len(changes) != 0 {
		t.Fatalf("second install: %v %v", changes, err)
	}
	if !reflect.DeepEqual(before, tree(t, root)) {
		t.Error("second install changed the tree")
	}
}

func TestInstallRewritesKKFileAndKeepsUserFiles(t *testing.T) {
	root := t.TempDir()
	userHooks := `{"version":1,"hooks":{"preToolUse":[{"type":"command","bash":"./audit.sh","timeoutSec":5}]}}` + "\n"
	userSkill := "---\nname: release\ndescription: Cut a release.\n---\n\n1. Tag.\n"
	writeFile(t, filepath.Join(root, ".github/hooks/user.json"), userHooks)
	writeFile(t, filepath.Join(root, ".github/skills/release/SKILL.md"), userSkill)
	writeFile(t, filepath.Join(root, ".github/hooks/kk.json"), `{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"node old.cjs","env":{"KK_INTERNAL":"1"}}]}}`)
	writeFile(t, filepath.Join(root, ".github/skills/kk-add/SKILL.md"), "old")

	a := New()
	changes, err := a.Install(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if changes[0] != (harness.Change{Path: ".github/hooks/kk.json", Action: "updated"}) || changes[1] != (harness.Change{Path: ".github/skills/kk-add/SKILL.md", Action: "updated"}) {
		t.Errorf("changes = %v", changes)
	}
	golden(t, "kk.json", readFile(t, filepath.Join(root, ".github/hooks/kk.json")))

	// Uninstall removes exactly kk's files; the user's stay byte for byte.
	changes, err = a.Uninstall(context.Background(), opts(root))
	if err != nil {
		t.Fatal(err)
	}
	if len(changes) != 8 || changes[0] != (harness.Change{Path: ".github/hooks/kk.json", Action: "removed"}) {
		t.Errorf("uninstall changes = %v", changes)
	}
	want := map[string]string{".github/hooks/user.json": userHooks, ".github/skills/release/SKILL.md": userSkill}
	if got := tree(t, root); !reflect.DeepEqual(got, want) {
		t.Errorf("after uninstall: %v", got)
	}
	if changes, err := a.Uninstall(context.Background(), opts(root)); err != nil || len(changes) != 0 {
		t.Errorf("second uninstall: %v %v", changes, err)
	}
}

// A .github/hooks/kk.json holding a hook of a person's (a file of kk's
// name written by hand) is neither rewritten nor removed: kk says where
// the hook belongs, and the file stays byte for byte. Before, install
// replaced it with kk's and uninstall deleted it, and the hook was lost.
func TestInstallAndUninstallKeepAPersonsHooksInKKJSON(t *testing.T) {
	root := t.TempDir()
	mine := `{"version":1,"hooks":{"sessionStart":[{"type":"command","bash":"echo mine"}]}}` + "\n"
	writeFile(t, filepath.Join(root, ".github/hooks/kk.json"), mine)
	a := New()
	for name, run := range map[string]func(context.Context, harness.InstallOptions) ([]harness.Change, error){"install": a.Install, "uninstall": a.Uninstall} {
		_, err := run(context.Background(), opts(root))
		if err == nil || !strings.Contains(err.Error(), "holds hooks that are not kk's (sessionStart: echo mine)") || !strings.Contains(err.Error(), "move them to a file of their own under .github/hooks") {
			t.Errorf("%s: %v", name, err)
		}
		if got := string(readFile(t, filepath.Join(root, ".github/hooks/kk.json"))); got != mine {
			t.Errorf("%s changed the file: %q", name, got)
		}
	}
}

func TestUninstallRemovesEmptyFolders(t *testing.T) {
	root := t.TempDir()
	a := New()
	if _, err := a.Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	// Without a skill list, uninstall removes the skills this kk ships.
	if _, err := a.Uninstall(context.Background(), harness.InstallOptions{Root: root}); err != nil {
		t.Fatal(err)
	}
	if entries, _ := os.ReadDir(root); len(entries) != 0 {
		t.Errorf("left behind: %v", entries)
	}
}

func TestInstallCommandQuoting(t *testing.T) {
	cases := map[string]string{
		"spaces.json":   "/opt/my tools/kk",
		"relative.json": "./bin/kk",
	}
	for name, command := range cases {
		root := t.TempDir()
		o := opts(root)
		o.Command, o.Skills = command, nil
		if _, err := New().Install(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		golden(t, name, readFile(t, filepath.Join(root, ".github/hooks/kk.json")))
	}
	if got := bashQuote("it's"); got != `'it'\''s'` {
		t.Errorf("bashQuote = %s", got)
	}
	if got := powerShellQuote(`C:\Program Files\kk.exe`); got != `& 'C:\Program Files\kk.exe'` {
		t.Errorf("powerShellQuote = %s", got)
	}
}

func TestInstallBadInputWritesNothing(t *testing.T) {
	for _, skills := range []map[string][]byte{
		{"kk-add": []byte("x"), "../evil": []byte("x")},
		{"kk-add": nil},
	} {
		root := t.TempDir()
		o := opts(root)
		o.Skills = skills
		if _, err := New().Install(context.Background(), o); err == nil {
			t.Errorf("skills %v accepted", skills)
		}
		if entries, _ := os.ReadDir(root); len(entries) != 0 {
			t.Errorf("bad input wrote %v", entries)
		}
	}
	if _, err := New().Install(context.Background(), harness.InstallOptions{Root: filepath.Join(t.TempDir(), "missing")}); err == nil {
		t.Error("missing root accepted")
	}
}
