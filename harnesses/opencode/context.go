package opencode

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/harness"
)

// ContextWriter and TranscriptExporter are the optional harness
// interfaces the hook runtime uses for OpenCode (see harness.ContextWriter
// and harness.TranscriptExporter).
type (
	ContextWriter      = harness.ContextWriter
	TranscriptExporter = harness.TranscriptExporter
)

// contextHeader opens the context file.
const contextHeader = "<!-- Written by kk at the start of every OpenCode session (kk hook session-start --harness opencode); not tracked by git. Edits are lost. -->"

// WriteContext implements ContextWriter: it writes the session-start text
// into .ai/kenkeep/.state/opencode-context.md, which kk's entry in
// opencode.json "instructions" makes OpenCode read. The file is written
// only when its content changes.
func (*Adapter) WriteContext(root, text string) error {
	kbDir := filepath.Join(root, ".ai", "kenkeep")
	if fi, err := os.Stat(kbDir); err != nil || !fi.IsDir() {
		return fmt.Errorf("no knowledge base at %s: %s is missing", root, kbDir)
	}
	p := filepath.Join(root, filepath.FromSlash(contextFile))
	data := []byte(contextHeader + "\n\n" + strings.TrimRight(text, "\n") + "\n")
	if old, err := os.ReadFile(p); err == nil && bytes.Equal(old, data) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(p, data, 0o644)
}
