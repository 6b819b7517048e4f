package mcpserver

import (
	"fmt"
	"math/bits"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/op"
)

// TestLimitsDoc: the MCP section of docs/limits.md gives the limits the
// code applies.
func TestLimitsDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "limits.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(b), "\n## MCP\n")
	if !ok {
		t.Fatal(`docs/limits.md has no "## MCP" section`)
	}
	section, _, _ = strings.Cut(section, "\n## ")
	wait := drainTimeout.String()
	if drainTimeout == time.Minute {
		wait = "1 minute"
	}
	for name, want := range map[string]string{
		"MaxFrameBytes":    "| one line (one message), its newline excluded | " + sizeText(MaxFrameBytes) + " |",
		"MaxDepth":         fmt.Sprintf("| nesting of objects and arrays | %d levels", MaxDepth),
		"idSearchBytes":    "its first " + sizeText(idSearchBytes) + " |",
		"maxExactID":       fmt.Sprintf("at most 2^%d in magnitude", bits.Len64(maxExactID)-1),
		"drainTimeout":     "| wait for answers after the client closes stdin | " + wait + " |",
		"maxResourceBytes": "| a resource read (ENTRY.md, a folder's index.md, a node) | " + sizeText(maxResourceBytes) + " |",
		"op.MaxQuoted":     fmt.Sprintf("| a value quoted back in an error message | its first %d bytes |", op.MaxQuoted),
	} {
		if !strings.Contains(section, want) {
			t.Errorf("docs/limits.md, MCP: %s is not documented as %q", name, want)
		}
	}
}
