package harness_test

import (
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/harness"
)

// TestKenkeepMarkdownPaths: the .md paths a shell command names, for the
// usage ledger: in order, repeats kept, quotes and separators left out,
// comma-joined arguments split, absolute paths kept, .md5 and the like not
// taken (kenkeep's read-extract.test.ts, extractCommandMarkdownCandidates).
func TestKenkeepMarkdownPaths(t *testing.T) {
	for _, c := range []struct {
		cmd  string
		want []string
	}{
		{"cat .ai/kenkeep/nodes/a.md nodes/b.md .ai/kenkeep/nodes/a.md", []string{".ai/kenkeep/nodes/a.md", "nodes/b.md", ".ai/kenkeep/nodes/a.md"}},
		{`sed -n '1,40p' "nodes/x.md"; head nodes/y.md`, []string{"nodes/x.md", "nodes/y.md"}},
		{"cat nodes/a.md,nodes/b.md", []string{"nodes/a.md", "nodes/b.md"}},
		{"cat /repo/.ai/kenkeep/nodes/z.md | rg foo", []string{"/repo/.ai/kenkeep/nodes/z.md"}},
		{"sha256sum nodes/checksum.md5", nil},
		{"", nil},
		{"ls -la && git status", nil},
	} {
		if got := harness.MarkdownPaths(c.cmd); !slices.Equal(got, c.want) {
			t.Errorf("%q: %q, want %q", c.cmd, got, c.want)
		}
	}
}
