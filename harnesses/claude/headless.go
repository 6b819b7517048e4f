package claude

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
	"unicode/utf8"

	"github.com/kk-project/kk/internal/harness"
)

// Headless runs `claude -p <prompt> --output-format json`, with
// --json-schema when run.Schema is set and --model/--effort from
// run.Model, and returns the answer: the structured output when a schema
// was given, else the result text of the last result object
// (harnesses.md §1.4).
func (*Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	margs, err := modelArgs(run.Model)
	if err != nil {
		return "", err
	}
	prompt, stdin := run.Prompt, run.Stdin
	args := []string{"-p"}
	if len(prompt) > argPromptLimit {
		// Too long for one argument: Claude Code reads the prompt from
		// stdin when -p has none.
		stdin = promptReader(prompt, stdin)
	} else {
		args = append(args, prompt)
	}
	args = append(args, "--output-format", "json")
	if len(run.Schema) > 0 {
		var b bytes.Buffer
		if err := json.Compact(&b, run.Schema); err != nil {
			return "", fmt.Errorf("the answer schema is not valid JSON: %v", err)
		}
		args = append(args, "--json-schema", b.String())
	}
	args = append(args, margs...)
	out, err := runBinary(ctx, binary, args, stdin, run)
	if err != nil {
		return "", err
	}
	return resultAnswer(out, run.LogFile)
}

// argPromptLimit is the longest prompt passed as an argument; Linux caps
// one argument at 128 KiB.
const argPromptLimit = 64 << 10

// promptReader puts the prompt first on stdin, followed by the caller's
// stdin after a blank line.
func promptReader(prompt string, stdin io.Reader) io.Reader {
	if stdin == nil {
		return strings.NewReader(prompt)
	}
	return io.MultiReader(strings.NewReader(prompt+"\n\n"), stdin)
}

// modelArgs turns a model choice (config proposalModel: {harness: claude,
// name: haiku|sonnet|opus|<id>, effort: low|…|max}) into flags. A choice
// for another harness is ignored.
func modelArgs(m map[string]any) ([]string, error) {
	if h, ok := m["harness"]; ok && h != id {
		return nil, nil
	}
	var args []string
	for _, f := range []struct{ flag, key, alt string }{
		{"--model", "name", "model"},
		{"--effort", "effort", ""},
	} {
		v, ok := m[f.key]
		if !ok && f.alt != "" {
			v, ok = m[f.alt]
		}
		if !ok || v == nil {
			continue
		}
		s, isString := v.(string)
		if !isString || strings.TrimSpace(s) == "" {
			return nil, fmt.Errorf("model setting %q must be a non-empty string, got %v", f.key, v)
		}
		args = append(args, f.flag, s)
	}
	return args, nil
}

// resultAnswer finds the last result object in Claude Code's output (one
// object for --output-format json, an array of messages in older
// versions, one object per line for stream-json).
func resultAnswer(out []byte, logFile string) (string, error) {
	var last json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		var items []json.RawMessage
		if json.Unmarshal(v, &items) != nil {
			items = []json.RawMessage{v}
		}
		for _, it := range items {
			var obj struct {
				Type string `json:"type"`
			}
			if json.Unmarshal(it, &obj) == nil && obj.Type == "result" {
				last = it
			}
		}
	}
	if last == nil {
		return "", fmt.Errorf("claude printed no result object%s", seeLog(logFile))
	}
	var r struct {
		Subtype          string          `json:"subtype"`
		IsError          bool            `json:"is_error"`
		Result           string          `json:"result"`
		StructuredOutput json.RawMessage `json:"structured_output"`
	}
	if err := json.Unmarshal(last, &r); err != nil {
		return "", fmt.Errorf("claude's result object: %v%s", err, seeLog(logFile))
	}
	if r.IsError {
		msg := r.Result
		if msg == "" {
			msg = r.Subtype
		}
		return "", fmt.Errorf("claude reported an error: %s%s", tail(msg, 500), seeLog(logFile))
	}
	if len(r.StructuredOutput) > 0 && string(r.StructuredOutput) != "null" {
		var c bytes.Buffer
		if err := json.Compact(&c, r.StructuredOutput); err == nil {
			return c.String(), nil
		}
	}
	return r.Result, nil
}

// runBinary runs bin with args and the recursion guard set, copying its
// stdout to run.LogFile, and returns the stdout. A run past run.Timeout
// or one that exits non-zero is an error carrying the end of its stderr.
func runBinary(ctx context.Context, bin string, args []string, stdin io.Reader, run harness.HeadlessRun) ([]byte, error) {
	path, err := exec.LookPath(bin)
	if err != nil {
		return nil, fmt.Errorf("%s is not on PATH: %w", bin, err)
	}
	if run.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, run.Timeout)
		defer cancel()
	}
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = guardEnv(os.Environ())
	cmd.Stdin = stdin
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if run.LogFile != "" {
		if err := os.MkdirAll(filepath.Dir(run.LogFile), 0o755); err != nil {
			return nil, err
		}
		f, err := os.Create(run.LogFile)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		cmd.Stdout = io.MultiWriter(&stdout, f)
	}
	err = cmd.Run()
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded) && run.Timeout > 0:
		return nil, fmt.Errorf("%s timed out after %s%s", bin, run.Timeout, seeLog(run.LogFile))
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%s: %w", bin, ctx.Err())
	case err != nil:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("%s failed (exit code %d): %s", bin, exit.ExitCode(), tail(strings.TrimSpace(stderr.String()), 2000))
		}
		return nil, fmt.Errorf("running %s: %w", bin, err)
	}
	return stdout.Bytes(), nil
}

// guardEnv returns env with the recursion guard set, so the harness run
// never re-enters kk's hooks, and without CLAUDECODE: Claude Code refuses
// to start when it sees that variable (the mark of a session it runs
// inside), which it would whenever kk itself runs inside Claude Code.
func guardEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, harness.RecursionEnv+"=") && !strings.HasPrefix(kv, "CLAUDECODE=") {
			out = append(out, kv)
		}
	}
	return append(out, harness.RecursionEnv+"=1")
}

// tail returns about the last n bytes of s, starting on a character.
func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := len(s) - n
	for i < len(s) && !utf8.RuneStart(s[i]) {
		i++
	}
	return "…" + s[i:]
}

// seeLog points at the log file when there is one.
func seeLog(logFile string) string {
	if logFile == "" {
		return ""
	}
	return " (output in " + logFile + ")"
}
