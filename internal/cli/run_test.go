package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/lock"
	"github.com/kk-project/kk/internal/store"
)

// run calls kk in-process with the given arguments in dir.
func run(t *testing.T, dir, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runWith(t, map[string]string{"KK_ROOT": dir}, stdin, args...)
}

// runWith runs kk with stdin, and env as its whole environment.
func runWith(t *testing.T, env map[string]string, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	streams := IO{In: strings.NewReader(stdin), Out: &out, Err: &errb}
	code = Run(context.Background(), args, streams, func(k string) string { return env[k] })
	return code, out.String(), errb.String()
}

func TestLockedErrorNamesHolder(t *testing.T) {
	dir := t.TempDir()
	if code, _, errs := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, errs)
	}
	held, err := lock.Acquire(context.Background(), store.New(dir).LockPath(), time.Second, "kk curate-persist (test holder)")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = held.Release() }()
	env := map[string]string{"KK_ROOT": dir, "KK_LOCK_WAIT": "150ms"}

	start := time.Now()
	code, _, stderr := runWith(t, env, "body", "node", "write", "practice", "x", "--summary", "s")
	if code != ExitFailure {
		t.Fatalf("exit %d, want 1; stderr %s", code, stderr)
	}
	if waited := time.Since(start); waited < 150*time.Millisecond {
		t.Errorf("gave up after %s, before KK_LOCK_WAIT's 150ms", waited)
	}
	for _, want := range []string{"kk: the knowledge base is locked by pid", "kk curate-persist (test holder)", "lock file:", "waited 150ms"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr %q lacks %q", stderr, want)
		}
	}
	code, _, stderr = runWith(t, env, "body", "--json", "node", "write", "practice", "x", "--summary", "s")
	var got struct {
		SchemaVersion int `json:"schema_version"`
		Error         struct {
			Code     string `json:"code"`
			Message  string `json:"message"`
			ExitCode int    `json:"exit_code"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(stderr), &got); err != nil || code != 1 || got.Error.Code != "LOCKED" || got.Error.ExitCode != 1 || got.SchemaVersion != JSONSchemaVersion {
		t.Fatalf("--json error: code %d, %+v, %v, stderr %s", code, got, err, stderr)
	}
	for _, bad := range []string{"soon", "-1s", "0"} {
		env["KK_LOCK_WAIT"] = bad
		code, _, stderr = runWith(t, env, "body", "node", "write", "practice", "x", "--summary", "s")
		if code != ExitUsage || !strings.Contains(stderr, "KK_LOCK_WAIT=") {
			t.Errorf("KK_LOCK_WAIT=%s: exit %d, stderr %q; want a usage error naming it", bad, code, stderr)
		}
	}
}

func TestExitCodes(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args []string
		code int
		kind string
	}{
		{[]string{"--json", "frobnicate"}, ExitUsage, "USAGE_ERROR"},
		{[]string{"--json", "node", "write"}, ExitUsage, "USAGE_ERROR"},
		{[]string{"--json", "index", "rebuild"}, ExitFailure, "NOT_FOUND"},
	}
	for _, c := range cases {
		code, stdout, stderr := run(t, dir, "", c.args...)
		var got struct {
			Error struct {
				Code     string `json:"code"`
				ExitCode int    `json:"exit_code"`
			} `json:"error"`
		}
		if code != c.code || json.Unmarshal([]byte(stderr), &got) != nil || got.Error.Code != c.kind || got.Error.ExitCode != c.code || stdout != "" {
			t.Errorf("%v: exit %d stdout %q stderr %q", c.args, code, stdout, stderr)
		}
	}
	if code, out, _ := run(t, dir, "", "--help"); code != 0 || !strings.Contains(out, "Exit status:") {
		t.Errorf("--help: exit %d, output lacks the exit status section", code)
	}
}

// The one JSON printer stamps schema_version as the first key of every
// result object, and refuses a result that carries its own.
func TestStampedJSON(t *testing.T) {
	for _, c := range []struct {
		in   any
		want string
	}{
		{map[string]any{"b": 1, "a": "<x>"}, `{"schema_version":1,"a":"<x>","b":1}`},
		{struct {
			Z int `json:"z"`
			A int `json:"a"`
		}{1, 2}, `{"schema_version":1,"z":1,"a":2}`},
		{map[string]any{}, `{"schema_version":1}`},
		{[]int{1, 2}, `[1,2]`},
	} {
		got, err := stamped(c.in)
		if err != nil || string(got) != c.want {
			t.Errorf("stamped(%v) = %s, %v; want %s", c.in, got, err, c.want)
		}
	}
	if _, err := stamped(map[string]any{"schema_version": 2}); err == nil {
		t.Error("a result with its own schema_version was stamped again")
	}
}

// Cobra's own errors exit 2 whatever their text; an error a command
// returns exits 1 even when its text reads like cobra's.
func TestUsageErrorsByProvenance(t *testing.T) {
	dir := t.TempDir()
	if code, _, stderr := run(t, dir, "", "init"); code != 0 {
		t.Fatalf("init: %d %s", code, stderr)
	}
	for _, c := range []struct {
		args []string
		code int
	}{
		{[]string{"node", "show"}, ExitUsage},                             // wrong number of arguments
		{[]string{"node", "list", "--frob"}, ExitUsage},                   // unknown flag
		{[]string{"audit", "--limit", "x"}, ExitUsage},                    // a flag's invalid argument
		{[]string{"nodez"}, ExitUsage},                                    // unknown command
		{[]string{"node", "show", "requires exactly 1 arg"}, ExitFailure}, // not found, in cobra's words
		{[]string{"read", "--path", "invalid argument.md"}, ExitFailure},
	} {
		code, _, stderr := run(t, dir, "", c.args...)
		if code != c.code {
			t.Errorf("%v: exit %d, want %d (stderr %q)", c.args, code, c.code, stderr)
		}
	}
}
