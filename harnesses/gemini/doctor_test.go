package gemini

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
	t.Setenv("GITHUB_SHA", "")
	t.Setenv("SURFACE", "")
	// Doctor only looks the binary up; PATH holds nothing else, so no kk
	// installed on this machine can leak in.
	bin := t.TempDir()
	writeFile(t, filepath.Join(bin, "gemini"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(bin, "gemini"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin)
	root := t.TempDir()

	got := checks(t, root)
	expectLevel(t, got, "binary", levelOK, "gemini found at")
	expectLevel(t, got, "hooks", levelError, "missing")
	expectLevel(t, got, "commands", levelWarn, "7 of 7 are missing")
	expectLevel(t, got, "hooks enabled", levelOK, "no setting")
	expectLevel(t, got, "folder trust", levelWarn, "is not in")
	expectLevel(t, got, "recursion guard", levelOK, "reaches")
	expectLevel(t, got, "context file", levelOK, "GEMINI.md")

	if _, err := New().Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(home, ".gemini/trustedFolders.json"), `{"`+filepath.Dir(root)+`": "TRUST_FOLDER"}`)
	got = checks(t, root)
	expectLevel(t, got, "hooks", levelOK, "SessionEnd → lint-tick")
	expectLevel(t, got, "commands", levelOK, "7 kk commands")
	expectLevel(t, got, "folder trust", levelOK, "is trusted")
	expectLevel(t, got, "kk command", levelWarn, "the hooks run kk, which cannot be found")

	// The kk command the hooks run must exist: on PATH, or under the
	// project folder for a relative one.
	o := opts(root)
	o.Command = "./tools/my kk"
	if _, err := New().Install(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	expectLevel(t, checks(t, root), "kk command", levelWarn, "./tools/my kk, which cannot be found")
	writeFile(t, filepath.Join(root, "tools/my kk"), "#!/bin/sh\n")
	expectLevel(t, checks(t, root), "kk command", levelWarn, "cannot be found") // not executable
	if err := os.Chmod(filepath.Join(root, "tools/my kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	expectLevel(t, checks(t, root), "kk command", levelOK, "the hooks run ./tools/my kk ("+filepath.Join(root, "tools/my kk"))
	if _, err := New().Install(context.Background(), opts(root)); err != nil {
		t.Fatal(err)
	}
	kkDir := t.TempDir()
	writeFile(t, filepath.Join(kkDir, "kk"), "#!/bin/sh\n")
	if err := os.Chmod(filepath.Join(kkDir, "kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", kkDir+string(os.PathListSeparator)+bin)
	expectLevel(t, checks(t, root), "kk command", levelOK, "the hooks run kk ("+filepath.Join(kkDir, "kk"))

	writeFile(t, filepath.Join(home, ".gemini/trustedFolders.json"), `{"`+filepath.Join(root, "sub")+`": "TRUST_PARENT"}`)
	expectLevel(t, checks(t, root), "folder trust", levelOK, "parent of")
	writeFile(t, filepath.Join(home, ".gemini/trustedFolders.json"), `{"`+root+`": "DO_NOT_TRUST"}`)
	expectLevel(t, checks(t, root), "folder trust", levelWarn, "marked untrusted")
	writeFile(t, filepath.Join(home, ".gemini/settings.json"), `{"security": {"folderTrust": {"enabled": false}}, "hooksConfig": {"disabled": ["kk-capture"]}}`)
	got = checks(t, root)
	expectLevel(t, got, "folder trust", levelOK, "folder trust is off")
	expectLevel(t, got, "hooks enabled", levelWarn, "lists kk-capture in hooksConfig.disabled")

	// Settings that switch hooks off, in the project file.
	p := filepath.Join(root, ".gemini/settings.json")
	data := string(readFile(t, p))
	writeFile(t, p, strings.Replace(data, "{\n", "{\n  \"hooksConfig\": {\"enabled\": false},\n", 1))
	expectLevel(t, checks(t, root), "hooks enabled", levelWarn, "sets hooksConfig.enabled to false")

	// Drift in kk's entries and commands.
	writeFile(t, p, strings.Replace(data, "lint-tick --harness", "lint-tock --harness", 1))
	writeFile(t, filepath.Join(root, ".gemini/commands/kk-add.toml"), "prompt = \"old\"\n")
	got = checks(t, root)
	expectLevel(t, got, "hooks", levelWarn, "SessionEnd → lint-tock")
	expectLevel(t, got, "commands", levelWarn, ".gemini/commands/kk-add.toml")
	writeFile(t, p, "{")
	expectLevel(t, checks(t, root), "hooks", levelError, "cannot be read")

	// The recursion guard under GitHub Actions, and the allow-list fix.
	t.Setenv("GITHUB_SHA", "abc")
	expectLevel(t, checks(t, root), "recursion guard", levelWarn, "strips KK_INTERNAL")
	writeFile(t, filepath.Join(home, ".gemini/settings.json"), `{"security": {"environmentVariableRedaction": {"allowed": ["KK_INTERNAL"]}}}`)
	expectLevel(t, checks(t, root), "recursion guard", levelOK, "reaches")
	t.Setenv("GITHUB_SHA", "")
	writeFile(t, filepath.Join(home, ".gemini/settings.json"), `{"security": {"environmentVariableRedaction": {"enabled": true}}}`)
	expectLevel(t, checks(t, root), "recursion guard", levelWarn, "turns environment redaction on")

	t.Setenv("PATH", t.TempDir())
	expectLevel(t, checks(t, root), "binary", levelWarn, "not on PATH")
}

func TestWithin(t *testing.T) {
	for _, c := range []struct {
		p, dir string
		want   bool
	}{
		{"/a/b", "/a", true}, {"/a", "/a", true}, {"/ab", "/a", false}, {"/a/../b", "/a", false}, {"/", "/a", false},
	} {
		if got := within(c.p, c.dir); got != c.want {
			t.Errorf("within(%q, %q) = %v", c.p, c.dir, got)
		}
	}
}
