package gemini

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/kk-project/kk/internal/harness"
)

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
	margs, _ := spec.ModelArgs(run.Model)
	input, err := harness.ReadInput(run.Stdin)
	if err != nil {
		return "", fmt.Errorf("reading the input for gemini: %w", err)
	}
	if strings.TrimSpace(run.Prompt) == "" {
		return "", errors.New("gemini: empty prompt")
	}
	args := append([]string{"--output-format", "json"}, margs...)
	stdin := input
	if spec.PromptFitsArg(run.Prompt) { // else on stdin, which Gemini reads as the prompt when -p is absent
		args = append([]string{"-p", run.Prompt}, args...)
	} else {
		// Gemini joins stdin and -p as "<stdin>\n\n<prompt>"; without -p the
		// whole of stdin is the prompt.
		stdin = []byte(run.Prompt)
		if len(bytes.TrimSpace(input)) > 0 {
			stdin = append(append(input, "\n\n"...), run.Prompt...)
		}
	}
	var in io.Reader
	if stdin != nil {
		in = bytes.NewReader(stdin)
	}
	out, err := harness.Run(ctx, harness.Child{
		Name: binary, Args: args, Stdin: in, InstallHint: spec.InstallHint,
		Timeout: run.Timeout, LogFile: run.LogFile, NoStderr: "(no output on stderr)",
		// With --output-format json a failed run still prints its error
		// as JSON on stdout.
		Explain:       jsonError,
		NotReadyExits: map[int]string{untrustedExit: untrustedFix},
	})
	if err != nil {
		return "", err
	}
	return answer(out)
}

// untrustedExit is how headless Gemini CLI (0.61) refuses a folder the
// user has not trusted: it runs nothing at all there.
const untrustedExit = 55

// untrustedFix tells the user how to let headless runs into the folder.
const untrustedFix = "Gemini CLI refuses to run headless in a folder it does not trust; " +
	"trust the repository in an interactive `gemini` session (or with /permissions), or set GEMINI_CLI_TRUST_WORKSPACE=true"

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
