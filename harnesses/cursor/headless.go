package cursor

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/kk-project/kk/internal/harness"
)

// result is the line `agent -p --output-format json` ends with
// (harnesses.md §3.4); stream-json ends with the same line.
type result struct {
	Type    string `json:"type"`
	Subtype string `json:"subtype"`
	IsError bool   `json:"is_error"`
	Result  string `json:"result"`
}

// Headless implements harness.Adapter: `agent -p --output-format json
// [--model <name>] <prompt>`, the prompt and run.Stdin joined on stdin
// (`-`) when there is input or the prompt is long. The answer is the
// result of the last result line. Cursor cannot be held to a JSON
// Schema; run.Schema is left to the caller's validation. run.Model's
// "name" picks the model; Cursor has no effort setting.
func (a *Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	bin, err := a.lookPath(binary, oldBinary)
	if err != nil {
		return "", harness.NotReady(fmt.Errorf("%v; %s", err, a.InstallHint()))
	}
	margs, _ := spec.ModelArgs(run.Model)
	args := append([]string{"-p", "--output-format", "json"}, margs...)
	input, err := harness.ReadInput(run.Stdin)
	if err != nil {
		return "", fmt.Errorf("reading the input of the Cursor run: %w", err)
	}
	var stdin []byte
	if len(input) > 0 || !spec.PromptFitsArg(run.Prompt) {
		args = append(args, "-")
		stdin = harness.JoinInput(run.Prompt, input)
	} else {
		args = append(args, run.Prompt)
	}
	out, err := harness.Run(ctx, harness.Child{
		Name: "Cursor agent", Path: bin, Args: args, Stdin: bytes.NewReader(stdin),
		Timeout: run.Timeout, LogFile: run.LogFile,
	})
	if err != nil {
		return "", err
	}
	return answer(out)
}

// answer is the result text of the last result line of out.
func answer(out []byte) (string, error) {
	var last *result
	_ = harness.EachLine(bytes.NewReader(out), func(line []byte) { // reading a byte slice does not fail
		var r result
		if json.Unmarshal(line, &r) == nil && r.Type == "result" {
			last = &r
		}
	})
	switch {
	case last == nil:
		return "", fmt.Errorf("the Cursor agent printed no result line%s", harness.OutputTail(string(out)))
	case last.IsError || (last.Subtype != "" && last.Subtype != "success"):
		return "", fmt.Errorf("the Cursor agent reported an error (%s)%s", last.Subtype, harness.OutputTail(last.Result))
	}
	return last.Result, nil
}
