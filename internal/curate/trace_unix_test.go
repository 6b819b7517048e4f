//go:build unix

package curate

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/store"
)

// A run's trace under _logs/ that is a named pipe held the curation run
// (the background drain too) for ever: its open for writing waited for a
// reader. It is refused at once, with an error naming it.
func TestTraceAppendIntoANamedPipe(t *testing.T) {
	k := store.New(t.TempDir())
	tr := Trace{Kind: TraceKinds[0], Run: "2026-05-23-a"}
	if err := os.MkdirAll(filepath.Dir(tr.Path(k)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(tr.Path(k), 0o600); err != nil {
		t.Fatal(err)
	}
	err := tr.Append(k, time.Unix(0, 0), "start", nil)
	if err == nil || !strings.Contains(err.Error(), tr.Path(k)) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Append into a named pipe: %v", err)
	}
}

// The same for a curator draft's event log.
func TestDraftEventIntoANamedPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "run__1.jsonl")
	if err := syscall.Mkfifo(p, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := appendEvent(p, draftEvent{Event: "drafted"}); err == nil || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("appendEvent into a named pipe: %v", err)
	}
}
