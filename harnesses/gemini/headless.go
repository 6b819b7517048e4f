package gemini

import (
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
// Linux refuses a single argument over 128 KiB (MAX_ARG_STRLEN); a longer
// prompt goes to Gemini CLI on stdin, which it reads as the prompt when -p
// is absent.
const maxArgBytes = 100 << 10

// waitDelay bounds how long a timed-out run may keep its output pipes
// open (node children of the CLI can outlive it).
const waitDelay = 2 * time.Second

// Headless implements harness.Adapter: `gemini -p <prompt> --output-format
// json [-m model]` with KK_INTERNAL=1 in the environment, so kk's own
// hooks stay quiet inside the run. The input on run.Stdin goes to Gemini's
// stdin, which it puts before the prompt (docs/cli/headless.md). Gemini
// CLI has no flag that enforces an output schema, so run.Schema is not
// passed on; the prompt carries the contract.
//
// The answer is the "response" of the JSON document Gemini prints; an
// "error" in it fails the run.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	model, err := modelFlag(run.Model)
	if err != nil {
		return "", err
	}
	var input []byte
	if run.Stdin != nil {
		if input, err = io.ReadAll(run.Stdin); err != nil {
			return "", fmt.Errorf("reading the input for gemini: %w", err)
		}
	}
	if strings.TrimSpace(run.Prompt) == "" {
		return "", errors.New("gemini: empty prompt")
	}
	args := []string{"--output-format", "json"}
	if model != "" {
		args = append(args, "-m", model)
	}
	stdin := input
	if len(run.Prompt) <= maxArgBytes {
		args = append([]string{"-p", run.Prompt}, args...)
	} else {
		// Gemini joins stdin and -p as "<stdin>\n\n<prompt>"; without -p the
		// whole of stdin is the prompt.
		stdin = []byte(run.Prompt)
		if len(bytes.TrimSpace(input)) > 0 {
			stdin = append(append(input, "\n\n"...), run.Prompt...)
		}
	}
	out, err := runBinary(ctx, run, args, stdin)
	if err != nil {
		return "", err
	}
	return answer(out)
}

// modelFlag returns the -m value of a proposalModel setting. A setting for
// another harness is ignored (Gemini's default applies).
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
		return "", fmt.Errorf("model setting for gemini: %q must be a non-empty string, got %v", "model", v)
	}
	return s, nil
}

// runBinary runs gemini with args, copying its stdout to run.LogFile, and
// returns the stdout.
func runBinary(ctx context.Context, run harness.HeadlessRun, args []string, stdin []byte) ([]byte, error) {
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
	if stdin != nil {
		cmd.Stdin = bytes.NewReader(stdin)
	}
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
		// With --output-format json a failed run still prints its error
		// as JSON on stdout.
		if msg := jsonError(stdout.Bytes()); msg != "" {
			return nil, fmt.Errorf("%s failed (exit code %d): %s", binary, exitErr.ExitCode(), msg)
		}
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

// result is the document `--output-format json` prints.
type result struct {
	Response *string `json:"response"`
	Error    *struct {
		Type    string          `json:"type"`
		Message string          `json:"message"`
		Code    json.RawMessage `json:"code"`
	} `json:"error"`
}

// decodeResult finds the JSON document in stdout: all of it, or from the
// first line that opens an object (in case something printed a notice
// first).
func decodeResult(out []byte) (result, bool) {
	var r result
	trimmed := bytes.TrimSpace(out)
	if json.Unmarshal(trimmed, &r) == nil {
		return r, true
	}
	for i := 0; i < len(trimmed); {
		j := bytes.IndexByte(trimmed[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
		if i < len(trimmed) && trimmed[i] == '{' {
			dec := json.NewDecoder(bytes.NewReader(trimmed[i:]))
			if dec.Decode(&r) == nil {
				return r, true
			}
		}
	}
	return result{}, false
}

func jsonError(out []byte) string {
	r, ok := decodeResult(out)
	if !ok || r.Error == nil {
		return ""
	}
	msg := strings.TrimSpace(r.Error.Message)
	if msg == "" {
		msg = "no message"
	}
	if r.Error.Type != "" {
		return r.Error.Type + ": " + msg
	}
	return msg
}

// answer extracts the final answer from Gemini's stdout: the response of
// the JSON document, or the whole text when stdout is not that document.
func answer(out []byte) (string, error) {
	r, ok := decodeResult(out)
	if !ok || (r.Response == nil && r.Error == nil) {
		if t := strings.TrimSpace(string(out)); t != "" {
			return t, nil
		}
		return "", fmt.Errorf("%s printed nothing", binary)
	}
	if msg := jsonError(out); msg != "" {
		return "", fmt.Errorf("%s reported an error: %s", binary, msg)
	}
	if r.Response == nil || strings.TrimSpace(*r.Response) == "" {
		return "", fmt.Errorf("%s printed an empty response", binary)
	}
	return strings.TrimSpace(*r.Response), nil
}
