package checks

// Facts of kenkeep's tests/doctor-dangling.test.ts (v1.17.0): which
// derived_from references doctor's derived-from check counts as dangling.

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestKenkeepDanglingDerivedFrom(t *testing.T) {
	t.Run("every reference resolves", func(t *testing.T) {
		f := newLintKB(t)
		f.write("_sessions/session-a.md", "x")
		if err := os.MkdirAll(filepath.Join(f.k.Root, "docs"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(f.k.Root, "docs", "auth.md"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
		f.leaf(lintLeaf{id: "practice-a", derived: []string{"session-a.md", "docs/auth.md"}})
		if c := doctorCheck(t, f.doctor("1.0.0"), "derived-from"); c.Level != DoctorOK || len(c.Details) != 0 {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("repository paths and session file names that do not exist, across leaves", func(t *testing.T) {
		f := newLintKB(t)
		f.write("_sessions/session-a.md", "x")
		f.leaf(lintLeaf{id: "practice-a", derived: []string{"session-a.md", "docs/missing.md"}})
		f.leaf(lintLeaf{id: "practice-b", derived: []string{"session-missing.md"}})
		c := doctorCheck(t, f.doctor("1.0.0"), "derived-from")
		want := []string{
			".ai/kenkeep/nodes/practice-a.md: docs/missing.md",
			".ai/kenkeep/nodes/practice-b.md: session-missing.md",
		}
		if c.Level != DoctorWarn || !slices.Equal(c.Details, want) {
			t.Fatalf("%+v", c)
		}
	})
	t.Run("no nodes folder", func(t *testing.T) {
		f := newLintKB(t)
		if err := os.RemoveAll(f.k.NodesDir()); err != nil {
			t.Fatal(err)
		}
		if c := doctorCheck(t, f.doctor("1.0.0"), "derived-from"); c.Level != DoctorOK || len(c.Details) != 0 {
			t.Fatalf("%+v", c)
		}
	})
}
