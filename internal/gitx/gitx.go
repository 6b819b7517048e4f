// Package gitx runs the git executable for kk.
package gitx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// ErrNoGit means the git executable is not on PATH.
var ErrNoGit = errors.New("git is not installed or not on PATH")

// Run runs git in dir and returns its standard output. Output is never
// localised or paged and git never prompts.
func Run(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return run(ctx, dir, nil, args)
}

// Read runs a git command that only reads the repository. It is Run with
// git's optional locks turned off, so that it never takes the index lock
// (git status would refresh the index) and never races a concurrent writer.
func Read(ctx context.Context, dir string, args ...string) ([]byte, error) {
	return run(ctx, dir, []string{"GIT_OPTIONAL_LOCKS=0"}, args)
}

func run(ctx context.Context, dir string, env, args []string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	full := append([]string{"-c", "core.quotepath=off"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
	cmd.Env = append(cmd.Env, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		msg := strings.TrimSpace(stderr.String())
		if msg == "" {
			msg = err.Error()
		}
		return stdout.Bytes(), fmt.Errorf("git %s: %s", strings.Join(args, " "), msg)
	}
	return stdout.Bytes(), nil
}

// InWorkTree reports whether dir is inside a git work tree.
func InWorkTree(ctx context.Context, dir string) bool {
	out, err := Run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// Add stages paths (relative to dir or absolute) in dir's repository.
func Add(ctx context.Context, dir string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	_, err := Run(ctx, dir, append([]string{"add", "--"}, paths...)...)
	return err
}
