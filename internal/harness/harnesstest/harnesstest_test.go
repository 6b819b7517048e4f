package harnesstest

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

func TestRecorder(t *testing.T) {
	t.Setenv(harness.RecursionEnv, "1")
	dir := Recorder(t, "fake-cli", "the answer\n")
	if os.Getenv(harness.RecursionEnv) != "" {
		t.Error("the recursion guard was not cleared")
	}
	cmd := exec.Command("fake-cli", "-p", "two words", "")
	cmd.Stdin = strings.NewReader("input")
	cmd.Env = append(os.Environ(), "KK_INTERNAL=1", "FAKE_EXIT=3", "FAKE_ERR=bad")
	out, err := cmd.Output()
	if exit, ok := err.(*exec.ExitError); !ok || exit.ExitCode() != 3 || string(exit.Stderr) != "bad\n" {
		t.Fatalf("run: %v", err)
	}
	if string(out) != "the answer\n" {
		t.Errorf("stdout %q", out)
	}
	if got := RecordedArgs(t, dir); !slices.Equal(got, []string{"-p", "two words", ""}) {
		t.Errorf("args %q", got)
	}
	if got := string(ReadFile(t, filepath.Join(dir, "env"))); got != "1" {
		t.Errorf("env %q", got)
	}
	if got := string(ReadFile(t, filepath.Join(dir, "stdin"))); got != "input" {
		t.Errorf("stdin %q", got)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, harness.RecursionEnv+"=") {
			env = append(env, kv)
		}
	}
	cmd = exec.Command("fake-cli")
	cmd.Env = env
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	if got := string(ReadFile(t, filepath.Join(dir, "env"))); got != "unset" {
		t.Errorf("env without the guard %q", got)
	}
}

func TestInstallFake(t *testing.T) {
	dir := InstallFake(t, "fake-cli", "#!/bin/sh\necho hi\n")
	if p, err := exec.LookPath("fake-cli"); err != nil || p != filepath.Join(dir, "fake-cli") {
		t.Fatalf("not first on PATH: %q %v", p, err)
	}
	out, err := exec.Command(filepath.Join(Sh(t, "other", "echo from sh"), "other")).Output()
	if err != nil || string(out) != "from sh\n" {
		t.Errorf("Sh: %q %v", out, err)
	}
}

func TestFiles(t *testing.T) {
	root := t.TempDir()
	WriteFile(t, filepath.Join(root, "a", "b.txt"), []byte("b"))
	WriteFile(t, filepath.Join(root, "c.txt"), []byte("c"))
	if got := Tree(t, root); len(got) != 2 || got["a/b.txt"] != "b" || got["c.txt"] != "c" {
		t.Errorf("tree %v", got)
	}
	if !Exists(filepath.Join(root, "a")) || Exists(filepath.Join(root, "d")) {
		t.Error("Exists")
	}
	p := filepath.Join(root, "golden", "x.json")
	Golden(t, p, []byte("{}\n"), true)
	Golden(t, p, []byte("{}\n"), false)
	if got := Env(map[string]string{"A": "1"}); got("A") != "1" || got("B") != "" {
		t.Error("Env")
	}
	checks := ByName([]harness.Check{{Name: "a", Level: "ok"}, {Name: "b", Level: "warn"}})
	if len(checks) != 2 || checks["b"].Level != "warn" {
		t.Errorf("ByName %v", checks)
	}
}

func TestJSONHelpers(t *testing.T) {
	if got := string(Compact([]byte("{ \"a\" : [1, 2] }"))); got != `{"a":[1,2]}` {
		t.Errorf("Compact %s", got)
	}
	if !JSONEqual(map[string]any{"a": 1.0}, map[string]any{"a": 1}) || JSONEqual([]int{1}, []int{2}) {
		t.Error("JSONEqual")
	}
	user := []byte(`{"a": 1, "hooks": {"Stop": [{"hooks": [{"command": "mine"}]}]}}`)
	installed := []byte(`{"a":1,"hooks":{"Stop":[{"hooks":[{"command":"mine"}]},{"hooks":[{"command":"kk"}]}],"SessionStart":[]}}`)
	KeepsUserHooks(t, user, installed, "Stop,SessionStart")
}

func TestRecords(t *testing.T) {
	out := t.TempDir()
	work := t.TempDir()
	bin := Sh(t, "fake-cli", Records(out)+"echo done\n")
	cmd := exec.Command(filepath.Join(bin, "fake-cli"), "a b", "c")
	cmd.Dir = work
	cmd.Stdin = strings.NewReader("in")
	cmd.Env = append(os.Environ(), harness.RecursionEnv+"=1")
	if got, err := cmd.Output(); err != nil || string(got) != "done\n" {
		t.Fatalf("run: %q %v", got, err)
	}
	for file, want := range map[string]string{"args": "a b\nc\n", "guard": "1", "stdin": "in"} {
		if got := string(ReadFile(t, filepath.Join(out, file))); got != want {
			t.Errorf("%s: %q, want %q", file, got, want)
		}
	}
	if got := strings.TrimSpace(string(ReadFile(t, filepath.Join(out, "cwd")))); got != work {
		if real, _ := filepath.EvalSymlinks(work); got != real {
			t.Errorf("cwd %q, want %q", got, work)
		}
	}
}
