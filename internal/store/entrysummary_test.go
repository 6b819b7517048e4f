package store

import (
	"os"
	"testing"
)

// ENTRY.md left with git's conflict markers (a merge where kk's merge
// driver is not set up): the summary comes from the sides of the conflict,
// so that the regeneration resolving it keeps the person's summary.
func TestEntrySummaryOfAConflictedEntry(t *testing.T) {
	head := "---\nschema_version: 3\n"
	for _, c := range []struct{ name, text, want string }{
		{"outside the conflict", head + "<<<<<<< HEAD\nnodes_hash: 'a'\n=======\nnodes_hash: 'b'\n>>>>>>> x\nsummary: Kept\n---\n", "Kept"},
		{"added by theirs", head + "<<<<<<< HEAD\nnode_count: 1\n=======\nnode_count: 2\nsummary: Theirs\n>>>>>>> x\n---\n", "Theirs"},
		{"added by ours", head + "<<<<<<< HEAD\nnode_count: 1\nsummary: Ours\n=======\nnode_count: 2\n>>>>>>> x\n---\n", "Ours"},
		{"both changed", head + "<<<<<<< HEAD\nsummary: Ours\n=======\nsummary: Theirs\n>>>>>>> x\n---\n", "Ours"},
		{"theirs changed it (diff3)", head + "<<<<<<< HEAD\nsummary: Old\n||||||| base\nsummary: Old\n=======\nsummary: New\n>>>>>>> x\n---\n", "New"},
		{"theirs removed it (diff3)", head + "<<<<<<< HEAD\nnode_count: 1\nsummary: Old\n||||||| base\nnode_count: 0\nsummary: Old\n=======\nnode_count: 2\n>>>>>>> x\n---\n", ""},
		{"ours changed it (diff3)", head + "<<<<<<< HEAD\nsummary: Mine\n||||||| base\nsummary: Old\n=======\nsummary: Old\nnode_count: 2\n>>>>>>> x\n---\n", "Mine"},
		{"with CRLF", "---\r\nschema_version: 3\r\n<<<<<<< HEAD\r\nnode_count: 1\r\n=======\r\nnode_count: 2\r\n>>>>>>> x\r\nsummary: Crlf\r\n---\r\n", "Crlf"},
	} {
		k := New(t.TempDir())
		if err := os.MkdirAll(k.Dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(k.EntryPath(), []byte(c.text), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := k.EntrySummary(); got != c.want {
			t.Errorf("%s: EntrySummary() = %q, want %q", c.name, got, c.want)
		}
	}
}
