package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMergeKKIgnore: kk's block is written into a new .kkignore, replaced
// in place in one that has it, and added to one an earlier kk wrote with
// the folders bare; the user's own lines stay as they are.
func TestMergeKKIgnore(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".kkignore")
	block := kkignoreStart + "\n" + strings.Join(KKIgnoreDirs, "\n") + "\n" + kkignoreEnd + "\n"

	fresh, err := mergeKKIgnore(p)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(fresh), "# .kkignore:") || !strings.HasSuffix(string(fresh), "\n\n"+block) {
		t.Errorf("fresh file:\n%s", fresh)
	}

	old := "docs/archive/\n.claude/skills/\n.agents/skills/\n**/*.draft.md\n"
	if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := mergeKKIgnore(p)
	if want := "docs/archive/\n**/*.draft.md\n\n" + block; string(got) != want {
		t.Errorf("file without the block:\n%s\nwant:\n%s", got, want)
	}

	stale := "mine/\n" + kkignoreStart + "\n.claude/skills/\n" + kkignoreEnd + "\nafter/\n"
	if err := os.WriteFile(p, []byte(stale), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ = mergeKKIgnore(p)
	if want := "mine/\n" + block + "after/\n"; string(got) != want {
		t.Errorf("stale block:\n%s\nwant:\n%s", got, want)
	}
	if err := os.WriteFile(p, got, 0o644); err != nil {
		t.Fatal(err)
	}
	if again, _ := mergeKKIgnore(p); string(again) != string(got) {
		t.Errorf("a second merge changed the file:\n%s", again)
	}
}

// TestMergeKKIgnoreMarkerLines: kk's block in .kkignore is its start line
// and the first end line after it, each a whole line. A start line whose
// end line was deleted by hand got a second block appended, and the next
// init cut from the first start line to that block's end, deleting the
// user's patterns between; it is now refused, naming the file, and nothing
// is changed. A line merely beginning with the end marker is the user's.
// (The same rule as kenkeep's tests/lib/managed-block.test.ts for the
// files kk keeps a block in.)
func TestMergeKKIgnoreMarkerLines(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, ".kkignore")
	block := kkignoreStart + "\n" + strings.Join(KKIgnoreDirs, "\n") + "\n" + kkignoreEnd + "\n"

	broken := "mine/\n" + kkignoreStart + "\n.claude/skills/\nuser-pattern/\n# kk:endpoints are documented in docs/\n"
	if err := os.WriteFile(p, []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, err := mergeKKIgnore(p); err == nil || !strings.Contains(err.Error(), ".kkignore") {
		t.Fatalf("a start line without its end line: got %q, %v; want an error naming .kkignore", got, err)
	}

	commented := "mine/\n# kk:endpoints are documented in docs/\n" + kkignoreStart + "\n.claude/skills/\n" + kkignoreEnd + "\nafter/\n"
	if err := os.WriteFile(p, []byte(commented), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := mergeKKIgnore(p)
	if want := "mine/\n# kk:endpoints are documented in docs/\n" + block + "after/\n"; err != nil || string(got) != want {
		t.Errorf("a user line starting with the end marker:\n%s\nwant:\n%s (%v)", got, want, err)
	}
}
