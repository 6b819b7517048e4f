//go:build unix

package cli

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// TestCommitRightAfterAKilledWrite: a kk write killed after it wrote the
// generated files (ENTRY.md, GRAPH.md, the folder's index.md) and before
// its note, then git commit -am before any kk command. The commit takes
// the killed write's generated files, which name the note's new words the
// commit does not hold. kk's post-commit hook did not regenerate it: it
// asked kk index rebuild --check whether the files lag, and that kk first
// rolled the killed write back in the work tree, then found the work
// tree's files right. The commit kept generated files that do not match
// its notes (kk index rebuild --check fails on it, in CI for one), until
// the next commit. Found by the kill soak (TestWriteSoakKill9, seed 69,
// its check of HEAD). The write is killed here in-process at that point.
func TestCommitRightAfterAKilledWrite(t *testing.T) {
	s := &soak{t: t, dir: filepath.Join(t.TempDir(), "repo"), home: t.TempDir(), want: map[string][]byte{}}
	if err := os.MkdirAll(s.dir, 0o755); err != nil {
		t.Fatal(err)
	}
	s.k = store.New(s.dir)
	if err := os.WriteFile(filepath.Join(s.home, "gitconfig"), []byte("[user]\n\tname = Soak Person\n\temail = soak@example.invalid\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s.git("init", "-q", "-b", "main")
	s.kk("init")
	s.kkIn("A body.\n", "node", "write", "practice", "x", "--description", "old words", "--folder", "f2")
	s.kkIn("A body.\n", "node", "write", "practice", "y", "--description", "other words", "--folder", "f2")
	s.git("add", "-A")
	s.git("commit", "-qm", "base")

	killed := txn.WithFaults(context.Background(), txn.Faults{
		Write: func(rel string) error {
			if rel == "nodes/f2/practice-x.md" {
				runtime.Goexit() // killed before the note is written
			}
			return nil
		},
		At: func(p string) {
			if p == "applied" {
				runtime.Goexit()
			}
		},
	})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = txn.Update(killed, store.New(s.dir), txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
			n, err := tx.Leaf("practice-x")
			if err != nil {
				return err
			}
			n.Description = "new words"
			tx.Put(n)
			return nil
		})
	}()
	<-done
	if !strings.Contains(string(s.read(".ai/kenkeep/nodes/f2/index.md")), "new words") || strings.Contains(string(s.read(".ai/kenkeep/nodes/f2/practice-x.md")), "new words") {
		t.Fatal("the write was not killed between the generated files and the note")
	}
	out := s.git("commit", "-qam", "right after the kill")
	t.Logf("git commit -am:\n%s", out)
	s.checkHead()
	s.checkAll("after the commit")
}
