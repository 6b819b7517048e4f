package curate

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/store"
)

func lines(n int, prefix string) string {
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(prefix + string(rune('a'+i)))
	}
	return b.String()
}

func writeConflict(t *testing.T, k *store.KB, id, detectedAt, target, kind, body, confidence string) {
	t.Helper()
	a := contracts.CuratorAction{Action: "contradict", CandidateOrigin: "docs/" + id + ".md", Rationale: "why " + id,
		ProposedNode: &contracts.ProposedNode{Title: "T " + id, Type: kind, Tags: []string{}, Body: body, Confidence: confidence, RelatesTo: []string{}, DependsOn: []string{}}}
	if target != "" {
		a.TargetNodeID = &target
	}
	data, err := RenderConflict(Conflict{ID: id, RunID: "run", DetectedAt: detectedAt, Action: a})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(k.ConflictsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.ConflictsDir(), id+".md"), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestPrepareGolden(t *testing.T) {
	k := newKB(t)
	ctx := context.Background()
	for _, in := range []contracts.NodeInput{
		{Type: "practice", Title: "A", Description: "Practice A", Tags: []string{"x"}, Folder: "topic", DerivedFrom: []string{"docs/a.md"}, Body: lines(10, "line ") + "\n"},
		{Type: "map", Title: "B", Description: "Map B", Body: lines(10, "row ") + "\n"},
	} {
		if _, err := WriteNode(ctx, k, in, WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// One changed line, high confidence: accept. (practice-a's body on
	// disk also holds its generated Citations section, which is ignored.)
	writeConflict(t, k, "c1", "2026-05-23T12:00:00.000Z", "practice-a", "practice", strings.Replace(lines(10, "line "), "line c", "line C", 1), "high")
	// Everything changed: reject. Same target, earlier: comes first.
	writeConflict(t, k, "c2", "2026-05-23T11:00:00.000Z", "practice-a", "practice", lines(10, "other "), "medium")
	// Two changed lines of ten, medium confidence: skip.
	writeConflict(t, k, "c3", "2026-05-23T12:00:00.000Z", "map-b", "map", strings.Replace(strings.Replace(lines(10, "row "), "row a", "row A", 1), "row j", "row J", 1), "medium")
	// A target that is not in the tree: skip.
	writeConflict(t, k, "c4", "2026-05-23T12:00:00.000Z", "practice-gone", "practice", "x", "high")
	// No target: each its own group, at the end.
	writeConflict(t, k, "c5", "2026-05-23T12:00:00.000Z", "", "practice", "y", "high")
	writeConflict(t, k, "c6", "2026-05-23T10:00:00.000Z", "", "map", "z", "high")
	// Decided conflicts are left out.
	writeConflict(t, k, "c7", "2026-05-23T12:00:00.000Z", "map-b", "map", "w", "high")
	done := filepath.Join(k.ConflictsDir(), "c7.md")
	data, _ := os.ReadFile(done)
	if err := os.WriteFile(done, []byte(strings.Replace(string(data), "status: pending", "status: kept", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(k.ConflictsDir(), "README.txt"), []byte("not a conflict"), 0o644); err != nil {
		t.Fatal(err)
	}

	got, err := Prepare(k, "")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, c := range got {
		order = append(order, c.ID+":"+c.Default)
	}
	if strings.Join(order, " ") != "c3:s c2:n c1:y c4:s c6:s c5:s" {
		t.Errorf("order and defaults: %v", order)
	}
	out, _ := json.MarshalIndent(got, "", "  ")
	golden(t, "prepare.golden.json", append(out, '\n'))

	// An unreadable conflict file fails the whole call, naming the file.
	if err := os.WriteFile(filepath.Join(k.ConflictsDir(), "broken.md"), []byte("---\nid: [\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Prepare(k, ""); err == nil || !strings.Contains(err.Error(), ".ai/kenkeep/conflicts/broken.md: ") {
		t.Fatalf("err %v", err)
	}
}

func TestPrepareEmpty(t *testing.T) {
	k := newKB(t)
	got, err := Prepare(k, "")
	if err != nil || len(got) != 0 {
		t.Fatalf("%v %v", got, err)
	}
}

func TestLineDiff(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"", "", 0},
		{"a\nb\nc", "a\nb\nc\n\n", 0},
		{"a\nb\nc", "a\nB\nc", 2},
		{"a\nb\nc", "", 3},
		{"a\nb\nc\nd", "b\nc\nd\ne", 2},
		{"x\na\ny\nb\nz", "a\nb", 3},
	} {
		if got := lineDiff(bodyLines(tc.a), bodyLines(tc.b)); got != tc.want {
			t.Errorf("lineDiff(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestConflictRoundTrip(t *testing.T) {
	target := "practice-x"
	a := contracts.CuratorAction{Action: "contradict", CandidateOrigin: "o:practice:0", TargetNodeID: &target, Rationale: "because: reasons",
		ProposedNode: &contracts.ProposedNode{Title: "X: y", Type: "practice", Body: "## Heading\n\nbody\n", Confidence: "low"}}
	data, err := RenderConflict(Conflict{ID: "r-1", RunID: "r", DetectedAt: "2026-05-23T12:00:00.000Z", Action: a})
	if err != nil {
		t.Fatal(err)
	}
	c, err := ParseConflict("r-1.md", data)
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "r-1" || c.Status != "pending" || *c.TargetNodeID != target || c.ProposedTitle != "X: y" || c.Rationale != "because: reasons" || c.ProposedBody != "## Heading\n\nbody" {
		t.Fatalf("%+v", c)
	}
	if _, err := ParseConflict("x.md", []byte("no front matter")); err == nil {
		t.Fatal("accepted a file without front matter")
	}
}
