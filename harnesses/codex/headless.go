package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/kk-project/kk/internal/harness"
)

// Headless runs `codex exec --json` read-only, with --output-schema when
// run.Schema is set and the model and reasoning effort from run.Model, and
// returns the text of the last completed agent message (harnesses.md
// §2.4); with a schema that text is the JSON answer.
func (*Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	margs, _ := spec.ModelArgs(run.Model)
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
		defer func() { _ = os.Remove(f.Name()) }()
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
	if !spec.PromptFitsArg(run.Prompt) {
		// Too long for one argument: "-" makes codex read the prompt from
		// stdin.
		args = append(args, "-")
		stdin = harness.PromptReader(run.Prompt, stdin)
	} else {
		args = append(args, run.Prompt)
	}
	out, err := harness.Run(ctx, harness.Child{
		Name: binary, Args: args, Stdin: stdin,
		Timeout: run.Timeout, LogFile: run.LogFile, TruncateLog: true, TimeoutNamesLog: true,
	})
	if err != nil {
		return "", err
	}
	return agentAnswer(out, run.LogFile)
}

// agentAnswer finds the text of the last completed agent message in
// codex exec's JSONL events. A failed turn is an error, and so is an error
// event when no agent message follows it.
func agentAnswer(out []byte, logFile string) (string, error) {
	answer, found, failure, lastErr := "", false, "", ""
	_ = harness.EachLine(bytes.NewReader(out), func(line []byte) {
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
		return "", fmt.Errorf("codex reported an error: %s%s", harness.Tail(failure, 500), harness.LogHint(logFile))
	}
	if !found {
		return "", fmt.Errorf("codex printed no agent message%s", harness.LogHint(logFile))
	}
	return answer, nil
}
