package harness_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/harness/harnesstest"
)

func TestChildEnv(t *testing.T) {
	env := []string{"PATH=/bin", "KK_INTERNAL=0", "CLAUDECODE=1", "KENKEEP_BUILDER_INTERNAL=0", "CLAUDECODE_X=keep", "HOME=/h"}
	got := harness.ChildEnv(env, "CLAUDECODE")
	want := []string{"PATH=/bin", "CLAUDECODE_X=keep", "HOME=/h", "KENKEEP_BUILDER_INTERNAL=1", "KK_INTERNAL=1"}
	if !slices.Equal(got, want) {
		t.Errorf("ChildEnv = %q, want %q", got, want)
	}
	if got := harness.ChildEnv(env); !slices.Contains(got, "CLAUDECODE=1") || got[len(got)-1] != "KK_INTERNAL=1" {
		t.Errorf("without drop: %q", got)
	}
	if len(env) != 6 || env[1] != "KK_INTERNAL=0" {
		t.Errorf("the input was changed: %q", env)
	}
}

func TestRun(t *testing.T) {
	dir := harnesstest.InstallFake(t, "fake-harness", `#!/bin/sh
printf '%s\n' "$@" > "$(dirname "$0")/args"
printf '%s' "$KK_INTERNAL" > "$(dirname "$0")/guard"
printf '%s' "$DROPPED" > "$(dirname "$0")/dropped"
cat
echo " from the fake"
`)
	t.Setenv("DROPPED", "yes")
	log := filepath.Join(t.TempDir(), "logs", "run.log")
	ctx := context.Background()
	c := harness.Child{
		Name: "fake-harness", Args: []string{"-p", "a b"}, Stdin: strings.NewReader("input"),
		Env: harness.ChildEnv(os.Environ(), "DROPPED"), LogFile: log,
	}
	out, err := harness.Run(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != "input from the fake\n" {
		t.Errorf("stdout %q", out)
	}
	if got := string(harnesstest.ReadFile(t, filepath.Join(dir, "args"))); got != "-p\na b\n" {
		t.Errorf("args %q", got)
	}
	if got := string(harnesstest.ReadFile(t, filepath.Join(dir, "guard"))); got != "1" {
		t.Errorf("the child saw KK_INTERNAL=%q", got)
	}
	if got := string(harnesstest.ReadFile(t, filepath.Join(dir, "dropped"))); got != "" {
		t.Errorf("the child saw DROPPED=%q", got)
	}

	// phase: the log is appended to, or emptied first with TruncateLog.
	c.Stdin = strings.NewReader("again")
	if _, err := harness.Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := string(harnesstest.ReadFile(t, log)); got != "input from the fake\nagain from the fake\n" {
		t.Errorf("appended log %q", got)
	}
	c.Stdin, c.TruncateLog = strings.NewReader("last"), true
	if _, err := harness.Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := string(harnesstest.ReadFile(t, log)); got != "last from the fake\n" {
		t.Errorf("truncated log %q", got)
	}

	// phase: the environment defaults to the process's, guarded.
	c.Env, c.LogFile = nil, ""
	if _, err := harness.Run(ctx, c); err != nil {
		t.Fatal(err)
	}
	if got := string(harnesstest.ReadFile(t, filepath.Join(dir, "dropped"))); got != "yes" {
		t.Errorf("default environment: DROPPED=%q", got)
	}
}

func TestRunFailures(t *testing.T) {
	harnesstest.InstallFake(t, "fake-harness", `#!/bin/sh
case "$1" in
exit) echo '{"error":"from stdout"}'; echo 'the reason' >&2; exit 3 ;;
quiet) exit 4 ;;
slow) exec sleep 10 ;;
esac
`)
	ctx := context.Background()
	log := filepath.Join(t.TempDir(), "run.log")
	explain := func(stdout []byte) string {
		if strings.Contains(string(stdout), "from stdout") {
			return "explained"
		}
		return ""
	}
	for _, c := range []struct {
		child harness.Child
		want  string
	}{
		{harness.Child{Args: []string{"exit"}}, "fake-harness failed (exit code 3): the reason"},
		{harness.Child{Args: []string{"exit"}, Explain: explain}, "fake-harness failed (exit code 3): explained"},
		{harness.Child{Args: []string{"quiet"}, Explain: explain}, "fake-harness failed (exit code 4)"},
		{harness.Child{Args: []string{"quiet"}, NoStderr: "(no output on stderr)"}, "fake-harness failed (exit code 4): (no output on stderr)"},
		{harness.Child{Args: []string{"slow"}, Timeout: 200 * time.Millisecond}, "fake-harness timed out after 200ms"},
		{harness.Child{Args: []string{"slow"}, Timeout: 200 * time.Millisecond, LogFile: log, TimeoutNamesLog: true}, "fake-harness timed out after 200ms (output in " + log + ")"},
		{harness.Child{Name: "no-such-harness"}, `no-such-harness is not on PATH: exec: "no-such-harness"`},
		{harness.Child{Name: "no-such-harness", InstallHint: "install it with care"}, "no-such-harness is not on PATH; install it with care"},
		{harness.Child{Args: []string{"quiet"}, LogFile: filepath.Join(log, "under-a-file")}, "opening the log " + filepath.Join(log, "under-a-file")},
		{harness.Child{Args: []string{"quiet"}, NotReadyExits: map[int]string{4: "trust the folder"}}, "fake-harness cannot run here (exit code 4): trust the folder"},
	} {
		if c.child.Name == "" {
			c.child.Name = "fake-harness"
		}
		if err := os.WriteFile(log, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := harness.Run(ctx, c.child)
		if err == nil || out != nil {
			t.Errorf("%s: no error (%q)", c.want, out)
			continue
		}
		// A missing program, or an exit saying the folder will not do,
		// is not the work's fault.
		notReady := c.child.Name == "no-such-harness" || c.child.NotReadyExits != nil
		if errors.Is(err, harness.ErrNotReady) != notReady {
			t.Errorf("%s: errors.Is(ErrNotReady) = %v", c.want, !notReady)
		}
		if c.child.Name == "no-such-harness" || strings.HasPrefix(c.want, "opening") {
			if !strings.HasPrefix(err.Error(), c.want) {
				t.Errorf("error %q, want it to start with %q", err, c.want)
			}
		} else if err.Error() != c.want {
			t.Errorf("error %q, want %q", err, c.want)
		}
	}

	// phase: a run stopped by its context says so.
	cctx, cancel := context.WithCancel(ctx)
	go func() { time.Sleep(200 * time.Millisecond); cancel() }()
	_, err := harness.Run(cctx, harness.Child{Name: "fake-harness", Args: []string{"slow"}})
	if !errors.Is(err, context.Canceled) || err.Error() != "fake-harness: context canceled" {
		t.Errorf("canceled run: %v", err)
	}
}

func TestTail(t *testing.T) {
	if got := harness.Tail("short", 10); got != "short" {
		t.Errorf("short text: %q", got)
	}
	if got := harness.Tail("0123456789", 4); got != "…6789" {
		t.Errorf("cut: %q", got)
	}
	got := harness.Tail("aé😀é", 5) // the cut falls inside 😀: it moves to the next character
	if got != "…é" || !utf8.ValidString(got) {
		t.Errorf("cut inside a character: %q", got)
	}
	if got := harness.OutputTail(" \n\t"); got != "" {
		t.Errorf("nothing printed: %q", got)
	}
	if got := harness.OutputTail("\n  Error: no\n"); got != ": Error: no" {
		t.Errorf("output tail %q", got)
	}
	if got := harness.OutputTail(strings.Repeat("x", 3000)); got != ": …"+strings.Repeat("x", 2000) {
		t.Errorf("long output tail has %d bytes", len(got))
	}
	if harness.LogHint("") != "" || harness.LogHint("/l/x.log") != " (output in /l/x.log)" {
		t.Error("LogHint")
	}
}

func TestPromptInput(t *testing.T) {
	read := func(r interface{ Read([]byte) (int, error) }) string {
		b, _ := harness.ReadInput(r)
		return string(b)
	}
	if got := read(harness.PromptReader("p", nil)); got != "p" {
		t.Errorf("prompt alone: %q", got)
	}
	if got := read(harness.PromptReader("p", strings.NewReader("in"))); got != "p\n\nin" {
		t.Errorf("prompt and input: %q", got)
	}
	if b, err := harness.ReadInput(nil); b != nil || err != nil {
		t.Errorf("no input: %q %v", b, err)
	}
	if got := string(harness.JoinInput("p", nil)); got != "p" {
		t.Errorf("JoinInput without input: %q", got)
	}
	if got := string(harness.JoinInput("p", []byte("in"))); got != "p\n\nin" {
		t.Errorf("JoinInput: %q", got)
	}
}

func TestVersion(t *testing.T) {
	ctx := context.Background()
	ok := filepath.Join(harnesstest.Sh(t, "tool", "printf '  tool 1.2.3 \\nsecond line\\n'\n"), "tool")
	got, err := harness.Version(ctx, ok, nil, 5*time.Second, 0)
	if err != nil || got != "tool 1.2.3 " {
		t.Errorf("version %q %v", got, err)
	}
	failing := filepath.Join(harnesstest.Sh(t, "tool", "exit 2\n"), "tool")
	_, err = harness.Version(ctx, failing, nil, 5*time.Second, 0)
	var ve *harness.VersionError
	if !errors.As(err, &ve) || ve.Timeout != 0 || err.Error() != "tool --version: exit status 2" || errors.Unwrap(err).Error() != "exit status 2" {
		t.Errorf("failing: %v", err)
	}
	slow := filepath.Join(harnesstest.Sh(t, "tool", "exec sleep 5\n"), "tool")
	_, err = harness.Version(ctx, slow, nil, 200*time.Millisecond, 100*time.Millisecond)
	if !errors.As(err, &ve) || ve.Timeout == 0 || err.Error() != "tool --version did not answer within 200ms" {
		t.Errorf("slow: %v", err)
	}
}

func TestLookPath(t *testing.T) {
	a := harnesstest.Sh(t, "second", "")
	b := harnesstest.Sh(t, "first", "")
	if err := os.WriteFile(filepath.Join(b, "plain"), nil, 0o644); err != nil {
		t.Fatal(err)
	} // not executable
	getenv := harnesstest.Env(map[string]string{"PATH": strings.Join([]string{"", a, b}, string(os.PathListSeparator))})
	if p, err := harness.LookPath(getenv, "first", "second"); err != nil || p != filepath.Join(b, "first") {
		t.Errorf("first name: %q %v", p, err)
	}
	if p, err := harness.LookPath(getenv, "missing", "second"); err != nil || p != filepath.Join(a, "second") {
		t.Errorf("second name: %q %v", p, err)
	}
	if _, err := harness.LookPath(getenv, "plain", "nothing"); err == nil || err.Error() != "plain or nothing not found on PATH" {
		t.Errorf("not executable: %v", err)
	}
	if p, err := harness.LookPath(harnesstest.Env(nil), filepath.Join(a, "second")); err != nil || p != filepath.Join(a, "second") {
		t.Errorf("a path: %q %v", p, err)
	}
}

func TestResolveCommand(t *testing.T) {
	root := t.TempDir()
	harnesstest.WriteFile(t, filepath.Join(root, "bin", "kk"), []byte("#!/bin/sh\n"))
	if err := os.Chmod(filepath.Join(root, "bin", "kk"), 0o755); err != nil {
		t.Fatal(err)
	}
	harnesstest.WriteFile(t, filepath.Join(root, "bin", "data"), nil)
	onPath := harnesstest.Sh(t, "kk-on-path", "")
	harnesstest.OnPath(t, onPath)
	for cmd, want := range map[string]string{
		"./bin/kk":                    filepath.Join(root, "bin", "kk"),
		"bin/kk":                      filepath.Join(root, "bin", "kk"),
		filepath.Join(root, "bin/kk"): filepath.Join(root, "bin", "kk"),
		"kk-on-path":                  filepath.Join(onPath, "kk-on-path"),
	} {
		if p, err := harness.ResolveCommand(root, cmd); err != nil || p != want {
			t.Errorf("%s: %q %v", cmd, p, err)
		}
	}
	for _, cmd := range []string{"./bin/data", "./bin", "./bin/none", "no-such-kk"} {
		if p, err := harness.ResolveCommand(root, cmd); err == nil {
			t.Errorf("%s resolved to %s", cmd, p)
		}
	}
}

func TestModelSettings(t *testing.T) {
	s := harness.Spec{ID: "h", Name: "Harness", Model: harness.ModelFlags{
		Name: []string{"--model", "%s"}, Effort: []string{"-c", `effort="%s"`}, Efforts: []string{"low", "high"}}}
	bare := harness.Spec{ID: "b", Name: "Bare", Model: harness.ModelFlags{Name: []string{"-m", "%s"}}}
	for _, c := range []struct {
		spec    harness.Spec
		m       harness.Model
		args    string
		ignored int
	}{
		{s, harness.Model{}, "", 0},
		{s, harness.Model{Name: "sonnet-4"}, "--model sonnet-4", 0},
		{s, harness.Model{Harness: "h", Name: "x", Effort: "high"}, `--model x -c effort="high"`, 0},
		{s, harness.Model{Harness: "other", Name: "x", Effort: "high"}, "", 1},
		{s, harness.Model{Name: "x", Effort: "max"}, "--model x", 1},
		{s, harness.Model{Agent: "plan"}, "", 1},
		{bare, harness.Model{Name: "flash", Effort: "low"}, "-m flash", 1},
	} {
		args, ignored := c.spec.ModelArgs(c.m)
		if strings.Join(args, " ") != c.args || len(ignored) != c.ignored {
			t.Errorf("%s.ModelArgs(%+v) = %q, %q", c.spec.ID, c.m, args, ignored)
		}
	}
	if p := bare.ModelProblems("proposalModel", harness.Model{Name: "flash", Effort: "low"}); len(p) != 1 ||
		p[0] != `proposalModel: Bare has no reasoning-effort flag, so effort "low" is not used` {
		t.Errorf("ModelProblems: %q", p)
	}
	if p := bare.ModelProblems("curatorModel", harness.Model{Harness: "h", Effort: "low"}); p != nil {
		t.Errorf("a setting for another harness is reported: %q", p)
	}
}
