//go:build unix

package usage

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// A ledger that is a named pipe held the capture hook to its deadline
// (its open for writing waited for a reader): it is refused at once, with
// an error naming it.
func TestRecordIntoANamedPipe(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(filepath.Dir(Path(k)), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(Path(k), 0o600); err != nil {
		t.Fatal(err)
	}
	err := Record(k, Entry{Document: "practice-a", Type: TypeLeaf, SessionID: "s1", UsedAt: "2026-01-01T00:00:00Z"})
	if err == nil || !strings.Contains(err.Error(), Path(k)) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("Record into a named pipe: %v", err)
	}
}
