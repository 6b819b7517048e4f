package copilot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// maxArgBytes is the longest prompt passed as a command-line argument.
// Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); longer
// prompts go to Copilot on stdin, which it reads when -p is absent.
const maxArgBytes = 100 << 10

// waitDelay bounds how long a timed-out run may keep its output pipes
// open (node children of the CLI can outlive it).
const waitDelay = 2 * time.Second

// Headless implements harness.Adapter: `copilot -p <prompt>
// --output-format json --no-ask-user --disable-builtin-mcps [--model m]`
// with KK_INTERNAL=1 in the environment, so kk's own hooks stay quiet if
// Copilot runs repository hooks. The input on run.Stdin is appended to the
// prompt after an "--- input ---" line. No tool is pre-approved: the run
// only has to answer. Copilot has no flag that enforces an output schema,
// so run.Schema is not passed on; the prompt carries the contract.
//
// The answer is the last assistant.message of the JSONL event stream;
// builds that print plain text instead are read as plain text.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	model, err := modelFlag(run.Model)
	if err != nil {
		return "", err
	}
	text := run.Prompt
	if run.Stdin != nil {
		in, err := io.ReadAll(run.Stdin)
		if err != nil {
			return "", fmt.Errorf("reading the input for copilot: %w", err)
		}
		if len(bytes.TrimSpace(in)) > 0 {
			text += "\n\n--- input ---\n" + string(in)
		}
	}
	if strings.TrimSpace(text) == "" {
		return "", errors.New("copilot: empty prompt")
	}
	args := []string{"--output-format", "json", "--no-ask-user", "--disable-builtin-mcps"}
	if model != "" {
		args = append(args, "--model", model)
	}
	var stdin io.Reader
	if len(text) <= maxArgBytes {
		args = append([]string{"-p", text}, args...)
	} else {
		stdin = strings.NewReader(text)
	}
	out, err := runBinary(ctx, run, args, stdin)
	if err != nil {
		return "", err
	}
	return answer(out)
}

// modelFlag returns the --model value of a proposalModel setting. A
// setting for another harness is ignored (Copilot's default applies).
func modelFlag(m map[string]any) (string, error) {
	if len(m) == 0 {
		return "", nil
	}
	if h, ok := m["harness"]; ok && h != id {
		return "", nil
	}
	v, ok := m["model"]
	if !ok {
		return "", nil
	}
	s, ok := v.(string)
	if !ok || strings.TrimSpace(s) == "" {
		return "", fmt.Errorf("model setting for copilot: %q must be a non-empty string, got %v", "model", v)
	}
	return s, nil
}

// runBinary runs copilot with args, copying its stdout to run.LogFile,
// and returns the stdout.
func runBinary(ctx context.Context, run harness.HeadlessRun, args []string, stdin io.Reader) ([]byte, error) {
	path, err := exec.LookPath(binary)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH; %s", binary, (&Adapter{}).InstallHint())
	}
	if run.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, run.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = childEnv()
	cmd.Stdin = stdin
	cmd.WaitDelay = waitDelay
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	if run.LogFile != "" {
		f, err := openLog(run.LogFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdout = io.MultiWriter(&stdout, f)
	}
	err = cmd.Run()
	if ctx.Err() != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) && run.Timeout > 0 {
			return nil, fmt.Errorf("%s timed out after %s", binary, run.Timeout)
		}
		return nil, fmt.Errorf("%s: %w", binary, ctx.Err())
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		return nil, fmt.Errorf("%s failed (exit code %d): %s", binary, exitErr.ExitCode(), tail(stderr.String(), 2000))
	}
	if err != nil {
		return nil, fmt.Errorf("running %s: %w", binary, err)
	}
	return stdout.Bytes(), nil
}

// childEnv is this process's environment with the recursion guard set.
func childEnv() []string {
	env := make([]string, 0, len(os.Environ())+1)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, harness.RecursionEnv+"=") {
			env = append(env, kv)
		}
	}
	return append(env, harness.RecursionEnv+"=1")
}

func openLog(p string) (*os.File, error) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, fmt.Errorf("opening the log %s: %w", p, err)
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log %s: %w", p, err)
	}
	return f, nil
}

// tail returns the last n bytes of s, trimmed.
func tail(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) > n {
		s = "…" + s[len(s)-n:]
	}
	if s == "" {
		return "(no output on stderr)"
	}
	return s
}

// answer extracts the final answer from Copilot's stdout: the content of
// the last assistant.message event, or the whole text when the output is
// not an event stream.
func answer(out []byte) (string, error) {
	var last string
	events := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), len(out)+1)
	for sc.Scan() {
		var ev struct {
			Type string          `json:"type"`
			Data json.RawMessage `json:"data"`
		}
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 || line[0] != '{' || json.Unmarshal(line, &ev) != nil || ev.Type == "" {
			continue
		}
		events++
		var d struct {
			Content  json.RawMessage `json:"content"`
			ExitCode *int            `json:"exitCode"`
		}
		json.Unmarshal(ev.Data, &d)
		switch ev.Type {
		case "assistant.message":
			if t := strings.TrimSpace(textOf(d.Content)); t != "" {
				last = t
			}
		case "result":
			if d.ExitCode != nil && *d.ExitCode != 0 {
				return "", fmt.Errorf("%s reported exit code %d", binary, *d.ExitCode)
			}
		}
	}
	if events == 0 {
		if t := strings.TrimSpace(string(out)); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%s printed nothing", binary)
	}
	if last == "" {
		return "", fmt.Errorf("%s printed %d events but no assistant message", binary, events)
	}
	return last, nil
}
