package session

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// removeLog deletes one log file; tests replace it to make a removal fail.
var removeLog = os.Remove

// PruneOptions tune PruneLogs.
type PruneOptions struct {
	// DryRun reports what would be removed and removes nothing.
	DryRun bool
}

// PruneReport is what PruneLogs removed (or would remove).
type PruneReport struct {
	RetentionDays int    `json:"retention_days"`
	Cutoff        string `json:"cutoff"`
	DryRun        bool   `json:"dry_run"`
	// Removed are the pruned files relative to the repository root, sorted.
	Removed []string `json:"removed"`
	// Kept counts the .jsonl files young enough to stay.
	Kept int `json:"kept"`
	// Failed are the files that could not be removed.
	Failed []PruneFailure `json:"failed"`
}

// PruneFailure is a log file that could not be removed.
type PruneFailure struct {
	Path  string `json:"path"`
	Error string `json:"error"`
}

// PruneLogs deletes the run traces (_logs/**/*.jsonl) whose modification
// time is older than logsRetentionDays from config.yaml. Hook error logs
// (hook-errors-*.log) and curator drafts (*.draft.json) are never touched,
// nor is anything that is not a regular file. A file that cannot be
// removed is reported in Failed and the others are still pruned.
func PruneLogs(k *store.KB, opts PruneOptions) (*PruneReport, error) {
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	cutoff := k.Time().Add(-time.Duration(cfg.LogsRetentionDays) * 24 * time.Hour)
	rep := &PruneReport{RetentionDays: cfg.LogsRetentionDays, Cutoff: cutoff.UTC().Format(time.RFC3339), DryRun: opts.DryRun,
		Removed: []string{}, Failed: []PruneFailure{}}
	var old []string
	err = filepath.WalkDir(k.LogsDir(), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == k.LogsDir() && errors.Is(err, fs.ErrNotExist) {
				return fs.SkipAll
			}
			return err
		}
		if !prunable(d) {
			return nil
		}
		info, err := d.Info()
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed by someone else meanwhile
		}
		if err != nil {
			return err
		}
		if info.ModTime().Before(cutoff) {
			old = append(old, p)
		} else {
			rep.Kept++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", k.Rel(k.LogsDir()), err)
	}
	for _, p := range old {
		if !opts.DryRun {
			if err := removeLog(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				rep.Failed = append(rep.Failed, PruneFailure{Path: k.Rel(p), Error: err.Error()})
				continue
			}
		}
		rep.Removed = append(rep.Removed, k.Rel(p))
	}
	slices.Sort(rep.Removed)
	return rep, nil
}

// prunable reports whether a _logs entry is a run trace that retention
// applies to.
func prunable(d fs.DirEntry) bool {
	name := d.Name()
	switch {
	case !d.Type().IsRegular():
		return false
	case strings.HasPrefix(name, "hook-errors-") && strings.HasSuffix(name, ".log"):
		return false
	case strings.HasSuffix(name, ".draft.json"):
		return false
	}
	return strings.HasSuffix(name, ".jsonl")
}
