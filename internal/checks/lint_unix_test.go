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
	// kk doctor reports it too (docs/limits.md); before, its leaves-valid
	// check said every leaf file was valid.
	c := doctorCheck(t, f.doctor("1.0.0"), "leaves-valid")
	want := []string{".ai/kenkeep/nodes/topic/pipe.md: is not a regular file (a FIFO, a device or a socket); kk never opens it"}
	if c.Level != DoctorError || !slices.Equal(c.Details, want) {
		t.Errorf("doctor's leaves-valid: %+v, want an error naming %q", c, want)
	}
}
