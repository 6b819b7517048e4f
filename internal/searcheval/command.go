package searcheval

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"strings"
)

// CommandRanker runs a shell command for each prompt, as
// retrieval-eval.py's --cmd does: {prompt} in template is replaced by the
// shell-quoted prompt. The command prints ids best first, one per line
// (blank and # lines ignored), or, with jsonPath set, a JSON document in
// which jsonPath (keys joined by dots, e.g. data.hits) names a list of ids
// or of objects with an "id".
func CommandRanker(template, jsonPath string) Ranker {
	return func(ctx context.Context, prompt string) ([]string, error) {
		cmdline := strings.ReplaceAll(template, "{prompt}", shellQuote(prompt))
		cmd := exec.CommandContext(ctx, "bash", "-c", cmdline)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s: %w: %s", cmdline, err, strings.TrimSpace(stderr.String()))
		}
		if jsonPath == "" {
			var ids []string
			for _, line := range strings.Split(stdout.String(), "\n") {
				if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
					ids = append(ids, line)
				}
			}
			return ids, nil
		}
		return idsAt(stdout.Bytes(), jsonPath)
	}
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'"
}

// idsAt reads the ids listed at path in a JSON document.
func idsAt(doc []byte, path string) ([]string, error) {
	var v any
	if len(bytes.TrimSpace(doc)) == 0 {
		return nil, nil
	}
	if err := json.Unmarshal(doc, &v); err != nil {
		return nil, fmt.Errorf("output is not JSON: %w", err)
	}
	for _, key := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("no %q in the output (at %q)", path, key)
		}
		v = m[key]
	}
	if v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%q is not a list in the output", path)
	}
	var ids []string
	for _, item := range list {
		switch x := item.(type) {
		case string:
			ids = append(ids, x)
		case map[string]any:
			if id, ok := x["id"].(string); ok {
				ids = append(ids, id)
			}
		}
	}
	return ids, nil
}
