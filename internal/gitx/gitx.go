// Package gitx runs the git executable for kk.
package gitx

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// ErrNoGit means the git executable is not on PATH.
var ErrNoGit = errors.New("git is not installed or not on PATH")

// ErrKilled means a git command was ended by a signal kk did not send
// (its context was still alive). A signal sent to kk's process group
// (systemd's stop, kill -- -PGID) reaches a git command forked at that
// instant, before it is in a process group of its own; such a command
// changed nothing git's locks did not roll back, and can run again.
var ErrKilled = errors.New("ended by a signal kk did not send")

// gitError is the error of a git command that failed with msg: ErrKilled
// when a signal from outside ended it; matching the errno git reports
// when the machine could not take its writes (see machineErrno).
func gitError(ctx context.Context, args []string, msg string, err error) error {
	if ctx.Err() == nil && signalled(err) {
		return fmt.Errorf("git %s: %s (%w)", strings.Join(args, " "), msg, ErrKilled)
	}
	return withErrno(fmt.Sprintf("git %s: %s", strings.Join(args, " "), msg))
}

// machineErrors are the failures of the machine, not of the command,
// that git reports in strerror's words (git runs with LC_ALL=C): the
// disk full, the user's disk quota spent, the file-size limit reached, a
// read-only file system, a file of the repository kk's user may not
// write. A git error that reports one matches its errno (errors.Is), as
// kk's own writes do, so that a caller can tell them from a failure of
// its request (kk serve holds the job until the writes can land).
var machineErrors = []struct {
	text  string
	errno syscall.Errno
}{
	{"No space left on device", syscall.ENOSPC},
	{"Out of diskspace", syscall.ENOSPC}, // git's hashfile, on a write of 0 bytes
	{"Disk quota exceeded", syscall.EDQUOT},
	{"Read-only file system", syscall.EROFS},
	{"File too large", syscall.EFBIG}, // past the file-size limit (ulimit -f)
	// The repository's files not writable by kk's user (.git or its
	// objects made read-only, or owned by another user).
	{"insufficient permission for adding an object", syscall.EACCES},
	{"Permission denied", syscall.EACCES},
}

// machineErrno returns the errno of the machine's failure msg reports
// (machineErrors), 0 when it reports none.
func machineErrno(msg string) syscall.Errno {
	for _, m := range machineErrors {
		if strings.Contains(msg, m.text) {
			return m.errno
		}
	}
	return 0
}

// machineError is a git error reporting a failure of the machine: its
// message, matching errno.
type machineError struct {
	msg   string
	errno syscall.Errno
}

func (e *machineError) Error() string { return e.msg }
func (e *machineError) Unwrap() error { return e.errno }

// withErrno is msg as an error, matching the errno of the machine's
// failure it reports, if any.
func withErrno(msg string) error {
	if n := machineErrno(msg); n != 0 {
		return &machineError{msg: msg, errno: n}
	}
	return errors.New(msg)
}

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

// RunWith is Run with extra environment variables (NAME=value, which
// override the process's own) and, when not nil, standard input.
func RunWith(ctx context.Context, dir string, env []string, stdin []byte, args ...string) ([]byte, error) {
	return runInput(ctx, dir, env, stdin, false, args)
}

func run(ctx context.Context, dir string, env, args []string) ([]byte, error) {
	return runInput(ctx, dir, env, nil, false, args)
}

// runInput is run with standard input (when not nil); dying makes git die
// with kk (SIGTERM when kk's process ends, where the system can say so):
// a rebase is never left running behind a killed kk, whose next start
// aborts what it left.
func runInput(ctx context.Context, dir string, env []string, stdin []byte, dying bool, args []string) ([]byte, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, ErrNoGit
	}
	full := append([]string{"-c", "core.quotepath=off"}, args...)
	defer begin(ctx, args)()
	var out []byte
	err := waitingForLocks(ctx, func() error {
		cmd := exec.CommandContext(ctx, "git", full...)
		cmd.Dir = dir
		ownGroup(cmd)
		if dying {
			dieWithKK(cmd)
		}
		// Stopped by SIGTERM, on which git removes the lock files it
		// holds, with what it started (terminate); SIGKILL only if it
		// does not end.
		cmd.Cancel = func() error { return terminate(cmd) }
		cmd.WaitDelay = 10 * time.Second
		cmd.Env = append(os.Environ(), "LC_ALL=C", "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat")
		cmd.Env = append(cmd.Env, env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		err := cmd.Run()
		out = stdout.Bytes()
		if err != nil {
			msg := strings.TrimSpace(stderr.String())
			if msg == "" {
				msg = err.Error()
			}
			return gitError(ctx, args, msg, err)
		}
		return nil
	})
	return out, err
}

