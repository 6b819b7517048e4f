//go:build unix

package hooks

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"

	"golang.org/x/sys/unix"
)

// stdoutClosedEnv names, in the child process of TestHookStdoutClosed,
// the knowledge base its hook call runs in.
const stdoutClosedEnv = "KK_TEST_STDOUT_CLOSED_ROOT"

// A harness that stops reading the hook's standard output (it gave up on
// the hook, or its user interrupted it) leaves a pipe with no reader. The
// hook's answer then cannot be delivered: the hook logs that and still
// exits 0, as every hook does, instead of being killed by SIGPIPE (exit
// status 141, which a harness reports as a failed hook).
func TestHookStdoutClosed(t *testing.T) {
	if root := os.Getenv(stdoutClosedEnv); root != "" {
		stdoutClosedChild(t, root)
		return
	}
	k := newKB(t)
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil { // nobody will read
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHookStdoutClosed$", "-test.count=1")
	cmd.Env = append(os.Environ(), stdoutClosedEnv+"="+k.Root)
	cmd.ExtraFiles = []*os.File{w} // fd 3
	out, err := cmd.CombinedOutput()
	_ = w.Close()
	if err != nil {
		t.Fatalf("the hook's process: %v\n%s", err, out)
	}
	d := diagnostics(t, k)
	if len(d) != 1 || d[0].Phase != "output" || !strings.Contains(d[0].Error, "broken pipe") {
		t.Fatalf("hook error log %+v, want the lost output", d)
	}
}

// stdoutClosedChild runs session-start with the pipe of fd 3 as its
// standard output (fd 1, where the Go runtime turns a write to a broken
// pipe into SIGPIPE's default action), then puts the test's own stdout
// back for the test framework.
func stdoutClosedChild(t *testing.T, root string) {
	saved, err := unix.Dup(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Dup2(3, 1); err != nil {
		t.Fatal(err)
	}
	inv, _, _ := invocation(t, root, "session-start", `{"session_id":"`+sid+`"}`)
	inv.Stdout = os.Stdout
	Run(context.Background(), inv)
	if err := unix.Dup2(saved, 1); err != nil {
		t.Fatal(err)
	}
}
