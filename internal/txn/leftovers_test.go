package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A write removes the temporary files a killed writer left in the tree
// when that writer's journal is there too (a transaction writes its
// journal before its first temporary file); a stray temporary file
// without a journal (another tool's, an older kk's) is left to kk index
// rebuild, which kk doctor names, so that a write does not walk every
// folder of the tree.
func TestLeftoverTemporaryFiles(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	write := func(title string) { t.Helper(); writePractice(t, k, title) }
	write("One")
	stray := filepath.Join(k.NodesDir(), "f", ".practice-x.md.tmp-1")
	if err := os.WriteFile(stray, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}

	write("Two")
	if !present(stray) {
		t.Fatal("a write without a left journal walked the tree and removed a stray temporary file")
	}
	if left, err := txn.Leftovers(k); err != nil || len(left) != 1 {
		t.Fatalf("Leftovers = %v, %v; want the stray file", left, err)
	}

	// A journal left by a writer killed before its first write: the next
	// write rolls it back (nothing to undo) and sweeps the tree.
	if err := os.MkdirAll(txn.JournalDir(k), 0o755); err != nil {
		t.Fatal(err)
	}
	journal := filepath.Join(txn.JournalDir(k), "cs-killed.journal.tmp")
	if err := os.WriteFile(journal, []byte("{"), 0o644); err != nil {
		t.Fatal(err)
	}
	write("Three")
	if present(stray) || present(journal) {
		t.Fatal("a write after a killed writer's journal left its temporary files")
	}

	if err := os.WriteFile(stray, []byte("half"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if present(stray) {
		t.Fatal("kk index rebuild left a stray temporary file")
	}
	if left, err := txn.Leftovers(k); err != nil || len(left) != 0 {
		t.Fatalf("Leftovers after rebuild = %v, %v", left, err)
	}
}

// A recovery killed partway leaves what the next writer needs to finish
// it: the journal that makes it walk the tree goes only after the
// temporary files are removed. (A journal dropped before the walk, a kill
// between the two, left a temporary file no later write removed; the
// kk serve soak found one, .index.md.tmp-…, untracked in git status.)
func TestRecoveryKilledPartwayLeavesNoTemporaryFileBehind(t *testing.T) {
	t.Parallel()
	for _, point := range []string{"rolled back", "swept"} {
		t.Run(point, func(t *testing.T) {
			k := optest.NewKB(t)
			write := func(title string) { t.Helper(); writePractice(t, k, title) }
			write("One")
			stray := filepath.Join(k.NodesDir(), "f", ".index.md.tmp-2297191693")
			if err := os.WriteFile(stray, []byte("half"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(txn.JournalDir(k), 0o755); err != nil {
				t.Fatal(err)
			}
			journal := filepath.Join(txn.JournalDir(k), "cs-killed.journal.tmp")
			if err := os.WriteFile(journal, []byte("{"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := txn.RecoverStoppedAt(k, point); err != nil {
				t.Fatal(err)
			}
			if present(stray) && !present(journal) {
				t.Fatalf("the recovery stopped at %q dropped the journal and left the temporary file", point)
			}
			write("Two")
			if present(stray) || present(journal) {
				t.Fatalf("after a recovery stopped at %q the next write left: temporary file %v, journal %v", point, present(stray), present(journal))
			}
		})
	}
}

// writePractice writes a practice leaf titled title in folder f of k.
func writePractice(t *testing.T, k *store.KB, title string) {
	t.Helper()
	in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b", Folder: "f"}
	if _, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
}

// present reports whether a file is at p.
func present(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}