// HookError is the error of a git command stopped (its context ended:
// a deadline, a stop) while one of git's hooks it ran had not ended: the
// command waited for the hook (a push's remote had answered).
type HookError struct {
	Hook string // the hook's path, as git started it, made absolute
	err  error
}

func (e *HookError) Error() string {
	return fmt.Sprintf("%v (stopped while git's %s hook %s was running)", e.err, filepath.Base(e.Hook), e.Hook)
}

func (e *HookError) Unwrap() error { return e.err }

// runTracingHooks is RunWith (without standard input) that, when ctx
// ends the command (a deadline, a stop), tells which of git's hooks it
// was waiting for (a *HookError), by git's own trace of the programs it
// starts (GIT_TRACE2_EVENT, in a temporary file removed at once): a push
// stopped while its pre-push hook ran is the hook's, not the remote's.
func runTracingHooks(ctx context.Context, dir string, env []string, args ...string) ([]byte, error) {
	f, err := os.CreateTemp("", "kk-git-trace-*.json")
	if err != nil {
		// No room for the trace (a full disk): the command runs untraced.
		return RunWith(ctx, dir, env, nil, args...)
	}
	trace := f.Name()
	_ = f.Close()
	defer func() { _ = os.Remove(trace) }()
	out, err := RunWith(ctx, dir, append(slices.Clip(env), "GIT_TRACE2_EVENT="+trace), nil, args...)
	if err != nil && ctx.Err() != nil {
		if hook := unendedHook(trace, dir); hook != "" {
			err = &HookError{Hook: hook, err: err}
		}
	}
	return out, err
}

// unendedHook returns the path of the first hook git's trace2 events in
// file report started and not ended, made absolute from dir; "" when
// none.
func unendedHook(file, dir string) string {
	data, err := os.ReadFile(file)
	if err != nil {
		return ""
	}
	type event struct {
		Event      string   `json:"event"`
		SID        string   `json:"sid"`
		ChildID    int      `json:"child_id"`
		ChildClass string   `json:"child_class"`
		Argv       []string `json:"argv"`
	}
	var started []string
	hooks := map[string]string{}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var e event
		if json.Unmarshal(line, &e) != nil {
			continue
		}
		key := e.SID + "/" + strconv.Itoa(e.ChildID)
		switch {
		case e.Event == "child_start" && e.ChildClass == "hook" && len(e.Argv) > 0:
			started = append(started, key)
			hooks[key] = e.Argv[0]
		case e.Event == "child_exit":
			delete(hooks, key)
		}
	}
	for _, key := range started {
		if hook, ok := hooks[key]; ok {
			if !filepath.IsAbs(hook) {
				hook = filepath.Join(dir, hook)
			}
			return hook
		}
	}
	return ""
}

// lockWait is how long kk waits for a lock file another git process holds
// (index.lock, a branch's lock) before giving up. A person's git status,
// or an editor's, takes the index lock for a moment; a server committing
// many times a second meets it, and must wait for it, not fail the job.
const lockWait = 10 * time.Second

// lockHeld reports whether a git error is another process's lock file:
// "Unable to create '<path>.lock': File exists.", from the index and from
// refs alike.
func lockHeld(err error) bool {
	return err != nil && strings.Contains(err.Error(), ".lock': File exists")
}

// waitingForLocks runs try, and runs it again while it fails on a lock
// file another git process holds, for up to lockWait. Git takes its locks
// before it changes anything, so a command refused for one changed
// nothing and can run again.
func waitingForLocks(ctx context.Context, try func() error) error {
	deadline := time.Now().Add(lockWait)
	for delay := 2 * time.Millisecond; ; delay = min(2*delay, 100*time.Millisecond) {
		err := try()
		if !lockHeld(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(delay):
		}
	}
}

