package cursor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// waitDelay bounds how long a child's output is waited for after the child
// was killed (a grandchild may still hold its stdout).
const waitDelay = 2 * time.Second

// versionTimeout bounds `<binary> --version` in doctor.
var versionTimeout = 5 * time.Second

// childEnv is the environment of every process kk starts: its own, with
// the recursion guard set, so a harness kk runs does not re-enter kk's
// hooks.
func childEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, harness.RecursionEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, harness.RecursionEnv+"=1")
}

// lookPath finds the first of names in the folders of $PATH (as read by
// the adapter, so tests can give their own). A name with a path separator
// is checked as is.
func (a *Adapter) lookPath(names ...string) (string, error) {
	for _, name := range names {
		if strings.ContainsAny(name, `/\`) {
			if executable(name) {
				return name, nil
			}
			continue
		}
		for _, dir := range filepath.SplitList(a.env("PATH")) {
			if dir == "" {
				continue
			}
			for _, n := range exeNames(name) {
				if p := filepath.Join(dir, n); executable(p) {
					return p, nil
				}
			}
		}
	}
	return "", fmt.Errorf("%s not found on PATH", strings.Join(names, " or "))
}

func exeNames(name string) []string {
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		return []string{name + ".exe", name + ".cmd", name + ".bat", name}
	}
	return []string{name}
}

func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

// runChild runs bin with args and stdin, copies its stdout to logFile (when
// set) and returns the stdout. A non-zero exit is an error carrying the
// end of its stderr; so is running past timeout (when positive).
func runChild(ctx context.Context, name, bin string, args []string, stdin []byte, logFile string, timeout time.Duration) ([]byte, error) {
	if timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = childEnv()
	cmd.Stdin = bytes.NewReader(stdin)
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if logFile != "" {
		if err := os.MkdirAll(filepath.Dir(logFile), 0o755); err != nil {
			return nil, fmt.Errorf("log file: %w", err)
		}
		f, err := os.OpenFile(logFile, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, fmt.Errorf("log file: %w", err)
		}
		defer f.Close()
		cmd.Stdout = io.MultiWriter(&stdout, f)
	}
	err := cmd.Run()
	if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) && timeout > 0 {
		return stdout.Bytes(), fmt.Errorf("%s timed out after %s", name, timeout)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return stdout.Bytes(), fmt.Errorf("%s failed (exit code %d)%s", name, exit.ExitCode(), tail(stderr.String()))
	}
	if err != nil {
		return stdout.Bytes(), fmt.Errorf("running %s: %w", name, err)
	}
	return stdout.Bytes(), nil
}

// tail is the last 2000 bytes of a child's stderr, as ": <text>".
func tail(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 2000 {
		s = "…" + s[len(s)-2000:]
	}
	if s == "" {
		return ""
	}
	return ": " + s
}

// version runs `bin --version` and returns its first line.
func version(ctx context.Context, bin string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, versionTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--version")
	cmd.Env = childEnv()
	cmd.WaitDelay = waitDelay
	out, err := cmd.Output()
	if ctx.Err() != nil {
		return "", fmt.Errorf("%s --version did not answer within %s", filepath.Base(bin), versionTimeout)
	}
	if err != nil {
		return "", fmt.Errorf("%s --version: %w", filepath.Base(bin), err)
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return strings.TrimSpace(first), nil
}
