package txn_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// A generated file a person edited by hand is copied aside before a write
// replaces it, and noted for the face to say so; one that only differs by
// CRLF line endings or a byte order mark, or that the write leaves alone,
// is not. Without a branch index (a fresh clone) kk tells its own file by
// generating the tree before the change.
func TestHandEditOfAGeneratedFileIsKept(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	write := func(title string) string {
		t.Helper()
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "body of " + title, Folder: "go"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
		return title
	}
	edit := func(rel string, fn func([]byte) []byte) []byte {
		t.Helper()
		p := filepath.Join(k.Dir, filepath.FromSlash(rel))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data = fn(data)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return data
	}
	kept := func(want ...string) []store.HandEdit {
		t.Helper()
		got := k.TakeHandEdits()
		if len(got) != len(want) {
			t.Fatalf("hand edits noted: %v, want %v", got, want)
		}
		for i, e := range got {
			if e.File != want[i] || !strings.HasPrefix(e.Copy, ".state/hand-edits/cs-") || !strings.HasSuffix(e.Copy, "/"+want[i]) {
				t.Errorf("hand edit %d: %+v, want the file %s", i, e, want[i])
			}
		}
		return got
	}
	write("first")
	kept()

	// A line added to the folder's index.md and to ENTRY.md.
	index := edit("nodes/go/index.md", func(b []byte) []byte { return append(b, "A person's line.\n"...) })
	entry := edit("ENTRY.md", func(b []byte) []byte { return append(b, "Another line.\n"...) })
	write("second")
	got := kept("ENTRY.md", "nodes/go/index.md")
	for i, want := range [][]byte{entry, index} {
		data, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(got[i].Copy)))
		if err != nil || !bytes.Equal(data, want) {
			t.Errorf("the copy %s holds %q (%v), want the person's version", got[i].Copy, data, err)
		}
	}

	// CRLF line endings and a byte order mark are not an edit.
	edit("nodes/go/index.md", func(b []byte) []byte {
		return append([]byte(store.BOM), bytes.ReplaceAll(b, []byte("\n"), []byte("\r\n"))...)
	})
	write("third")
	kept()

	// No branch index: GRAPH.md edited by hand is told from the tree
	// before the change; ENTRY.md, as generated, is not taken for an edit.
	if err := os.RemoveAll(filepath.Join(k.StateDir(), "branches")); err != nil {
		t.Fatal(err)
	}
	edit("GRAPH.md", func(b []byte) []byte { return append(b, "\nA hand note.\n"...) })
	write("fourth")
	kept("GRAPH.md")

	// A note edited by hand leaves the generated files stale, not edited.
	if err := os.RemoveAll(filepath.Join(k.StateDir(), "branches")); err != nil {
		t.Fatal(err)
	}
	if leaf := edit("nodes/go/practice-first.md", func(b []byte) []byte {
		return bytes.Replace(b, []byte("description: d\n"), []byte("description: changed by hand\n"), 1)
	}); !bytes.Contains(leaf, []byte("changed by hand")) {
		t.Fatalf("the leaf was not edited: %s", leaf)
	}
	write("fifth")
	kept()

	// A note edited by hand AND a line added to a generated file: the
	// files are stale, kk cannot render what they were, and no commit
	// holds the edited one (there is no repository here): it is kept.
	// (Before, stale files were never taken for an edit, and the line was
	// lost.) The other generated files are as kk last wrote them.
	edit("nodes/go/practice-first.md", func(b []byte) []byte {
		return bytes.Replace(b, []byte("description: changed by hand\n"), []byte("description: changed again\n"), 1)
	})
	index = edit("nodes/go/index.md", func(b []byte) []byte { return append(b, "A line after a hand edit of a note.\n"...) })
	write("sixth")
	got = kept("nodes/go/index.md")
	if data, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(got[0].Copy))); err != nil || !bytes.Equal(data, index) {
		t.Errorf("the copy %s holds %q (%v), want the person's version", got[0].Copy, data, err)
	}
}
