//go:build unix

package harness_test

import (
	"context"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/harness"
)

// TestRunLogIntoANamedPipe: a run's log file that is a named pipe (the
// drain's log under .ai/kenkeep/_logs/) is refused at once with an error
// naming it, appended to or emptied first alike. Before, opening it for
// writing waited for a reader, for ever when none came, and the run (a
// background drain) hung. The guard below only turns such a hang into a
// failure; it measures nothing.
func TestRunLogIntoANamedPipe(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "drain.log")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, truncate := range []bool{false, true} {
		done := make(chan error, 1)
		go func() {
			_, err := harness.Run(context.Background(), harness.Child{Name: "sh", Path: "/bin/sh", Args: []string{"-c", "echo hi"}, LogFile: fifo, TruncateLog: truncate})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), fifo) || !strings.Contains(err.Error(), "not a regular file") {
				t.Fatalf("truncate=%v: %v", truncate, err)
			}
		case <-time.After(time.Minute):
			t.Fatalf("truncate=%v: Run hung opening the named pipe %s", truncate, fifo)
		}
	}
}
