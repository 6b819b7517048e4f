package claude

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"

	"github.com/kk-project/kk/internal/harness"
)

// Headless runs `claude -p <prompt> --output-format json`, with
// --json-schema when run.Schema is set and --model/--effort from
// run.Model (spec.Model), and returns the answer: the structured output when a schema
// was given, else the result text of the last result object
// (harnesses.md §1.4).
func (*Adapter) Headless(ctx context.Context, run harness.HeadlessRun) (string, error) {
	margs, _ := spec.ModelArgs(run.Model)
	prompt, stdin := run.Prompt, run.Stdin
	args := []string{"-p"}
	if !spec.PromptFitsArg(prompt) {
		// Too long for one argument: Claude Code reads the prompt from
		// stdin when -p has none.
		stdin = harness.PromptReader(prompt, stdin)
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
	out, err := harness.Run(ctx, harness.Child{
		Name: binary, Args: args, Stdin: stdin, Env: guardEnv(),
		Timeout: run.Timeout, LogFile: run.LogFile, TruncateLog: true, TimeoutNamesLog: true,
	})
	if err != nil {
		return "", err
	}
	return resultAnswer(out, run.LogFile)
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
		return "", fmt.Errorf("claude printed no result object%s", harness.LogHint(logFile))
	}
	var r struct {
		Subtype          string          `json:"subtype"`
		IsError          bool            `json:"is_error"`
		Result           string          `json:"result"`
		StructuredOutput json.RawMessage `json:"structured_output"`
	}
	if err := json.Unmarshal(last, &r); err != nil {
		return "", fmt.Errorf("claude's result object: %v%s", err, harness.LogHint(logFile))
	}
	if r.IsError {
		msg := r.Result
		if msg == "" {
			msg = r.Subtype
		}
		return "", fmt.Errorf("claude reported an error: %s%s", harness.Tail(msg, 500), harness.LogHint(logFile))
	}
	if len(r.StructuredOutput) > 0 && string(r.StructuredOutput) != "null" {
		var c bytes.Buffer
		if err := json.Compact(&c, r.StructuredOutput); err == nil {
			return c.String(), nil
		}
	}
	return r.Result, nil
}

// guardEnv is the environment of the claude processes kk starts: the
// recursion guard set, so the harness run never re-enters kk's hooks, and
// no CLAUDECODE: Claude Code refuses to start when it sees that variable
// (the mark of a session it runs inside), which it would whenever kk
// itself runs inside Claude Code.
func guardEnv() []string { return harness.ChildEnv(os.Environ(), "CLAUDECODE") }