// InWorkTree reports whether dir is inside a git work tree.
func InWorkTree(ctx context.Context, dir string) bool {
	out, err := Run(ctx, dir, "rev-parse", "--is-inside-work-tree")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// InGitDir reports whether dir is a git repository's own folder or below
// it: a bare repository, or a work tree's .git.
func InGitDir(ctx context.Context, dir string) bool {
	out, err := Run(ctx, dir, "rev-parse", "--is-inside-git-dir")
	return err == nil && strings.TrimSpace(string(out)) == "true"
}

// Add stages paths (relative to dir or absolute) in dir's repository.
// A path through a symbolic link to a folder of the work tree (nodes/
// linked to docs/kb, as a monorepo shares its notes) is staged at the
// place the link leads to: git refuses a path "beyond a symbolic link".
func Add(ctx context.Context, dir string, paths []string) error {
	if len(paths) == 0 {
		return nil
	}
	args := []string{"add", "--"}
	for _, p := range paths {
		args = append(args, realPath(dir, p))
	}
	_, err := Run(ctx, dir, args...)
	return err
}

// realPath is p (relative to dir or absolute) with the symbolic links of
// the folders on its way resolved, relative to dir resolved so too. The
// file itself is not resolved (git stages a link as a link), nor is a
// part of the path that does not exist (a removed folder): the nearest
// folder that does is. p is returned as it is when it cannot be resolved
// or leads out of dir.
func realPath(dir, p string) string {
	abs := p
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(dir, p)
	}
	realDir, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return p
	}
	parent, rest := filepath.Dir(abs), filepath.Base(abs)
	for {
		if real, err := filepath.EvalSymlinks(parent); err == nil {
			rel, err := filepath.Rel(realDir, filepath.Join(real, rest))
			if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				return p
			}
			return rel
		}
		up := filepath.Dir(parent)
		if up == parent {
			return p
		}
		parent, rest = up, filepath.Join(filepath.Base(parent), rest)
	}
}

// Hidden is a tracked file git is told to pass over (git update-index
// --skip-worktree or --assume-unchanged) whose work tree content differs
// from git's index: git status, git add -A and git commit skip the
// change, so the commits keep the old content.
type Hidden struct {
	Path string // relative to the folder asked about
	Flag string // "skip-worktree" or "assume-unchanged"
}

// HiddenChanges lists the files under dir that git passes over although
// they changed (Hidden). A file flagged skip-worktree that is not in the
// work tree (the files a sparse checkout leaves out) is not listed, nor is
// one whose content is git's. Nil outside git or when git cannot say.
func HiddenChanges(ctx context.Context, dir string) []Hidden {
	out, err := Read(ctx, dir, "ls-files", "-v", "-s", "-z", "--", ".")
	if err != nil {
		return nil
	}
	var flagged []Hidden
	var sums []string
	for _, e := range strings.Split(string(out), "\x00") {
		meta, p, ok := strings.Cut(e, "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 4 || f[3] != "0" || !strings.HasPrefix(f[1], "100") {
			continue // a conflict stage, a submodule or a link
		}
		flag := ""
		switch tag := f[0]; {
		case tag == "S":
			flag = "skip-worktree"
		case tag != strings.ToUpper(tag):
			flag = "assume-unchanged"
		default:
			continue
		}
		if fi, err := os.Lstat(filepath.Join(dir, filepath.FromSlash(p))); err != nil || !fi.Mode().IsRegular() {
			continue
		}
		flagged = append(flagged, Hidden{Path: p, Flag: flag})
		sums = append(sums, f[2])
	}
	if len(flagged) == 0 {
		return nil
	}
	args := []string{"hash-object", "--"}
	for _, h := range flagged {
		args = append(args, h.Path)
	}
	out, err = Read(ctx, dir, args...)
	if err != nil {
		return nil
	}
	now := strings.Fields(string(out))
	if len(now) != len(flagged) {
		return nil
	}
	var changed []Hidden
	for i, h := range flagged {
		if now[i] != sums[i] {
			changed = append(changed, h)
		}
	}
	return changed
}
