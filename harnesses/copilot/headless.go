package copilot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

// Headless implements harness.Adapter: `copilot -p <prompt>
// --output-format json --no-ask-user --disable-builtin-mcps [--model m]
// [--reasoning-effort e]`
// with KK_INTERNAL=1 in the environment, so kk's own hooks stay quiet if
// Copilot runs repository hooks. The input on run.Stdin is appended to the
// prompt after an "--- input ---" line. No tool is pre-approved: the run
// only has to answer. Copilot has no flag that enforces an output schema,
// so run.Schema is not passed on; the prompt carries the contract.
//
// The answer is the last assistant.message of the JSONL event stream;
// builds that print plain text instead are read as plain text.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	margs, _ := spec.ModelArgs(run.Model)
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
	args := append([]string{"--output-format", "json", "--no-ask-user", "--disable-builtin-mcps"}, margs...)
	var stdin io.Reader
	if spec.PromptFitsArg(text) { // else on stdin, which Copilot reads when -p is absent
		args = append([]string{"-p", text}, args...)
	} else {
		stdin = strings.NewReader(text)
	}
	out, err := harness.Run(ctx, harness.Child{
		Name: binary, Args: args, Stdin: stdin, InstallHint: spec.InstallHint,
		Timeout: run.Timeout, LogFile: run.LogFile, NoStderr: "(no output on stderr)",
	})
	if err != nil {
		return "", err
	}
	return answer(out)
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
		_ = json.Unmarshal(ev.Data, &d)
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
