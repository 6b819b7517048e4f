package txn

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

// newBigKB is a knowledge base with a file of linkMin bytes or more.
func newBigKB(t *testing.T) (*store.KB, []byte) {
	t.Helper()
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.StateDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	big := bytes.Repeat([]byte("the original line of a large file\n"), 3*linkMin/32)
	if _, err := Update(context.Background(), k, Meta{Command: "test"}, func(tx *Tx) error {
		tx.WriteFile("big.txt", big)
		tx.WriteFile("small.txt", []byte("small"))
		tx.SkipIndexFiles()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return k, big
}

func leftInJournalDir(t *testing.T, k *store.KB) []string {
	t.Helper()
	ents, err := os.ReadDir(JournalDir(k))
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		out = append(out, e.Name())
	}
	return out
}

// A large file's original is kept as a hard link, not copied into the
// journal; an undone changeset puts it back byte for byte, a committed
// one leaves no link behind.
func TestLargeOriginalsAreLinked(t *testing.T) {
	t.Parallel()
	k, big := newBigKB(t)
	ctx := context.Background()
	var journalSize int64
	hooked := WithFaults(ctx, Faults{At: func(point string) {
		if point == "applied" {
			ents, _ := os.ReadDir(JournalDir(k))
			for _, e := range ents {
				fi, _ := e.Info()
				if strings.HasSuffix(e.Name(), ".journal") {
					journalSize = fi.Size()
				}
			}
		}
	}})
	if _, err := Update(hooked, k, Meta{Command: "test"}, func(tx *Tx) error {
		tx.WriteFile("big.txt", append([]byte("changed\n"), big...))
		tx.SkipIndexFiles()
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if journalSize == 0 || journalSize > linkMin/4 {
		t.Errorf("the journal was %d bytes for a %d-byte original", journalSize, len(big))
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("left after a commit: %q", left)
	}

	// A failed write undoes the changeset: the large file comes back.
	before, _ := os.ReadFile(filepath.Join(k.Dir, "big.txt"))
	full := WithFaults(ctx, Faults{Write: func(rel string) error {
		if rel == "small.txt" {
			return errors.New("disk full (test)")
		}
		return nil
	}})
	_, err := Update(full, k, Meta{Command: "test"}, func(tx *Tx) error {
		tx.WriteFile("big.txt", []byte("short now"))
		tx.WriteFile("small.txt", []byte("changed"))
		tx.SkipIndexFiles()
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "disk full") {
		t.Fatalf("err = %v", err)
	}
	if !strings.Contains(err.Error(), "nothing was written (the changeset was undone)") {
		t.Errorf("the error does not say the changeset was undone: %v", err)
	}
	if got, _ := os.ReadFile(filepath.Join(k.Dir, "big.txt")); !bytes.Equal(got, before) {
		t.Fatalf("after the undo big.txt is %d bytes, want %d", len(got), len(before))
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("left after an undo: %q", left)
	}
}

// A writer that dies after replacing a large file leaves its journal and
// link; the next transaction puts the file back and removes both.
func TestLargeOriginalAfterAKill(t *testing.T) {
	t.Parallel()
	k, big := newBigKB(t)
	ctx := context.Background()
	killed := WithFaults(ctx, Faults{At: func(point string) {
		if point == "applied" {
			runtime.Goexit() // as a kill: nothing after this point runs
		}
	}})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = Update(killed, k, Meta{Command: "test"}, func(tx *Tx) error {
			tx.WriteFile("big.txt", []byte("half done"))
			tx.SkipIndexFiles()
			return nil
		})
	}()
	<-done
	if got, _ := os.ReadFile(filepath.Join(k.Dir, "big.txt")); string(got) != "half done" {
		t.Fatalf("the killed writer did not get to write: %q", got)
	}
	if left := leftInJournalDir(t, k); len(left) != 2 {
		t.Fatalf("a killed writer left %q, want its journal and link", left)
	}
	if ok, err := Recover(k); !ok || err != nil {
		t.Fatalf("Recover = %v, %v", ok, err)
	}
	if got, _ := os.ReadFile(filepath.Join(k.Dir, "big.txt")); !bytes.Equal(got, big) {
		t.Fatalf("after recovery big.txt is %d bytes, want the original %d", len(got), len(big))
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("left after recovery: %q", left)
	}
	// A link without its journal (killed before writing it) is removed.
	if err := os.WriteFile(filepath.Join(JournalDir(k), "cs-x.0"+backupSuffix), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Update(ctx, k, Meta{Command: "test"}, func(tx *Tx) error { return nil }); err != nil {
		t.Fatal(err)
	}
	if left := leftInJournalDir(t, k); len(left) != 0 {
		t.Errorf("a stray link was left: %q", left)
	}
}
