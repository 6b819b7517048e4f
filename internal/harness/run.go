package harness

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
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/atomicfile"
)

// DefaultWaitDelay is how long Run waits for a child's output after the
// child was killed: a grandchild (the node process behind most harness
// CLIs) may still hold its stdout open.
const DefaultWaitDelay = 2 * time.Second

// stderrTail is how much of a program's output an error carries.
const stderrTail = 2000

// ChildEnv returns env with the recursion guards set (RecursionEnv=1, so
// a harness kk starts never re-enters kk's hooks, and
// KenkeepRecursionEnv=1, so it never enters kenkeep's) and without the
// variables named in drop (Claude Code refuses to start under a
// CLAUDECODE inherited from the session kk itself runs in).
func ChildEnv(env []string, drop ...string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if name == RecursionEnv || name == KenkeepRecursionEnv || slices.Contains(drop, name) {
			continue
		}
		out = append(out, kv)
	}
	return append(out, KenkeepRecursionEnv+"=1", RecursionEnv+"=1")
}

// Child is one run of a program kk starts (a headless harness run, an
// export), as Run runs it.
type Child struct {
	// Name is how error messages name the program ("claude", "Cursor
	// agent").
	Name string
	// Path is the executable; "" looks Name up on PATH.
	Path  string
	Args  []string
	Stdin io.Reader // nil: no input
	// Env is the child's environment; nil means ChildEnv(os.Environ()).
	Env []string
	// Timeout bounds the run (0: only ctx does).
	Timeout time.Duration
	// LogFile, when set, gets a copy of the child's stdout: appended to,
	// or emptied first when TruncateLog is set.
	LogFile     string
	TruncateLog bool
	// TimeoutNamesLog makes a timeout's message point at LogFile (see
	// LogHint).
	TimeoutNamesLog bool
	// NoStderr is what a failure's message says when the child printed
	// nothing on stderr; "" says nothing.
	NoStderr string
	// Explain, when set, finds why a run failed in its stdout (a harness
	// that prints its errors as JSON there); "" falls back to stderr.
	Explain func(stdout []byte) string
	// InstallHint, when set, is how a missing program is installed; the
	// message of a program not on PATH ends with it.
	InstallHint string
	// NotReadyExits are the exit codes by which the program says it
	// cannot run here yet (Gemini CLI's 55: the folder is not trusted),
	// with what the user can do about it. Such a run's error is
	// ErrNotReady.
	NotReadyExits map[int]string
}

// ErrNotReady marks a run that could not happen because of the machine,
// not the work: the program is not installed, or refuses the folder. The
// proposal drain leaves its logs pending on such an error, for a later
// run, instead of failing them.
var ErrNotReady = errors.New("the harness cannot run here")

// notReady is an error that is ErrNotReady.
type notReady struct{ error }

func (notReady) Is(target error) bool { return target == ErrNotReady }

// NotReady returns err marked as ErrNotReady (its message unchanged), for
// an adapter that finds its program itself.
func NotReady(err error) error { return notReady{err} }

// Run runs c and returns its stdout. A program not on PATH, a run past
// c.Timeout, a run stopped by ctx, and a non-zero exit (with the end of
// the child's stderr) are errors naming c.Name.
func Run(ctx context.Context, c Child) ([]byte, error) {
	if c.Path == "" {
		p, err := exec.LookPath(c.Name)
		if err != nil {
			if c.InstallHint != "" {
				return nil, notReady{fmt.Errorf("%s is not on PATH; %s", c.Name, c.InstallHint)}
			}
			return nil, notReady{fmt.Errorf("%s is not on PATH: %w", c.Name, err)}
		}
		c.Path = p
	}
	if c.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, c.Path, c.Args...)
	cmd.Env = c.Env
	if cmd.Env == nil {
		cmd.Env = ChildEnv(os.Environ())
	}
	cmd.Stdin = c.Stdin
	cmd.WaitDelay = DefaultWaitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if c.LogFile != "" {
		f, err := openLog(c.LogFile, c.TruncateLog)
		if err != nil {
			return nil, fmt.Errorf("opening the log %s: %w", c.LogFile, err)
		}
		defer func() { _ = f.Close() }() // the run's log: a failure to keep it does not fail the run
		cmd.Stdout = io.MultiWriter(&stdout, f)
	}
	err := cmd.Run()
	switch {
	case c.Timeout > 0 && errors.Is(ctx.Err(), context.DeadlineExceeded):
		msg := fmt.Sprintf("%s timed out after %s", c.Name, c.Timeout)
		if c.TimeoutNamesLog {
			msg += LogHint(c.LogFile)
		}
		return nil, errors.New(msg)
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", c.Name, ctx.Err())
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			if why, ok := c.NotReadyExits[exit.ExitCode()]; ok {
				return nil, notReady{fmt.Errorf("%s cannot run here (exit code %d): %s", c.Name, exit.ExitCode(), why)}
			}
			return nil, fmt.Errorf("%s failed (exit code %d)%s", c.Name, exit.ExitCode(), c.reason(stdout.Bytes(), stderr.String()))
		}
		return nil, fmt.Errorf("running %s: %w", c.Name, err)
	}
	return stdout.Bytes(), nil
}

