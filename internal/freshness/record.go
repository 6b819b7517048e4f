package freshness

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// Recorded is the last freshness check's outcome, kept under .state/ so
// that session start (which has no time for git's history) can report it,
// as kenkeep reports the nodes that describe changed code at session
// start. kk freshness, kk status, kk doctor and the lint tick record it.
type Recorded struct {
	CheckedAt       string   `json:"checked_at"`
	Available       bool     `json:"available"`
	ConsideredNodes int      `json:"considered_nodes"`
	FlaggedCount    int      `json:"flagged_count"`
	Flagged         []string `json:"flagged"` // the first ids, for the message
}

// maxRecorded is how many flagged ids Record keeps.
const maxRecorded = 10

func recordPath(k *store.KB) string { return filepath.Join(k.StateDir(), "freshness.json") }

// Record keeps rep as the last check's outcome. It is a cache: a failure
// to write it is no failure of the check, and is returned for the caller
// to ignore or log.
func Record(k *store.KB, rep *Report, now time.Time) error {
	r := Recorded{CheckedAt: now.UTC().Format(time.RFC3339), Available: rep.Available, ConsideredNodes: rep.ConsideredNodes,
		FlaggedCount: rep.FlaggedCount, Flagged: []string{}}
	for _, f := range rep.Flagged {
		if len(r.Flagged) == maxRecorded {
			break
		}
		r.Flagged = append(r.Flagged, f.ID)
	}
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(recordPath(k), append(data, '\n'), 0o644)
}

// LastRecorded returns the last recorded check; nil when there is none.
func LastRecorded(k *store.KB) (*Recorded, error) {
	// k.ReadFile: a record that is not a regular file (a named pipe) is
	// refused at once, not waited on at every session start.
	data, err := k.ReadFile(recordPath(k))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var r Recorded
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", k.Rel(recordPath(k)), err)
	}
	return &r, nil
}

// CheckAndRecord runs Check and records its outcome (see Record).
func CheckAndRecord(ctx context.Context, k *store.KB, opts Options, now time.Time) *Report {
	rep := Check(ctx, k, opts)
	_ = Record(k, rep, now) // a cache: the check stands without it
	return rep
}
