package githooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestMergeGeneratedHandIndexBothChanged(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	write := func(name, text string) string {
		if err := os.WriteFile(name, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return name
	}
	note := "---\ntype: practice\ntitle: Overview\ndescription: d\n---\n"
	base := write("base", note+"Base text.\n")
	ours := write("ours", note+"Our text.\n")
	theirs := write("theirs", note+"Their text.\n")
	now := time.Date(2026, 12, 1, 2, 3, 4, 0, time.UTC)
	msg, err := MergeGenerated(base, ours, theirs, "sub/.ai/kenkeep/nodes/go/index.md", now)
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(ours); string(got) != note+"Our text.\n" {
		t.Fatalf("ours changed: %q", got)
	}
	kept := filepath.Join("sub/.ai/kenkeep/.state/hand-edits/merge-20261201T020304.000000000Z/nodes/go/index.md")
	if got, err := os.ReadFile(kept); err != nil || string(got) != note+"Their text.\n" {
		t.Fatalf("theirs not kept at %s: %q, %v", kept, got, err)
	}
	if !strings.Contains(msg, "both sides changed this note") || !strings.Contains(msg, kept) {
		t.Fatalf("note does not say where theirs is: %q", msg)
	}
}

func TestMergeGeneratedLeavesOtherFiles(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	for _, n := range []string{"base", "ours", "theirs"} {
		if err := os.WriteFile(n, []byte("---\ntype: practice\n---\n"+n+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, name := range []string{".ai/kenkeep/GRAPH.md", "docs/index.md", ".ai/kenkeep/index.md"} {
		if msg, err := MergeGenerated("base", "ours", "theirs", name, time.Now()); err != nil || msg != "" {
			t.Fatalf("%s: %q, %v", name, msg, err)
		}
		if got, _ := os.ReadFile("ours"); string(got) != "---\ntype: practice\n---\nours\n" {
			t.Fatalf("%s: ours changed: %q", name, got)
		}
	}
}
