package curate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// TraceKinds are the runs that keep a JSONL trace under
// .ai/kenkeep/_logs/<kind>/ (seed 001): kk-bootstrap (one file per batch,
// <run>__<N>.jsonl), kk-add (one per run, <run>.jsonl) and kk-curate
// (<run>.jsonl for the run, beside the <run>__<N>.jsonl drafts collect
// writes for each parallel batch).
var TraceKinds = []string{"bootstrap", "curator", "kk-add"}

// Trace is the JSONL trace of one run, or of one batch of a run.
type Trace struct {
	Kind string
	// Run is the run id, with "__<N>" for a batch.
	Run string
}

// ParseTrace reads a trace named as "<kind>:<run-id>[__<N>]"
// (bootstrap:2026-05-23-a__2).
func ParseTrace(s string) (Trace, error) {
	kind, run, ok := strings.Cut(s, ":")
	if !ok || !slices.Contains(TraceKinds, kind) {
		return Trace{}, fmt.Errorf("trace %q: give <kind>:<run-id>, kind one of %s", s, strings.Join(TraceKinds, ", "))
	}
	if err := CheckRunID(run); err != nil {
		return Trace{}, fmt.Errorf("trace %q: %w", s, err)
	}
	return Trace{Kind: kind, Run: run}, nil
}

// Path is the trace's file.
func (t Trace) Path(k *store.KB) string {
	return filepath.Join(k.LogsDir(), t.Kind, t.Run+".jsonl")
}

// Append adds one event to the trace: {"ts", "runId", "batchN" (for a
// batch), "event", then fields in key order}, one line written at once
// (O_APPEND), so concurrent writers never interleave.
func (t Trace) Append(k *store.KB, now time.Time, event string, fields map[string]any) error {
	run, batch, isBatch := strings.Cut(t.Run, "__")
	var b bytes.Buffer
	enc := func(v any) {
		data, _ := json.Marshal(v) // strings, numbers and lists of them
		b.Write(data)
	}
	b.WriteString(`{"ts":`)
	enc(now.UTC().Format(time.RFC3339Nano))
	b.WriteString(`,"runId":`)
	enc(run)
	if isBatch {
		b.WriteString(`,"batchN":`)
		enc(batch)
	}
	b.WriteString(`,"event":`)
	enc(event)
	keys := make([]string, 0, len(fields))
	for key := range fields {
		keys = append(keys, key)
	}
	slices.Sort(keys)
	for _, key := range keys {
		b.WriteByte(',')
		enc(key)
		b.WriteByte(':')
		enc(fields[key])
	}
	b.WriteString("}\n")
	p := t.Path(k)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	// A trace that is not a regular file (a named pipe) is refused at
	// once rather than waited on.
	return atomicfile.Append(p, b.Bytes(), 0o644)
}
