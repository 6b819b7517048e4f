package codex

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

// Headless runs `codex exec --json` read-only, with --output-schema when
// run.Schema is set and the model and reasoning effort from run.Model, and
// returns the text of the last completed agent message (harnesses.md
// §2.4); with a schema that text is the JSON answer.
func (*Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	margs, err := modelArgs(run.Model)
	if err != nil {
		return "", err
	}
	args := []string{"exec", "--json", "--skip-git-repo-check", "--sandbox", "read-only"}
	if len(run.Schema) > 0 {
		if !json.Valid(run.Schema) {
			return "", fmt.Errorf("the answer schema is not valid JSON")
		}
		dir := ""
		if run.LogFile != "" {
			dir = filepath.Dir(run.LogFile)
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return "", err
			}
		}
		f, err := os.CreateTemp(dir, "kk-answer-schema-*.json")
		if err != nil {
			return "", fmt.Errorf("writing the answer schema: %w", err)
		}
		defer os.Remove(f.Name())
		_, werr := f.Write(run.Schema)
		if cerr := f.Close(); werr == nil {
			werr = cerr
		}
		if werr != nil {
			return "", fmt.Errorf("writing the answer schema: %w", werr)
		}
		args = append(args, "--output-schema", f.Name())
	}
	args = append(args, margs...)
	stdin := run.Stdin
	if len(run.Prompt) > argPromptLimit {
		// Too long for one argument: "-" makes codex read the prompt from
		// stdin.
		args = append(args, "-")
		stdin = promptReader(run.Prompt, stdin)
	} else {
		args = append(args, run.Prompt)
	}
	out, err := runBinary(ctx, binary, args, stdin, run)
	if err != nil {
		return "", err
	}
	return agentAnswer(out, run.LogFile)
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

// modelArgs turns a model choice (config proposalModel: {harness: codex,
// model: <name>, reasoningEffort: low|medium|high}) into flags. A choice
// for another harness is ignored.
func modelArgs(m map[string]any) ([]string, error) {
	if h, ok := m["harness"]; ok && h != id {
		return nil, nil
	}
	var args []string
	for _, key := range []string{"model", "reasoningEffort"} {
		v, ok := m[key]
		if !ok || v == nil {
			continue
		}
		s, isString := v.(string)
		if !isString || strings.TrimSpace(s) == "" || strings.ContainsAny(s, "\"\n") {
			return nil, fmt.Errorf("model setting %q must be a non-empty one-line string, got %v", key, v)
		}
		if key == "model" {
			args = append(args, "--model", s)
		} else {
			args = append(args, "-c", `model_reasoning_effort="`+s+`"`)
		}
	}
	return args, nil
}

// agentAnswer finds the text of the last completed agent message in
// codex exec's JSONL events. A failed turn is an error, and so is an error
// event when no agent message follows it.
func agentAnswer(out []byte, logFile string) (string, error) {
	answer, found, failure, lastErr := "", false, "", ""
	eachLine(bytes.NewReader(out), func(line []byte) {
		var ev struct {
			Type string `json:"type"`
			Item struct {
				Type string `json:"type"`
				Text string `json:"text"`
			} `json:"item"`
			Error   json.RawMessage `json:"error"`
			Message string          `json:"message"`
		}
		if json.Unmarshal(line, &ev) != nil {
			return
		}
		switch ev.Type {
		case "item.completed":
			if ev.Item.Type == "agent_message" {
				answer, found, lastErr = ev.Item.Text, true, ""
			}
		case "turn.failed", "error":
			msg := ev.Message
			var e struct {
				Message string `json:"message"`
			}
			if json.Unmarshal(ev.Error, &e) == nil && e.Message != "" {
				msg = e.Message
			}
			if msg == "" {
				msg = ev.Type
			}
			if ev.Type == "turn.failed" {
				failure = msg
			} else {
				lastErr = msg
			}
		}
	})
	if failure == "" && !found {
		failure = lastErr
	}
	if failure != "" {
		return "", fmt.Errorf("codex reported an error: %s%s", tail(failure, 500), seeLog(logFile))
	}
	if !found {
		return "", fmt.Errorf("codex printed no agent message%s", seeLog(logFile))
	}
	return answer, nil
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
// never re-enters kk's hooks.
func guardEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, harness.RecursionEnv+"=") {
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
