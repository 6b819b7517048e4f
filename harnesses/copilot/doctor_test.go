package copilot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

// checks indexes doctor findings by name.
func checks(t *testing.T, root string) map[string]harness.Check {
	t.Helper()
	return harnesstest.Checks(t, New(), root)
}

var expectLevel = harnesstest.ExpectLevel

func TestDoctor(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("COPILOT_HOME", "")
	for _, k := range authEnv {
		t.Setenv(k, "")
	}
	// Doctor only looks the binary up; PATH holds nothing else, so no kk
	// installed on this machine can leak in.
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "copilot"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "copilot"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	root := t.TempDir()

	got := checks(t, root)
	expectLevel(t, got, "binary", levelOK, "copilot found at")
	expectLevel(t, got, "authentication", levelWarn, "may not be signed in")
	expectLevel(t, got, "hooks file", levelError, "missing")
	expectLevel(t, got, "skills", levelWarn, "7 of 7 are missing")
	expectLevel(t, got, "user-level hooks", levelOK, "no user-level")
	expectLevel(t, got, "session-start context", levelOK, "take kk's context from the sessionStart hook")

	if _, err := New().Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	t.Setenv("GH_TOKEN", "x")
	got = checks(t, root)
	expectLevel(t, got, "authentication", levelOK, "$GH_TOKEN")
	expectLevel(t, got, "hooks file", levelOK, "sessionEnd → lint-tick")
	expectLevel(t, got, "skills", levelOK, "7 kk skills installed")
	expectLevel(t, got, "kk command", levelWarn, "the hooks run kk, which cannot be found")
	kkDir := t.TempDir()
	writeFile(t, filepath.Join(kkDir, "kk"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(kkDir, "kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", kkDir+string(os.PathListSeparator)+bin)
	expectLevel(t, checks(t, root), "kk command", levelOK, "the hooks run kk ("+filepath.Join(kkDir, "kk"))

	// A kk hooks file written with another --kk-command is still current;
	// the command itself must exist.
	o := opts(root)
	o.Command = "/opt/kk dir/bin/kk"
	if _, err := New().Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	got = checks(t, root)
	expectLevel(t, got, "hooks file", levelOK, "registers")
	expectLevel(t, got, "kk command", levelWarn, "/opt/kk dir/bin/kk, which cannot be found")
	o.Command = "./bin/kk"
	if _, err := New().Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(root, "bin/kk"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(root, "bin/kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectLevel(t, checks(t, root), "kk command", levelOK, "the hooks run ./bin/kk ("+filepath.Join(root, "bin/kk"))

	// Drift: a missing registration, a foreign entry, an edited skill.
	hooks := filepath.Join(root, ".github/hooks/kk.json")
	data := strings.Replace(string(readFile(t, hooks)), "lint-tick", "lint-tock", 1)
	data = strings.Replace(data, `"agentStop": [`, `"agentStop": [{"type":"command","bash":"./other.sh"},`, 1)
	writeFile(t, hooks, data)
	writeFile(t, filepath.Join(root, ".github/skills/kk-add/SKILL.md"), "edited")
	got = checks(t, root)
	expectLevel(t, got, "hooks file", levelWarn, "not a kk hook")
	expectLevel(t, got, "hooks file", levelWarn, "sessionEnd → lint-tock")
	expectLevel(t, got, "skills", levelWarn, ".github/skills/kk-add/SKILL.md")

	writeFile(t, hooks, "{not json")
	expectLevel(t, checks(t, root), "hooks file", levelError, "not a valid hooks file")

	// A user-level kk.json (what older installs wrote) fires every hook twice.
	writeFile(t, filepath.Join(home, ".copilot/hooks/kk.json"), `{"version":1,"hooks":{}}`)
	expectLevel(t, checks(t, root), "user-level hooks", levelWarn, filepath.Join(home, ".copilot/hooks/kk.json"))
	if err := os.Remove(filepath.Join(home, ".copilot/hooks/kk.json")); err != nil {
		t.Fatal(err)
	}
	copilotDir := t.TempDir()
	t.Setenv("COPILOT_HOME", copilotDir)
	writeFile(t, filepath.Join(copilotDir, "settings.json"), `{"hooks":{"agentStop":[{"type":"command","bash":"kk hook capture --harness copilot"}]}}`)
	got = checks(t, root)
	expectLevel(t, got, "user-level hooks", levelWarn, filepath.Join(copilotDir, "settings.json"))

	t.Setenv("GH_TOKEN", "")
	expectLevel(t, checks(t, root), "authentication", levelOK, "settings.json")

	t.Setenv("PATH", t.TempDir())
	expectLevel(t, checks(t, root), "binary", levelWarn, "not on PATH")
}
