package store

import "testing"

// TestMergeToolLeftover checks git mergetool's names for its temporaries
// and its backup (git-mergetool(1)), and that no note's file, named for a
// lower-case id, nor a file merely like them, is taken for one.
func TestMergeToolLeftover(t *testing.T) {
	for _, c := range []struct {
		name, of, mark string
	}{
		{"practice-a_BASE_1234.md", "practice-a.md", "BASE"},
		{"practice-a_LOCAL_7.md", "practice-a.md", "LOCAL"},
		{"practice-a_REMOTE_98765.md", "practice-a.md", "REMOTE"},
		{"practice-a_BACKUP_1.md", "practice-a.md", "BACKUP"},
		{"index_BASE_42.md", "index.md", "BASE"},
		{"notes_BASE_42", "notes", "BASE"},
		{"practice-a.md.orig", "practice-a.md", "orig"},
		{"practice-a.md", "", ""},
		{"practice-base-12.md", "", ""},
		{"practice-a_BASE_.md", "", ""},
		{"practice-a_BASE_12x.md", "", ""},
		{"_BASE_12.md", "", ""},
		{"practice-a_base_12.md", "", ""},
		{".orig", "", ""},
	} {
		of, mark, ok := MergeToolLeftover(c.name)
		if ok != (c.mark != "") || of != c.of || mark != c.mark {
			t.Errorf("MergeToolLeftover(%q) = %q, %q, %v; want %q, %q", c.name, of, mark, ok, c.of, c.mark)
		}
	}
}
