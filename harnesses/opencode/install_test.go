package opencode

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
	ch := install(t, root, "kk")
	want := []harness.Change{
		{Path: ".opencode/opencode.json", Action: "created"},
		{Path: ".opencode/plugins/kk.mjs", Action: "created"},
		{Path: ".opencode/skills/kk-add/SKILL.md", Action: "created"},
		{Path: ".opencode/skills/kk-curate/SKILL.md", Action: "created"},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Fatalf("changes %v, want %v", ch, want)
	}
	golden(t, "opencode.json", read(t, filepath.Join(root, ".opencode", "opencode.json")))
	golden(t, "kk.mjs", read(t, filepath.Join(root, ".opencode", "plugins", "kk.mjs")))
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}

	// The context file written at session start goes with the rest.
	write(t, filepath.Join(root, ".ai", "kenkeep", ".keep"), nil)
	if err := New().WriteContext(root, "ctx"); err != nil {
		t.Fatal(err)
	}
	ch = uninstall(t, root)
	want = []harness.Change{
		{Path: ".opencode/opencode.json", Action: "removed"},
		{Path: ".opencode/plugins/kk.mjs", Action: "removed"},
		{Path: ".ai/kenkeep/.state/opencode-context.md", Action: "removed"},
		{Path: ".opencode/skills/kk-add/SKILL.md", Action: "removed"},
		{Path: ".opencode/skills/kk-curate/SKILL.md", Action: "removed"},
	}
	if !reflect.DeepEqual(ch, want) {
		t.Errorf("uninstall changes %v, want %v", ch, want)
	}
	if exists(filepath.Join(root, ".opencode")) {
		t.Error("uninstall left .opencode behind though kk created everything in it")
	}
	if again := uninstall(t, root); len(again) != 0 {
		t.Errorf("second uninstall changed %v", again)
	}
}

func TestInstallKeepsUserConfig(t *testing.T) {
	root := t.TempDir()
	user := read(t, filepath.Join("testdata", "user-opencode.json"))
	cfg := filepath.Join(root, ".opencode", "opencode.json")
	write(t, cfg, user)
	userPlugin := filepath.Join(root, ".opencode", "plugins", "guard.js")
	write(t, userPlugin, []byte("export default {}\n"))

	install(t, root, "kk")
	golden(t, "opencode-merged.json", read(t, cfg))
	if again := install(t, root, "kk"); len(again) != 0 {
		t.Errorf("second install changed %v", again)
	}
	ch := install(t, root, "/opt/kk tools/kk")
	if !reflect.DeepEqual(ch, []harness.Change{{Path: ".opencode/plugins/kk.mjs", Action: "updated"}}) {
		t.Errorf("a new kk command should change only the plugin: %v", ch)
	}
	if cmd, _ := installedCommand(read(t, filepath.Join(root, ".opencode", "plugins", "kk.mjs"))); cmd != "/opt/kk tools/kk" {
		t.Errorf("plugin runs %q", cmd)
	}

	uninstall(t, root)
	if got := read(t, cfg); !bytes.Equal(got, user) {
		t.Errorf("uninstall did not give back the user's file:\n%s\nwant\n%s", got, user)
	}
	if !exists(userPlugin) {
		t.Error("the user's plugin was removed")
	}
}

func TestInstallReplacesOtherSpellingsOfItsEntries(t *testing.T) {
	root := t.TempDir()
	cfg := filepath.Join(root, ".opencode", "opencode.json")
	// kenkeep's registration of the same plugin file, and a ./-prefixed
	// context path: kk's entries take their places.
	write(t, cfg, []byte(`{"plugin": ["a", "file:///x/.opencode/plugins/kk.mjs", "b"], "instructions": ["./.ai/kenkeep/.state/opencode-context.md", "c.md"]}`))
	install(t, root, "kk")
	var got struct {
		Plugin       []string `json:"plugin"`
		Instructions []string `json:"instructions"`
	}
	if err := json.Unmarshal(read(t, cfg), &got); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got.Plugin, []string{"a", "./plugins/kk.mjs", "b"}) || !reflect.DeepEqual(got.Instructions, []string{".ai/kenkeep/.state/opencode-context.md", "c.md"}) {
		t.Errorf("got %+v", got)
	}
}

