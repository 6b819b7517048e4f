package txn

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// killedAt runs a transaction of fn that dies at point (as a SIGKILL
// would: nothing after it runs), leaving its journal behind.
func killedAt(t *testing.T, k *store.KB, point string, fn func(tx *Tx) error) {
	t.Helper()
	killed := WithFaults(context.Background(), Faults{At: func(p string) {
		if p == point {
			runtime.Goexit()
		}
	}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Update(killed, k, Meta{Command: "test"}, fn)
	}()
	<-done
	if ents, _ := os.ReadDir(JournalDir(k)); len(ents) == 0 {
		t.Fatalf("the writer killed at %q left no journal", point)
	}
}

func writeAt(t *testing.T, k *store.KB, rel string, data []byte) {
	t.Helper()
	abs := filepath.Join(k.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(abs, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readAt(t *testing.T, k *store.KB, rel string) (string, bool) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(rel)))
	if os.IsNotExist(err) {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(data), true
}

// The rollback of a killed writer's changeset puts back only what still
// holds the changeset's bytes. A file someone changed after the kill (a
// person fixing the half-written note by hand, a git checkout of another
// branch, a CI cache restoring an old .state/ into a newer tree) is theirs
// and stays as it is: before, the next reader overwrote a hand edit with
// the bytes from before the changeset, deleted a file of the same name the
// person had written, and put back a file the person had deleted.
func TestRollbackKeepsWhatChangedAfterTheKill(t *testing.T) {
	t.Parallel()
	k, big := newBigKB(t)
	for _, f := range []string{"edited.txt", "untouched.txt", "deleted.txt", "removed.txt", "gone.txt"} {
		writeAt(t, k, f, []byte("the original of "+f+"\n"))
	}
	killedAt(t, k, "applied", func(tx *Tx) error {
		tx.WriteFile("edited.txt", []byte("the changeset's edited.txt\n"))
		tx.WriteFile("untouched.txt", []byte("the changeset's untouched.txt\n"))
		tx.WriteFile("deleted.txt", []byte("the changeset's deleted.txt\n"))
		tx.WriteFile("created.txt", []byte("the changeset's created.txt\n"))
		tx.WriteFile("created-too.txt", []byte("the changeset's created-too.txt\n"))
		tx.WriteFile("big.txt", []byte("the changeset's big.txt\n"))
		tx.RemoveFile("removed.txt")
		tx.RemoveFile("gone.txt")
		tx.SkipIndexFiles()
		return nil
	})
	// What happened after the kill, by hand.
	writeAt(t, k, "edited.txt", []byte("a person's fix\n"))
	if err := os.Remove(filepath.Join(k.Dir, "deleted.txt")); err != nil {
		t.Fatal(err)
	}
	writeAt(t, k, "created.txt", []byte("a person's own created.txt\n"))
	writeAt(t, k, "big.txt", []byte("a person's big.txt\n"))
	writeAt(t, k, "removed.txt", []byte("a person's new removed.txt\n"))

	if ok, err := Recover(k); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	for _, c := range []struct {
		rel, want string
		there     bool
	}{
		{"edited.txt", "a person's fix\n", true},
		{"untouched.txt", "the original of untouched.txt\n", true}, // rolled back
		{"deleted.txt", "", false},
		{"created.txt", "a person's own created.txt\n", true},
		{"created-too.txt", "", false}, // rolled back
		{"big.txt", "a person's big.txt\n", true},
		{"removed.txt", "a person's new removed.txt\n", true},
		{"gone.txt", "the original of gone.txt\n", true}, // rolled back
	} {
		got, there := readAt(t, k, c.rel)
		if there != c.there || got != c.want {
			t.Errorf("%s after recovery: %.60q (there: %v), want %q (there: %v)", c.rel, got, there, c.want, c.there)
		}
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("left after recovery: %q", left)
	}

	// The large file's original comes back when nobody touched it.
	killedAt(t, k, "applied", func(tx *Tx) error {
		tx.WriteFile("big.txt", big)
		tx.SkipIndexFiles()
		return nil
	})
	if ok, err := Recover(k); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got, _ := readAt(t, k, "big.txt"); got != "a person's big.txt\n" {
		t.Errorf("big.txt after the second recovery: %.40q", got)
	}
}

// A journal left by a writer killed before it replaced anything (after
// its journal, at its first removal) is rolled back without changing a
// file: each still holds its original bytes, or, a large one, its
// original inode.
func TestRollbackBeforeAnyChange(t *testing.T) {
	t.Parallel()
	k, big := newBigKB(t)
	writeAt(t, k, "removed.txt", []byte("kept\n"))
	killedAt(t, k, "remove", func(tx *Tx) error {
		tx.RemoveFile("removed.txt")
		tx.RemoveFile("big.txt")
		tx.SkipIndexFiles()
		return nil
	})
	if ok, err := Recover(k); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got, _ := readAt(t, k, "removed.txt"); got != "kept\n" {
		t.Errorf("removed.txt: %q", got)
	}
	if got, _ := readAt(t, k, "big.txt"); got != string(big) {
		t.Errorf("big.txt: %d bytes, want %d", len(got), len(big))
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("left after recovery: %q", left)
	}
}

// The audit log is cut back to its length before a killed changeset
// only when what follows is that changeset's own record: records of
// other changesets after it (a journal restored from a cache into a tree
// that has moved on) stay.
func TestRollbackLeavesOtherChangesetsRecords(t *testing.T) {
	t.Parallel()
	for _, other := range []bool{false, true} {
		t.Run(fmt.Sprintf("other records %v", other), func(t *testing.T) {
			t.Parallel()
			k, _ := newBigKB(t)
			audit := index.AuditPath(k, "main")
			before, _ := os.ReadFile(audit)
			killedAt(t, k, "recorded", func(tx *Tx) error {
				tx.WriteFile("small.txt", []byte("the changeset's\n"))
				tx.SkipIndexFiles()
				return nil
			})
			after, _ := os.ReadFile(audit)
			if len(after) <= len(before) {
				t.Fatalf("the killed changeset recorded nothing in %s", audit)
			}
			later := `{"changeset":"20261130T000000Z-0123abcd","actor":"ci","at":"2026-11-30T00:00:00Z","source":"cli","branch":"main","ops":[]}` + "\n"
			if other {
				f, err := os.OpenFile(audit, os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					t.Fatal(err)
				}
				_, _ = f.WriteString(later)
				_ = f.Close()
			}
			if ok, err := Recover(k); !ok || err != nil {
				t.Fatalf("Recover = %v, %v", ok, err)
			}
			got, _ := os.ReadFile(audit)
			switch {
			case !other && !bytes.Equal(got, before):
				t.Errorf("the killed changeset's record stayed:\n%s", got)
			case other && !strings.HasSuffix(string(got), later):
				t.Errorf("another changeset's record was cut:\n%s", got)
			}
			if got, _ := readAt(t, k, "small.txt"); got != "small" {
				t.Errorf("small.txt: %q", got)
			}
		})
	}
}

// A file another program writes after the transaction read it and before
// the transaction replaces or removes it (a person saving in an editor
// while kk writes: the writer lock binds only kk) fails the changeset
// instead of being overwritten: the person's bytes stay, the changeset's
// other files are put back, and the error says what happened. Before,
// the changeset's bytes replaced the person's, which were lost.
func TestAFileWrittenMeanwhileFailsTheChangeset(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		rel    string // the file the person writes meanwhile
		remove bool   // the changeset removes it (else writes it)
	}{
		{"an edited file", "edited.txt", false},
		{"a file the changeset creates", "created.txt", false},
		{"a removed file", "removed.txt", true},
		{"a large file", "big.txt", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			k, big := newBigKB(t)
			writeAt(t, k, "edited.txt", []byte("the original of edited.txt\n"))
			writeAt(t, k, "removed.txt", []byte("the original of removed.txt\n"))
			writeAt(t, k, "other.txt", []byte("the original of other.txt\n"))
			person := []byte("a person's save, meanwhile\n")
			meanwhile := func() { writeAt(t, k, c.rel, person) }
			f := Faults{Write: func(rel string) error {
				if rel == c.rel {
					meanwhile()
				}
				return nil
			}}
			if c.remove {
				f = Faults{At: func(p string) {
					if p == "remove" {
						meanwhile()
					}
				}}
			}
			_, err := Update(WithFaults(context.Background(), f), k, Meta{Command: "test"}, func(tx *Tx) error {
				tx.WriteFile("other.txt", []byte("the changeset's other.txt\n"))
				switch {
				case c.remove:
					tx.RemoveFile(c.rel)
				default:
					tx.WriteFile(c.rel, []byte("the changeset's "+c.rel+"\n"))
				}
				tx.SkipIndexFiles()
				return nil
			})
			if !errors.Is(err, ErrChangedMeanwhile) || !strings.Contains(err.Error(), c.rel) {
				t.Fatalf("Update = %v, want an error naming %s, changed meanwhile", err, c.rel)
			}
			if got, _ := readAt(t, k, c.rel); got != string(person) {
				t.Errorf("%s is %.60q, want the person's save", c.rel, got)
			}
			if got, _ := readAt(t, k, "other.txt"); got != "the original of other.txt\n" {
				t.Errorf("other.txt is %q: the failed changeset was not put back", got)
			}
			if c.rel != "big.txt" {
				if got, _ := readAt(t, k, "big.txt"); got != string(big) {
					t.Errorf("big.txt changed")
				}
			}
			if left := leftInJournalDir(t, k); len(left) != 0 {
				t.Errorf("left in the journal folder: %q", left)
			}
		})
	}
}

