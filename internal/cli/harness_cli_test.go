package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// runEnv calls kk in-process with the given environment.
func runEnv(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), args, IO{In: strings.NewReader(""), Out: &out, Err: &errb}, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestInitWarnsWhenKKIsNotOnPath(t *testing.T) {
	dir, bin := t.TempDir(), t.TempDir()
	env := map[string]string{"KK_ROOT": dir, "PATH": bin}
	code, _, stderr := runEnv(t, env, "init", "--harnesses", "fake")
	if code != 0 || !strings.Contains(stderr, "kk: warning: kk is not on PATH, so the hooks just written (`kk hook …`) will fail until it is; put kk on PATH, or run `kk init --upgrade --kk-command <path to kk>`") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	if err := os.WriteFile(filepath.Join(bin, "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runEnv(t, env, "init", "--harnesses", "fake"); code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	// A --kk-command relative to the repository root is looked up there.
	if err := os.MkdirAll(filepath.Join(dir, "tools"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tools", "kk"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runEnv(t, env, "init", "--harnesses", "fake", "--kk-command", "tools/kk"); code != 0 || strings.Contains(stderr, "warning") {
		t.Fatalf("exit %d, stderr:\n%s", code, stderr)
	}
	data, _ := os.ReadFile(filepath.Join(dir, ".fake", "settings.json"))
	if !strings.Contains(string(data), `"tools/kk hook capture --harness fake"`) {
		t.Fatalf("settings:\n%s", data)
	}
}

func TestChildEnvSetsTheRecursionGuard(t *testing.T) {
	got := childEnv([]string{"A=1", "KK_INTERNAL=", "PWD=/elsewhere", "CLAUDECODE=1", "B=2"}, "/repo")
	want := []string{"A=1", "B=2", "KENKEEP_BUILDER_INTERNAL=1", "KK_INTERNAL=1", "PWD=/repo"}
	if !slices.Equal(got, want) {
		t.Fatalf("childEnv = %q, want %q", got, want)
	}
}
