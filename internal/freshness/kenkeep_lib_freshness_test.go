package freshness

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// Ported from kenkeep v1.17 tests/lib/freshness.test.ts: which references
// make a committed node stale, over real git histories. Each case commits
// leaves written as kenkeep writes them.

func kenkeepLeaf(id string, derived []string, body string) string {
	d := "[]"
	if len(derived) > 0 {
		d = "\n  - '" + strings.Join(derived, "'\n  - '") + "'"
	}
	return "---\nkk_schema_version: 3\nkk_id: " + id + "\ntitle: " + id + "\ntype: practice\ndescription: s\ntags: []\n" +
		"kk_derived_from: " + d + "\nkk_relates_to: []\nkk_confidence: high\n---\n" + body + "\n"
}

func nodeFile(id string) string { return ".ai/kenkeep/nodes/topic/" + id + ".md" }

func TestKenkeepLibFreshnessFlagsALaterChange(t *testing.T) {
	ctx := context.Background()
	k := repo(t)
	commitAll(t, k, map[string]string{"src/foo.ts": "v1"}, "foo v1")
	commitAll(t, k, map[string]string{nodeFile("practice-a"): kenkeepLeaf("practice-a", nil, "Describes `src/foo.ts` behavior.")}, "add a")
	commitAll(t, k, map[string]string{"src/foo.ts": "v2"}, "foo v2")
	rep := Check(ctx, k, Options{})
	if !rep.Available || rep.FlaggedCount != 1 || rep.Flagged[0].ID != "practice-a" ||
		!slices.Equal(rep.Flagged[0].ChangedPaths, []string{"src/foo.ts"}) {
		t.Fatalf("report %+v", rep)
	}
	if len(rep.PerBranch) != 1 || rep.PerBranch[0].Branch != "topic" || rep.PerBranch[0].Flagged != 1 {
		t.Errorf("per branch %+v, want [{topic 1}]", rep.PerBranch)
	}
}

func TestKenkeepLibFreshnessIgnoresEarlierChanges(t *testing.T) {
	k := repo(t)
	commitAll(t, k, map[string]string{"src/bar.ts": "v1"}, "bar v1")
	commitAll(t, k, map[string]string{"src/bar.ts": "v2"}, "bar v2")
	commitAll(t, k, map[string]string{nodeFile("practice-b"): kenkeepLeaf("practice-b", nil, "Describes `src/bar.ts`.")}, "add b")
	if rep := Check(context.Background(), k, Options{}); !rep.Available || rep.FlaggedCount != 0 {
		t.Errorf("report %+v, want nothing flagged", rep)
	}
}

func TestKenkeepLibFreshnessFollowsDerivedFrom(t *testing.T) {
	k := repo(t)
	commitAll(t, k, map[string]string{"src/baz.ts": "v1"}, "baz v1")
	commitAll(t, k, map[string]string{nodeFile("practice-c"): kenkeepLeaf("practice-c", []string{"src/baz.ts"}, "# x")}, "add c")
	commitAll(t, k, map[string]string{"src/baz.ts": "v2"}, "baz v2")
	if rep := Check(context.Background(), k, Options{}); rep.FlaggedCount != 1 || rep.Flagged[0].ID != "practice-c" {
		t.Errorf("report %+v, want practice-c flagged", rep)
	}
}

func TestKenkeepLibFreshnessIgnoresURLsSessionLogsAndUntracked(t *testing.T) {
	k := repo(t)
	commitAll(t, k, map[string]string{"src/real.ts": "v1"}, "real v1")
	commitAll(t, k, map[string]string{nodeFile("practice-d"): kenkeepLeaf("practice-d",
		[]string{"https://example.com/x", "2026-01-01-abc.md"},
		"See https://example.com/x and `_sessions/abc.md` and `src/missing.ts`.")}, "add d")
	commitAll(t, k, map[string]string{"src/real.ts": "v2"}, "real v2")
	if rep := Check(context.Background(), k, Options{}); rep.FlaggedCount != 0 {
		t.Errorf("report %+v, want nothing flagged", rep)
	}
}

func TestKenkeepLibFreshnessIgnoresKnowledgeBaseFiles(t *testing.T) {
	k := repo(t)
	commitAll(t, k, map[string]string{"src/x.ts": "v1"}, "x v1")
	commitAll(t, k, map[string]string{nodeFile("practice-e"): kenkeepLeaf("practice-e", nil,
		"Relates to [other](.ai/kenkeep/nodes/topic/practice-other.md).")}, "add e")
	commitAll(t, k, map[string]string{".ai/kenkeep/nodes/topic/practice-other.md": "changed"}, "touch other")
	if rep := Check(context.Background(), k, Options{}); rep.FlaggedCount != 0 {
		t.Errorf("report %+v, want nothing flagged", rep)
	}
}

func TestKenkeepLibFreshnessSkipsUncommittedNodes(t *testing.T) {
	k := repo(t)
	commitAll(t, k, map[string]string{"src/foo.ts": "v1"}, "foo v1")
	commitAll(t, k, map[string]string{"src/foo.ts": "v2"}, "foo v2")
	p := filepath.Join(k.Root, filepath.FromSlash(nodeFile("practice-uncommitted")))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(kenkeepLeaf("practice-uncommitted", nil, "Describes `src/foo.ts`.")), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := Check(context.Background(), k, Options{}); rep.FlaggedCount != 0 || rep.ConsideredNodes != 0 {
		t.Errorf("report %+v, want nothing considered", rep)
	}
}

func TestKenkeepLibFreshnessOutsideGitAndEmpty(t *testing.T) {
	plain := store.New(t.TempDir())
	p := plain.NodePath("topic/practice-z.md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(kenkeepLeaf("practice-z", nil, "Describes `src/foo.ts`.")), 0o644); err != nil {
		t.Fatal(err)
	}
	if rep := Check(context.Background(), plain, Options{}); rep.Available || rep.FlaggedCount != 0 {
		t.Errorf("outside git: %+v, want unavailable", rep)
	}
	k := repo(t)
	commitAll(t, k, map[string]string{"src/foo.ts": "v1"}, "foo v1")
	if rep := Check(context.Background(), k, Options{}); rep.Available || rep.FlaggedCount != 0 {
		t.Errorf("empty knowledge base: %+v, want unavailable", rep)
	}
}