// reason is why a run failed, as ": <why>", or "".
func (c Child) reason(stdout []byte, stderr string) string {
	if c.Explain != nil {
		if msg := c.Explain(stdout); msg != "" {
			return ": " + msg
		}
	}
	if s := OutputTail(stderr); s != "" {
		return s
	}
	if c.NoStderr != "" {
		return ": " + c.NoStderr
	}
	return ""
}

// OutputTail is the end of what a program printed, trimmed, as ": <text>"
// for the end of an error message, or "" when it printed nothing.
func OutputTail(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	return ": " + Tail(s, stderrTail)
}

// openLog opens the log file at p for appending, emptied first when
// truncate is set, creating its folder. A log that is not a regular file
// (a named pipe, whose open for writing waits for a reader) is refused at
// once (atomicfile.OpenAppend).
func openLog(p string, truncate bool) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := atomicfile.OpenAppend(p, 0o644)
	if err != nil {
		return nil, err
	}
	if truncate {
		if err := f.Truncate(0); err != nil {
			_ = f.Close()
			return nil, err
		}
	}
	return f, nil
}

// Tail returns about the last n bytes of s, starting on a character,
// marked with "…" when anything was cut.
func Tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

// LogHint points at the file a run's output was copied to, as
// " (output in <file>)", or "" when there is none.
func LogHint(logFile string) string {
	if logFile == "" {
		return ""
	}
	return " (output in " + logFile + ")"
}

// PromptReader puts prompt first on stdin, followed by input (when there
// is any) after a blank line.
func PromptReader(prompt string, input io.Reader) io.Reader {
	if input == nil {
		return strings.NewReader(prompt)
	}
	return io.MultiReader(strings.NewReader(prompt+"\n\n"), input)
}

// ReadInput reads the whole of a headless run's input (nil is none).
func ReadInput(r io.Reader) ([]byte, error) {
	if r == nil {
		return nil, nil
	}
	return io.ReadAll(r)
}

// JoinInput is prompt followed, when there is input, by a blank line and
// the input: one stdin for harnesses that read the prompt there.
func JoinInput(prompt string, input []byte) []byte {
	out := []byte(prompt)
	if len(input) > 0 {
		out = append(append(out, "\n\n"...), input...)
	}
	return out
}

// VersionError is a `<program> --version` that failed or did not answer.
type VersionError struct {
	Program string        // the program's file name
	Timeout time.Duration // set when it did not answer in time
	Err     error         // what running it returned
}

func (e *VersionError) Error() string {
	if e.Timeout > 0 {
		return fmt.Sprintf("%s --version did not answer within %s", e.Program, e.Timeout)
	}
	return fmt.Sprintf("%s --version: %v", e.Program, e.Err)
}

func (e *VersionError) Unwrap() error { return e.Err }

// Version runs `<path> --version` for doctor, in env (nil means
// ChildEnv(os.Environ())), and returns the first line of what it printed.
// A run past timeout, or one that fails, is a *VersionError.
func Version(ctx context.Context, path string, env []string, timeout, waitDelay time.Duration) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, "--version")
	cmd.Env = env
	if env == nil {
		cmd.Env = ChildEnv(os.Environ())
	}
	cmd.WaitDelay = waitDelay
	if waitDelay == 0 {
		cmd.WaitDelay = DefaultWaitDelay
	}
	out, err := cmd.Output()
	if ctx.Err() != nil {
		if err == nil {
			err = ctx.Err()
		}
		return "", &VersionError{Program: filepath.Base(path), Timeout: timeout, Err: err}
	}
	if err != nil {
		return "", &VersionError{Program: filepath.Base(path), Err: err}
	}
	first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return first, nil
}

// LookPath finds the first of names in the folders of the PATH that
// getenv returns (so that an adapter's tests can give their own). A name
// with a path separator is checked as it is.
func LookPath(getenv func(string) string, names ...string) (string, error) {
	for _, name := range names {
		if strings.ContainsAny(name, `/\`) {
			if executable(name) {
				return name, nil
			}
			continue
		}
		for _, dir := range filepath.SplitList(getenv("PATH")) {
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

// exeNames are the file names a program name stands for.
func exeNames(name string) []string {
	if runtime.GOOS == "windows" && filepath.Ext(name) == "" {
		return []string{name + ".exe", name + ".cmd", name + ".bat", name}
	}
	return []string{name}
}

// executable reports whether p is a file the user may run.
func executable(p string) bool {
	fi, err := os.Stat(p)
	if err != nil || fi.IsDir() {
		return false
	}
	return runtime.GOOS == "windows" || fi.Mode().Perm()&0o111 != 0
}

// ResolveCommand finds the program a hook command names: a bare name on
// the process's PATH, else a file (a relative path taken from root, where
// the hooks run it) that is executable.
func ResolveCommand(root, command string) (string, error) {
	if !strings.ContainsAny(command, `/\`) {
		return exec.LookPath(command)
	}
	p := command
	if !filepath.IsAbs(p) {
		p = filepath.Join(root, filepath.FromSlash(p))
	}
	fi, err := os.Stat(p)
	if err != nil {
		return "", err
	}
	if fi.IsDir() || fi.Mode().Perm()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable file", p)
	}
	return p, nil
}
