//go:build unix

package checks

import (
	"slices"
	"syscall"
	"testing"
	"time"
)

// A FIFO named like a leaf is never opened (it would block the reader
// forever) and lint reports it.
func TestLintIrregularFile(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	if err := syscall.Mkfifo(f.k.NodePath("topic/pipe.md"), 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	done := make(chan *LintReport)
	go func() { done <- f.lint() }()
	select {
	case r := <-done:
		want := []string{"error .ai/kenkeep/nodes/topic/pipe.md: is not a regular file (a FIFO, a device or a socket); kk never opens it"}
		if got := lintLines(r, ruleIrregularFile); !slices.Equal(got, want) {
			t.Errorf("irregular-file: %q, want %q", got, want)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("lint blocked on the FIFO")
	}
}