func TestInstallRejectsBadFiles(t *testing.T) {
	for name, content := range map[string]string{
		"jsonc":               "{\n  // comments are not JSON\n  \"plugin\": []\n}\n",
		"plugin not list":     `{"plugin": "kk"}`,
		"instructions object": `{"instructions": {"a": 1}}`,
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			cfg := filepath.Join(root, ".opencode", "opencode.json")
			write(t, cfg, []byte(content))
			_, err := New().Install(context.Background(), harness.InstallOptions{Root: root, Command: "kk", Skills: testSkills})
			if err == nil || !strings.Contains(err.Error(), "opencode.json") {
				t.Fatalf("error %v should name opencode.json", err)
			}
			if _, err := New().Uninstall(context.Background(), harness.InstallOptions{Root: root, Skills: testSkills}); err == nil {
				t.Error("uninstall accepted a broken file")
			}
			if got := read(t, cfg); string(got) != content {
				t.Errorf("file changed to %q", got)
			}
			if exists(filepath.Join(root, ".opencode", "plugins")) || exists(filepath.Join(root, ".opencode", "skills")) {
				t.Error("files were written although the install failed")
			}
		})
	}
	root := t.TempDir()
	for _, opts := range []harness.InstallOptions{
		{Root: root, Command: "kk\nrm -rf /", Skills: testSkills},
		{Root: root, Command: "kk", Skills: map[string][]byte{"Bad_Name": []byte("x")}},
	} {
		if _, err := New().Install(context.Background(), opts); err == nil {
			t.Errorf("install %+v succeeded", opts)
		}
	}
	if exists(filepath.Join(root, ".opencode")) {
		t.Error("a rejected install wrote files")
	}
}

func TestUninstallLeavesForeignPlugin(t *testing.T) {
	root := t.TempDir()
	install(t, root, "kk")
	p := filepath.Join(root, ".opencode", "plugins", "kk.mjs")
	write(t, p, []byte("// someone else's kk.mjs\n"))
	uninstall(t, root)
	if !exists(p) {
		t.Error("uninstall removed a kk.mjs that kk did not write")
	}
}

func TestRenderPlugin(t *testing.T) {
	for _, cmd := range []string{"", "kk", `/opt/my "kk"/bin/kk`, "C:\\Tools\\kk.exe", "/srv/ünï/kk\u2028"} {
		src, err := renderPlugin(cmd)
		if err != nil {
			t.Fatal(err)
		}
		want := cmd
		if want == "" {
			want = "kk"
		}
		if got, ok := installedCommand(src); !ok || got != want {
			t.Errorf("renderPlugin(%q) runs %q", cmd, got)
		}
		if !bytes.HasPrefix(src, pluginHeader) {
			t.Error("no header")
		}
	}
}

func TestWriteContext(t *testing.T) {
	root := t.TempDir()
	if err := New().WriteContext(root, "x"); err == nil || !strings.Contains(err.Error(), "no knowledge base") {
		t.Errorf("outside a knowledge base: %v", err)
	}
	if err := os.MkdirAll(filepath.Join(root, ".ai", "kenkeep"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := New().WriteContext(root, "# Project knowledge\n\nRead ENTRY.md.\n\n"); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(root, ".ai", "kenkeep", ".state", "opencode-context.md")
	golden(t, "opencode-context.md", read(t, p))
	past := mtime(t, p)
	if err := New().WriteContext(root, "# Project knowledge\n\nRead ENTRY.md."); err != nil {
		t.Fatal(err)
	}
	if mtime(t, p) != past {
		t.Error("an unchanged context was rewritten")
	}
}
