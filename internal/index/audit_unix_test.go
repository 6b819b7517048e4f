//go:build unix

package index

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// An audit log that is a named pipe held every write of the knowledge
// base for ever (kk node write, the MCP write tools), with the writer
// lock taken: its open for writing waited for a reader. It is refused at
// once, with an error naming it.
func TestAppendAuditIntoANamedPipe(t *testing.T) {
	k := store.New(t.TempDir())
	path := AuditPath(k, "main")
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Fatal(err)
	}
	err := AppendAudit(k, "main", AuditRecord{Changeset: "c", Actor: "a", At: "2026-01-01T00:00:00Z", Source: "cli", Branch: "main"})
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "not a regular file") {
		t.Fatalf("AppendAudit into a named pipe: %v", err)
	}
}
