package cursor

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/kk-project/kk/internal/harness"
)

// promptArgMax is the largest prompt passed as an argument; a longer one
// (or one with input) goes on stdin, as `agent -p -` reads it.
const promptArgMax = 64 << 10

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
		return "", fmt.Errorf("%v; %s", err, a.InstallHint())
	}
	args := []string{"-p", "--output-format", "json"}
	if name, err := modelName(run.Model); err != nil {
		return "", err
	} else if name != "" {
		args = append(args, "--model", name)
	}
	var input []byte
	if run.Stdin != nil {
		if input, err = io.ReadAll(run.Stdin); err != nil {
			return "", fmt.Errorf("reading the input of the Cursor run: %w", err)
		}
	}
	var stdin []byte
	if len(input) > 0 || len(run.Prompt) > promptArgMax {
		args = append(args, "-")
		stdin = []byte(run.Prompt)
		if len(input) > 0 {
			stdin = append(append(stdin, "\n\n"...), input...)
		}
	} else {
		args = append(args, run.Prompt)
	}
	out, err := runChild(ctx, "Cursor agent", bin, args, stdin, run.LogFile, run.Timeout)
	if err != nil {
		return "", err
	}
	return answer(out)
}

// answer is the result text of the last result line of out.
func answer(out []byte) (string, error) {
	var last *result
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 64<<10), len(out)+1)
	for sc.Scan() {
		var r result
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Type == "result" {
			last = &r
		}
	}
	switch {
	case last == nil:
		return "", fmt.Errorf("Cursor agent printed no result line%s", tail(string(out)))
	case last.IsError || (last.Subtype != "" && last.Subtype != "success"):
		return "", fmt.Errorf("Cursor agent reported an error (%s)%s", last.Subtype, tail(last.Result))
	}
	return last.Result, nil
}

// modelName is the "name" of a proposalModel-style setting.
func modelName(m map[string]any) (string, error) {
	v, ok := m["name"]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", fmt.Errorf("model name %v is not a string", v)
	}
	return s, nil
}
