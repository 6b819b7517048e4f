package curate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/schema"
	"github.com/kk-project/kk/internal/session"
	"github.com/kk-project/kk/internal/store"
)

// DraftsDir is where the curate skill's drafting sub-agents leave their
// batches: _logs/curator/<run>__<N>.draft.json, with an event log
// <run>__<N>.jsonl beside each.
func DraftsDir(k *store.KB) string { return filepath.Join(k.Dir, "_logs", "curator") }

// DraftBatch is the outcome of one draft file.
type DraftBatch struct {
	N      string `json:"batch"`
	File   string `json:"file"`
	Valid  bool   `json:"valid"`
	Count  int    `json:"count"`
	Reason string `json:"reason,omitempty"`
}

// CollectResult is what Collect found.
type CollectResult struct {
	// Items are the entries of every valid batch, in batch order, as they
	// were written.
	Items   []json.RawMessage
	Batches []DraftBatch
	// Warnings are problems that did not stop the collection (an event
	// log that could not be appended to).
	Warnings []string
}

// ErrNoDrafts is returned when a run left no draft files.
var ErrNoDrafts = errors.New("no draft files")

var draftName = regexp.MustCompile(`^(.+)__([0-9]+)\.draft\.json$`)

// Collect gathers the draft batches of run runID from dir (DraftsDir by
// default). Each batch must be JSON valid against the named schema, which
// must describe a list; the entries of the valid batches are concatenated
// in batch order (numeric: 2 before 10). An invalid batch is skipped and
// reported, not fatal. Each batch's outcome is appended to its event log
// as {ts, runId, batchN, event, count | reason}.
func Collect(dir, runID, schemaName string, now time.Time) (*CollectResult, error) {
	if err := CheckRunID(runID); err != nil {
		return nil, err
	}
	if err := requireListSchema(schemaName); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading drafts: %w", err)
	}
	type draft struct{ name, n string }
	var drafts []draft
	for _, e := range entries {
		m := draftName.FindStringSubmatch(e.Name())
		if m == nil || m[1] != runID || e.IsDir() {
			continue
		}
		drafts = append(drafts, draft{e.Name(), m[2]})
	}
	if len(drafts) == 0 {
		return nil, fmt.Errorf("%w for run %s in %s (expected %s__<N>.draft.json)", ErrNoDrafts, runID, dir, runID)
	}
	slices.SortFunc(drafts, func(a, b draft) int {
		if c := compareNumbers(a.n, b.n); c != 0 {
			return c
		}
		return strings.Compare(a.name, b.name) // 1 and 01
	})
	res := &CollectResult{Items: []json.RawMessage{}, Batches: []DraftBatch{}}
	for _, d := range drafts {
		b := DraftBatch{N: d.n, File: d.name}
		items, reason := readDraft(filepath.Join(dir, d.name), schemaName)
		ev := draftEvent{TS: session.FormatTime(now), RunID: runID, BatchN: d.n}
		if reason != "" {
			b.Reason = reason
			ev.Event, ev.Reason = "invalid", reason
		} else {
			b.Valid, b.Count = true, len(items)
			res.Items = append(res.Items, items...)
			ev.Event, ev.Count = "validated", &b.Count
		}
		res.Batches = append(res.Batches, b)
		if err := appendEvent(filepath.Join(dir, runID+"__"+d.n+".jsonl"), ev); err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("batch %s: recording the event: %v", d.n, err))
		}
	}
	return res, nil
}

// readDraft returns the entries of a valid batch, or why it is invalid.
func readDraft(path, schemaName string) ([]json.RawMessage, string) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Sprintf("unreadable: %v", err)
	}
	doc, err := session.ParseJSON(filepath.Base(path), data)
	if err != nil {
		return nil, err.Error()
	}
	if err := schema.Validate(schemaName, doc); err != nil {
		var ve *schema.ValidationError
		if errors.As(err, &ve) {
			parts := make([]string, len(ve.Failures))
			for i, f := range ve.Failures {
				parts[i] = f.String()
			}
			return nil, "does not match schema " + schemaName + ": " + strings.Join(parts, "; ")
		}
		return nil, err.Error()
	}
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Sprintf("not a JSON list: %v", err)
	}
	return items, ""
}

// requireListSchema checks that the named schema exists and describes a
// list, since batches are concatenated.
func requireListSchema(name string) error {
	data, err := schema.JSON(name)
	if err != nil {
		return err
	}
	var s struct {
		Type any `json:"type"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return err
	}
	if s.Type != "array" {
		return fmt.Errorf("schema %s describes %v, not a list; drafts are lists of entries", name, s.Type)
	}
	return nil
}

// draftEvent is one line of a batch's event log.
type draftEvent struct {
	TS     string `json:"ts"`
	RunID  string `json:"runId"`
	BatchN string `json:"batchN"`
	Event  string `json:"event"`
	Count  *int   `json:"count,omitempty"`
	Reason string `json:"reason,omitempty"`
}

func appendEvent(path string, event draftEvent) error {
	line, err := json.Marshal(event)
	if err != nil {
		return err
	}
	return atomicfile.Append(path, append(line, '\n'), 0o644)
}

// compareNumbers compares two strings of decimal digits by value.
func compareNumbers(a, b string) int {
	a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
	if len(a) != len(b) {
		return len(a) - len(b)
	}
	return strings.Compare(a, b)
}
