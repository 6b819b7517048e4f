package txn_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A changeset that keeps its originals (kk serve's job, until its git
// commit lands) can be undone later, byte for byte, whatever the files
// held before it: a person's uncommitted hand edit of a leaf the job
// edited, a leaf the job deleted, a file it created (removed again), a
// large file kept as a hard link. Other writers' transactions in between
// leave the kept originals alone; the generated files are generated
// again; dropping them leaves nothing behind.
func TestKeptOriginalsAreRestored(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	write := func(title, folder string) string {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "body of " + title, Folder: folder}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
		return title
	}
	write("Edited by the job", "f")
	write("Deleted by the job", "f")
	edited := k.NodePath("f/practice-edited-by-the-job.md")
	deleted := k.NodePath("f/practice-deleted-by-the-job.md")
	// A person's hand edit, which no commit holds.
	hand, err := os.ReadFile(edited)
	if err != nil {
		t.Fatal(err)
	}
	hand = append(hand, "A line a person added by hand.\n"...)
	if err := os.WriteFile(edited, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	delBytes, _ := os.ReadFile(deleted)
	entry, _ := os.ReadFile(k.EntryPath())
	big := strings.Repeat("a large conflict file line\n", 4000)
	res, err := txn.Update(ctx, k, txn.Meta{Command: "job"}, func(tx *txn.Tx) error {
		tx.KeepOriginals("job-1")
		n, err := tx.LeafAt("f/practice-edited-by-the-job.md")
		if err != nil {
			return err
		}
		n.Title = "Edited by the job, new title"
		tx.Put(n)
		d, err := tx.LeafAt("f/practice-deleted-by-the-job.md")
		if err != nil {
			return err
		}
		if err := tx.Remove(d); err != nil {
			return err
		}
		tx.WriteFile("conflicts/big.md", []byte(big))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if !txn.HasOriginals(k, "job-1") || !slices.Equal(txn.KeptOriginals(k), []string{"job-1"}) {
		t.Fatalf("kept: %v", txn.KeptOriginals(k))
	}
	if len(res.Generated) == 0 || res.AfterTree() == nil {
		t.Errorf("Result.Generated %v, AfterTree %v", res.Generated, res.AfterTree() != nil)
	}
	// Another transaction in between, and a leftover check.
	write("Someone else's leaf", "g")
	if left, err := txn.Leftovers(k); err != nil || len(left) != 0 {
		t.Errorf("leftovers: %v %v", left, err)
	}
	// The big file again, changed by the next job with originals kept.
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "job"}, func(tx *txn.Tx) error {
		tx.KeepOriginals("job-2")
		tx.WriteFile("conflicts/big.md", []byte(big+"more\n"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	// Undo job 2, then job 1, in that order.
	for _, name := range []string{"job-2", "job-1"} {
		if _, err := txn.Update(ctx, k, txn.Meta{Command: "undo"}, func(tx *txn.Tx) error {
			ok, err := tx.RestoreOriginals(name)
			if !ok && err == nil {
				err = errors.New("nothing kept")
			}
			return err
		}); err != nil {
			t.Fatal(name, err)
		}
	}
	if got, _ := os.ReadFile(edited); string(got) != string(hand) {
		t.Errorf("the hand-edited leaf is\n%s\nwant\n%s", got, hand)
	}
	if got, _ := os.ReadFile(deleted); string(got) != string(delBytes) {
		t.Errorf("the deleted leaf is %q", got)
	}
	if _, err := os.Stat(k.ConflictsDir() + "/big.md"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the created file is still there: %v", err)
	}
	if got, _ := os.ReadFile(k.EntryPath()); !strings.Contains(string(got), "node_count: 3\n") || !strings.Contains(string(got), "nodes/g/index.md") || string(got) == string(entry) {
		t.Errorf("ENTRY.md was not generated again from the tree:\n%s", got)
	}
	if len(txn.KeptOriginals(k)) != 0 {
		t.Errorf("kept after the undo: %v", txn.KeptOriginals(k))
	}
	ents, _ := os.ReadDir(txn.JournalDir(k))
	for _, e := range ents {
		if e.Name() != "kept" {
			t.Errorf("left in the journal folder: %s", e.Name())
		}
	}
	// Dropping unkept originals does nothing; a restore of them stages
	// nothing.
	if err := txn.DropOriginals(k, "job-1"); err != nil {
		t.Error(err)
	}
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "undo"}, func(tx *txn.Tx) error {
		ok, err := tx.RestoreOriginals("job-1")
		if ok {
			t.Error("restored what was not kept")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
}

// A transaction writes beside a leaf that does not parse and beside two
// leaves that share an id, lists them as skipped, and generates the index
// files from the others. The leaf that cannot be read is named when a
// caller asks for it.
func TestSkipUnreadableLeaves(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	in := contracts.NodeInput{Type: "practice", Title: "Good", Description: "d", Body: "b", Folder: "f"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	good, _ := os.ReadFile(k.NodePath("f/practice-good.md"))
	bad := strings.Replace(string(good), "title: Good\n", "title: Good\ntitle: Twice\n", 1)
	if err := os.WriteFile(k.NodePath("f/practice-bad.md"), []byte(bad), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(k.NodePath("g"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.NodePath("g/practice-good.md"), good, 0o644); err != nil {
		t.Fatal(err)
	}
	in2 := contracts.NodeInput{Type: "practice", Title: "Another", Description: "d", Body: "b", Folder: "f"}
	var skipped []error
	res, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		if _, err := tx.LeafAt("f/practice-bad.md"); err == nil || !strings.Contains(err.Error(), "practice-bad.md") {
			t.Errorf("LeafAt of the bad leaf: %v", err)
		}
		if _, _, err := curate.WriteInTx(tx, in2, curate.WriteOptions{Mode: curate.Create}); err != nil {
			return err
		}
		skipped = tx.Skipped()
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 3 { // the bad leaf, and both leaves of the shared id
		t.Fatalf("skipped %v", skipped)
	}
	var ne *node.Error
	for _, e := range skipped {
		if !errors.As(e, &ne) {
			t.Errorf("%v is not a *node.Error", e)
		}
	}
	entry, _ := os.ReadFile(k.EntryPath())
	folder, _ := os.ReadFile(k.NodePath("f/index.md"))
	if !strings.Contains(string(entry), "node_count: 1\n") || !strings.Contains(string(folder), "practice-another") || strings.Contains(string(folder), "practice-bad") {
		t.Errorf("ENTRY.md:\n%s\nf/index.md:\n%s", entry, folder)
	}
	if !slices.Contains(res.Written, "nodes/f/practice-another.md") {
		t.Errorf("written %v", res.Written)
	}
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil || len(tr.Problems) != 3 || len(tr.Leaves) != 1 {
		t.Fatalf("tree: %v skipped, %v", tr, err)
	}
}

// Undoing a job whose commit failed (kk serve) puts back only the files
// that still hold what the job wrote: a leaf a person edited after the job
// wrote it, a file the job created that a person has since rewritten, are
// theirs and stay; the job's other files are undone. Before, the undo put
// the job's originals back over the person's later edit.
func TestRestoreKeepsAPersonsLaterEdit(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	for _, title := range []string{"Edited later by a person", "Left alone"} {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "body of " + title, Folder: "f"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	later := k.NodePath("f/practice-edited-later-by-a-person.md")
	alone := k.NodePath("f/practice-left-alone.md")
	aloneBefore, _ := os.ReadFile(alone)
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "job"}, func(tx *txn.Tx) error {
		tx.KeepOriginals("job-1")
		for _, rel := range []string{"f/practice-edited-later-by-a-person.md", "f/practice-left-alone.md"} {
			n, err := tx.LeafAt(rel)
			if err != nil {
				return err
			}
			n.Body = append(n.Body, "\nA line the job added.\n"...)
			tx.Put(n)
		}
		tx.WriteFile("conflicts/created.md", []byte("the job's file\n"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	hand, _ := os.ReadFile(later)
	hand = append(hand, "A person's line, after the job.\n"...)
	if err := os.WriteFile(later, hand, 0o644); err != nil {
		t.Fatal(err)
	}
	created := k.ConflictsDir() + "/created.md"
	if err := os.WriteFile(created, []byte("a person's rewrite\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "undo"}, func(tx *txn.Tx) error {
		ok, err := tx.RestoreOriginals("job-1")
		if !ok && err == nil {
			err = errors.New("nothing kept")
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(later); string(got) != string(hand) {
		t.Errorf("the person's later edit was undone:\n%s", got)
	}
	if got, _ := os.ReadFile(created); string(got) != "a person's rewrite\n" {
		t.Errorf("the person's rewrite of the job's file: %q", got)
	}
	if got, _ := os.ReadFile(alone); string(got) != string(aloneBefore) {
		t.Errorf("the job's edit of a leaf nobody touched was not undone:\n%s", got)
	}
}
