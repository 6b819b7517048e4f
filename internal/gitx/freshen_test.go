package gitx

import (
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestWriteFreshensAnObjectItFindsStored: an object kk serve's commit
// needs that the repository holds loose already is not written again, but
// its modification time is brought to now, as git's own object writes do
// (freshen_loose_object): git gc and git prune delete unreachable loose
// objects older than their grace period, and an old unreachable object
// that a new tree is about to name would otherwise be theirs to delete in
// the moment before the tree refers to it.
func TestWriteFreshensAnObjectItFindsStored(t *testing.T) {
	s := objectStore{dir: t.TempDir(), algo: algoSHA1}
	id, err := s.write("blob", []byte("a note's bytes\n"))
	if err != nil {
		t.Fatal(err)
	}
	hexID := hex.EncodeToString(id)
	path := filepath.Join(s.dir, hexID[:2], hexID[2:])
	old := time.Now().Add(-30 * 24 * time.Hour)
	if err := os.Chtimes(path, old, old); err != nil {
		t.Fatal(err)
	}
	again, err := s.write("blob", []byte("a note's bytes\n"))
	if err != nil {
		t.Fatal(err)
	}
	if hex.EncodeToString(again) != hexID {
		t.Fatalf("id %x, want %s", again, hexID)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if !fi.ModTime().After(old.Add(24 * time.Hour)) {
		t.Fatalf("the stored object kept its modification time %s: git gc --prune may delete it while a new tree names it", fi.ModTime())
	}
}
