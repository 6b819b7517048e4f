package hooks

// Real-process tests of what a coding agent meets: `kk hook …` run as the
// harness runs it (a kk child process, the payload on its stdin, in a real
// git repository), in the situations an agent's session brings about.

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

var (
	agentBinOnce sync.Once
	agentBin     string
	agentBinErr  error
)

// agentKK builds kk once for the tests of this file.
func agentKK(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("needs git")
	}
	agentBinOnce.Do(func() {
		dir, err := os.MkdirTemp("", "kk-agents-test-")
		if err != nil {
			agentBinErr = err
			return
		}
		bin := filepath.Join(dir, "kk")
		if out, err := exec.Command("go", "build", "-o", bin, "github.com/kk-project/kk/cmd/kk").CombinedOutput(); err != nil {
			agentBinErr = err
			agentBin = string(out)
			return
		}
		agentBin = bin
	})
	if agentBinErr != nil {
		t.Fatalf("building kk: %v\n%s", agentBinErr, agentBin)
	}
	return agentBin
}

// agentEnv is the environment of the test's processes: no KK_* of the
// test's own, a git identity.
func agentEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "KK_") || strings.HasPrefix(kv, "GIT_") || strings.HasPrefix(kv, "KENKEEP_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
}

// agentRun runs a command in dir and fails the test when it fails.
func agentRun(t *testing.T, dir, stdin string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = agentEnv()
	cmd.Stdin = strings.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// agentRepo is a git repository with kk initialized for Claude Code and
// committed.
func agentRepo(t *testing.T) string {
	t.Helper()
	kk := agentKK(t)
	root := t.TempDir()
	agentRun(t, root, "", "git", "init", "-q", "-b", "main")
	agentRun(t, root, "", kk, "init", "--harnesses", "claude", "--no-git-hooks")
	writeFile(t, filepath.Join(root, "src", "app.go"), "package app\n")
	agentRun(t, root, "", "git", "add", "-A")
	agentRun(t, root, "", "git", "commit", "-qm", "init")
	return root
}

// agentHook runs `kk hook <event> --harness <harness>` in dir with payload
// on stdin, as a harness does, with extra environment variables, and
// returns its stdout and stderr. The hook must exit 0.
func agentHook(t *testing.T, dir, event, harnessID, payload string, env ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(agentKK(t), "hook", event, "--harness", harnessID)
	cmd.Dir = dir
	cmd.Env = append(agentEnv(), env...)
	cmd.Stdin = strings.NewReader(payload)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("kk hook %s: %v\nstdout %s\nstderr %s", event, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}

// TestGraphHintLeavesTheGitIndexAlone: the end-of-turn graph hint looks at
// the work tree with git status, which by default refreshes the index and
// so takes .git/index.lock: a `git commit` or `git add` the agent (or a
// second agent session, or the user) runs at that moment then fails with
// "Unable to create '.git/index.lock': File exists". The hook only reads:
// the index file is left as it was.
func TestGraphHintLeavesTheGitIndexAlone(t *testing.T) {
	root := agentRepo(t)
	payload := `{"session_id":"` + sid + `","cwd":"` + root + `","hook_event_name":"Stop"}`
	agentHook(t, root, "session-start", "claude", payload)
	// A tracked file the session touched without changing it: git status
	// would write the refreshed stat data into the index.
	app := filepath.Join(root, "src", "app.go")
	fi, err := os.Stat(app)
	if err != nil {
		t.Fatal(err)
	}
	later := fi.ModTime().Add(5e9)
	if err := os.Chtimes(app, later, later); err != nil {
		t.Fatal(err)
	}
	index := filepath.Join(root, ".git", "index")
	before, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	out, errOut := agentHook(t, root, "graph-hint", "claude", payload)
	if out != "" || errOut != "" {
		t.Fatalf("graph-hint printed %q, %q", out, errOut)
	}
	after, err := os.ReadFile(index)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Fatal("graph-hint rewrote .git/index: it took the index lock an agent's git command needs")
	}
}
