package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// The hooks keep two small state files under .state/ (gitignored):
//
//	state.json       {"last_nudged_at": "<ISO time>"}: when session-start
//	                 last asked for curation; other keys are kept.
//	lint-state.json  {"sessions_since_lint", "last_run_at", "last_errors",
//	                 "last_findings"}: lint-tick's counter and the result
//	                 of its last lint run.

func statePath(k *store.KB) string     { return filepath.Join(k.StateDir(), "state.json") }
func lintStatePath(k *store.KB) string { return filepath.Join(k.StateDir(), "lint-state.json") }

// readJSONFile decodes path into v; a missing file leaves v as it is.
func readJSONFile(k *store.KB, path string, v any) error {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %v", k.Rel(path), err)
	}
	return nil
}

// writeJSONFile writes v to path atomically, indented, with a final newline.
func writeJSONFile(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, append(data, '\n'), 0o644)
}

// LintState is .state/lint-state.json.
type LintState struct {
	SessionsSinceLint int    `json:"sessions_since_lint"`
	LastRunAt         string `json:"last_run_at,omitempty"`
	LastErrors        int    `json:"last_errors"`
	LastFindings      int    `json:"last_findings"`
}

// ReadLintState reads lint-tick's state; a missing file is a zero state.
func ReadLintState(k *store.KB) (LintState, error) {
	var st LintState
	err := readJSONFile(k, lintStatePath(k), &st)
	return st, err
}

// readNudgeState returns state.json's keys (never nil).
func readNudgeState(k *store.KB) (map[string]any, error) {
	m := map[string]any{}
	if err := readJSONFile(k, statePath(k), &m); err != nil {
		return map[string]any{}, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}
