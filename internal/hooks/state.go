package hooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"

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

// readJSONFile decodes path into v; a missing file leaves v as it is, and
// one that is not a regular file of at most store.MaxFileBytes is an error
// naming it (store.ReadFile).
func readJSONFile(k *store.KB, path string, v any) error {
	data, err := k.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%s: %w", k.Rel(path), err)
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

// writeVolatileJSON writes v to path as writeJSONFile does, replacing it
// atomically (readers see the old file or the new one, whole), but
// without syncing it to disk: after a power cut the file may be missing
// or empty. For records whose loss costs a hint, written on the session's
// critical path, where two syncs cost more than the rest of the hook.
func writeVolatileJSON(path string, v any) (err error) {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = tmp.Close()
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(append(data, '\n')); err != nil {
		return err
	}
	if err = tmp.Chmod(0o644); err != nil && runtime.GOOS != "windows" {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// LintState is .state/lint-state.json, in kenkeep's shape (the file has
// kenkeep's name, and either tool reads what the other wrote):
// {schema_version: 1, sessions_since_last_lint, last_lint_at (null until
// the first run), last_errors, last_findings}. Files an earlier kk wrote
// (sessions_since_lint, last_run_at) are read too.
type LintState struct {
	SessionsSinceLint int
	LastRunAt         string // "" until the first run
	LastErrors        int
	LastFindings      int
}

type lintStateFile struct {
	SchemaVersion     int     `json:"schema_version"`
	SessionsSinceLint int     `json:"sessions_since_last_lint"`
	LastLintAt        *string `json:"last_lint_at"`
	LastErrors        int     `json:"last_errors"`
	LastFindings      int     `json:"last_findings"`
	// An earlier kk's keys.
	OldSessions *int    `json:"sessions_since_lint,omitempty"`
	OldRunAt    *string `json:"last_run_at,omitempty"`
}

// MarshalJSON writes kenkeep's keys.
func (s LintState) MarshalJSON() ([]byte, error) {
	f := lintStateFile{SchemaVersion: 1, SessionsSinceLint: s.SessionsSinceLint, LastErrors: s.LastErrors, LastFindings: s.LastFindings}
	if s.LastRunAt != "" {
		f.LastLintAt = &s.LastRunAt
	}
	return json.Marshal(f)
}

// UnmarshalJSON reads kenkeep's keys, or an earlier kk's.
func (s *LintState) UnmarshalJSON(data []byte) error {
	var f lintStateFile
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	// The counts are never negative (kenkeep's schema says so too); a file
	// that says otherwise is no state, as one that does not parse.
	for _, c := range []struct {
		name string
		n    *int
	}{{"sessions_since_last_lint", &f.SessionsSinceLint}, {"last_errors", &f.LastErrors},
		{"last_findings", &f.LastFindings}, {"sessions_since_lint", f.OldSessions}} {
		if c.n != nil && *c.n < 0 {
			return fmt.Errorf("field %q is %d; a count is 0 or more", c.name, *c.n)
		}
	}
	*s = LintState{SessionsSinceLint: f.SessionsSinceLint, LastErrors: f.LastErrors, LastFindings: f.LastFindings}
	if f.LastLintAt != nil {
		s.LastRunAt = *f.LastLintAt
	}
	if f.OldSessions != nil {
		s.SessionsSinceLint = *f.OldSessions
	}
	if f.OldRunAt != nil && s.LastRunAt == "" {
		s.LastRunAt = *f.OldRunAt
	}
	return nil
}

// ReadLintState reads lint-tick's state; a missing file is a zero state.
func ReadLintState(k *store.KB) (LintState, error) {
	var st LintState
	err := readJSONFile(k, lintStatePath(k), &st)
	return st, err
}

// readNudgeState returns state.json's keys (never nil). A file that is
// not JSON (cut short, edited by hand) is moved aside to
// state.json.unreadable, for a person to look at, and reported once: the
// nudges start again from no state, rather than stop for good.
func readNudgeState(k *store.KB) (map[string]any, error) {
	m := map[string]any{}
	if err := readJSONFile(k, statePath(k), &m); err != nil {
		var syntax *json.SyntaxError
		if errors.As(err, &syntax) {
			aside := statePath(k) + ".unreadable"
			if rerr := os.Rename(statePath(k), aside); rerr == nil {
				err = fmt.Errorf("%w; moved aside to %s, and the nudges start again", err, k.Rel(aside))
			}
		}
		return map[string]any{}, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}
