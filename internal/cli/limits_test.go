package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/hooks"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
)

// TestLimitsDoc: the input caps docs/limits.md gives are the ones the code
// applies.
func TestLimitsDoc(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "docs", "limits.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, row := range []string{
		"| `--input` (a parameter object, changeset, plan, curator actions, proposals, phrasings) | " + byteSize(op.MaxParams) + " |",
		"| a node body (`--body-file`, or standard input of `kk node write`) | " + byteSize(node.MaxSize) + " |",
		"| `--body-file` of `kk graph create`/`update` (the text itself is then at most " + byteSize(graph.MaxKnowledgeBytes) + " after trimming) | " + byteSize(op.MaxParams) + " |",
		"| the document of `kk validate` (a symbol manifest may be large) | " + byteSize(maxDocumentBytes) + " |",
		"| `kk client --body-file` or standard input (the note posted) | " + byteSize(httpapi.DefaultMaxBody) + " |",
		"| `kk session-log stage-live --transcript-excerpt` when it names a file (a folder is refused; the file, or the text given instead, must be UTF-8 without NUL) | " + byteSize(hooks.MaxLogTranscript) + " |",
		"| `kk client --token-file` | " + byteSize(maxTokenBytes) + " |",
		"| a hook's payload on standard input | " + byteSize(int64(hooks.Defaults().MaxPayload)) + " |",
		"| one leaf file | " + byteSize(node.MaxSize) + " |",
		"| knowledge | " + byteSize(graph.MaxKnowledgeBytes) + " after trimming |",
		"| changelog summary | " + byteSize(graph.MaxSummaryBytes) + " |",
		"16 MiB (from a line start", // hooks' transcript window, checked in internal/hooks
		"a session log keeps at most " + byteSize(hooks.MaxLogTranscript),
	} {
		if !strings.Contains(strings.Join(strings.Fields(doc), " "), strings.Join(strings.Fields(row), " ")) {
			t.Errorf("docs/limits.md does not say %q", row)
		}
	}
}
