package hooks

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/harness"
	"github.com/kk-project/kk/internal/usage"
)

// Ported from kenkeep v1.17 tests/lib/usage.test.ts: which paths a session
// read are knowledge (a leaf by its id, a folder index by its path under
// .ai/kenkeep), and the ledger's per-session counts that only grow. The
// capture end to end is TestCaptureRecordsUsage.
func TestKenkeepLibUsageClassify(t *testing.T) {
	k := newKB(t)
	leaf := filepath.Join(k.NodesDir(), "topic", "sub", "practice-foo.md")
	index := filepath.Join(k.NodesDir(), "topic", "sub", "index.md")
	writeFile(t, leaf, "# foo\n")
	writeFile(t, index, "# index\n")
	writeFile(t, filepath.Join(k.Root, "outside", "README.md"), "# r\n")
	nodes, err := filepath.EvalSymlinks(k.NodesDir())
	if err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{
		leaf:  "leaf practice-foo",
		index: "index nodes/topic/sub/index.md",
		".ai/kenkeep/nodes/topic/sub/practice-foo.md": "leaf practice-foo",
		".ai/kenkeep/nodes/topic/sub/index.md":        "index nodes/topic/sub/index.md",
		"nodes/topic/sub/practice-foo.md":             "leaf practice-foo",
		filepath.Join(k.Root, "outside", "README.md"): "",
		"some/relative/file.md":                       "",
		"nodes/../../README.md":                       "",
		"README.md":                                   "",
	} {
		e, ok := ledgerEntry(k, nodes, k.Root, p)
		got := ""
		if ok {
			got = e.Type + " " + e.Document
		}
		if got != want {
			t.Errorf("ledgerEntry(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestKenkeepLibUsageOnlyGrows(t *testing.T) {
	k := newKB(t)
	for _, id := range []string{"practice-a", "practice-b", "practice-x"} {
		writeFile(t, filepath.Join(k.NodesDir(), "t", id+".md"), "# "+id+"\n")
	}
	reads := func(ids ...string) []harness.Read {
		var out []harness.Read
		for _, id := range ids {
			out = append(out, harness.Read{Path: filepath.Join(k.NodesDir(), "t", id+".md")})
		}
		return out
	}
	count := func() int {
		t.Helper()
		entries, bad, err := usage.Read(k)
		if err != nil || len(bad) != 0 {
			t.Fatal(err, bad)
		}
		return len(entries)
	}
	for _, step := range []struct {
		session string
		reads   []harness.Read
		want    int
	}{
		{"s1", reads("practice-a", "practice-a", "practice-b"), 3}, // one line per read
		{"s1", reads("practice-a", "practice-a", "practice-b"), 3}, // the same reads again: nothing
		{"s1", reads("practice-a", "practice-a", "practice-a", "practice-b"), 4},
		{"s1", reads("practice-a"), 4}, // fewer reads (a compacted transcript): nothing removed
		{"s2", reads("practice-x"), 5},
		{"s3", reads("practice-x"), 6}, // each session counts on its own
	} {
		if _, err := recordReads(k, k.Root, step.reads, step.session, "2026-06-11T00:00:00.000Z"); err != nil {
			t.Fatal(err)
		}
		if got := count(); got != step.want {
			t.Fatalf("after %s reading %d: %d ledger lines, want %d", step.session, len(step.reads), got, step.want)
		}
	}
	if _, err := os.Stat(usage.Path(k)); err != nil {
		t.Fatal(err)
	}
}