// A rollback removes the files the changeset created before it puts back
// those it replaced, since putting a file back writes a temporary copy
// that needs room on the disk: a write that failed on a full disk (its
// new note taking the last of it) is then undone at once. Before, the
// undo put the generated files back first, failed for the same full
// disk, then removed the note, and left the generated files naming a
// note that was gone until the next kk command.
func TestRollbackRemovesWhatItCreatedFirst(t *testing.T) {
	t.Parallel()
	k, _ := newBigKB(t)
	writeAt(t, k, "a-replaced.txt", []byte("the original\n"))
	writeAt(t, k, "z-replaced.txt", []byte("the original\n"))
	killedAt(t, k, "applied", func(tx *Tx) error {
		tx.WriteFile("a-replaced.txt", []byte("the changeset's\n"))
		tx.WriteFile("m-created.txt", []byte("the changeset's\n"))
		tx.WriteFile("z-replaced.txt", []byte("the changeset's\n"))
		tx.SkipIndexFiles()
		return nil
	})
	if err := RecoverStoppedAt(k, "created removed"); err != nil {
		t.Fatal(err)
	}
	if _, there := readAt(t, k, "m-created.txt"); there {
		t.Error("the rollback stopped after removing what the changeset created left m-created.txt")
	}
	for _, rel := range []string{"a-replaced.txt", "z-replaced.txt"} {
		if got, _ := readAt(t, k, rel); got != "the changeset's\n" {
			t.Errorf("%s was put back (%q) before the created file was removed", rel, got)
		}
	}
	if ok, err := Recover(k); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	for _, rel := range []string{"a-replaced.txt", "z-replaced.txt"} {
		if got, _ := readAt(t, k, rel); got != "the original\n" {
			t.Errorf("%s after the recovery: %q", rel, got)
		}
	}
}
