package hooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/indexfiles"
)

// Ported from kenkeep v1.17 tests/lib/session-start.test.ts: the context
// carries the navigation directive exactly once, whether ENTRY.md embeds it
// (kk's and kenkeep's do), lacks it (written by hand), is missing (the
// stub), or is kenkeep's legacy INDEX.md. The stale warning, the curation
// nudge and the queue counts are TestSessionStartStaleness,
// TestSessionStartCurationNudge and TestReadQueueState.
func TestKenkeepLibSessionStartDirectiveOnce(t *testing.T) {
	k := newKB(t)
	count := func(text string) int {
		return strings.Count(text, "> kk navigation:") + strings.Count(text, "> kenkeep navigation:")
	}
	write := func(name, src string) {
		t.Helper()
		writeFile(t, filepath.Join(k.Dir, name), src)
	}
	// The stub of a knowledge base without ENTRY.md.
	if err := os.Remove(k.EntryPath()); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	text := sessionStartText(t, k, t0)
	if count(text) != 1 || !strings.Contains(text, "has no ENTRY.md yet") {
		t.Errorf("stub context (%d directives):\n%s", count(text), text)
	}
	// kenkeep's legacy catalog, INDEX.md, frontmatter stripped.
	write("INDEX.md", "---\nschema_version: 2\nnodes_hash: 'sha256:abc'\nnode_count: 1\n---\n# kenkeep\n\n## Practices\n- practice-foo\n")
	text = sessionStartText(t, k, t0)
	if count(text) != 1 || !strings.Contains(text, "- practice-foo") || strings.Contains(text, "node_count") || strings.Contains(text, "no ENTRY.md yet") {
		t.Errorf("legacy INDEX.md context (%d directives):\n%s", count(text), text)
	}
	// ENTRY.md wins over INDEX.md; one that embeds kenkeep's directive gets
	// no second one, one written by hand gets kk's.
	write("ENTRY.md", "---\nschema_version: 3\nnodes_hash: 'sha256:abc'\nnode_count: 1\n---\n# kenkeep\n\n> kenkeep navigation: this catalog is a map.\n\n## Branches\n_None._\n")
	text = sessionStartText(t, k, t0)
	if count(text) != 1 || strings.Contains(text, "practice-foo") {
		t.Errorf("kenkeep ENTRY.md context (%d directives):\n%s", count(text), text)
	}
	write("ENTRY.md", "# kenkeep\n\nHand written.\n")
	text = sessionStartText(t, k, t0)
	if count(text) != 1 || !strings.Contains(text, "Hand written.\n\n"+indexfiles.NavigationDirective) {
		t.Errorf("hand-written ENTRY.md context (%d directives):\n%s", count(text), text)
	}
}
