package txn

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// checkedOutFile, under .state, records the files kk index rebuild
// --commits last had git check out of a commit it made again: one line
// per file, the sha256 of its bytes, a tab, its path relative to
// .ai/kenkeep.
const checkedOutFile = "checked-out-generated"

// NoteCheckedOut records the files (relative to .ai/kenkeep, with their
// bytes) git is about to check out of a commit kk made again with its
// generated files regenerated from that commit's notes (kk index rebuild
// --commits); the record replaces the one before. It is written before
// git checks them out, so that a kill in between leaves no file of the
// checkout unrecorded. A generated file checked out so is kk's
// generation, not a person's edit, though it is not of the work tree's
// notes when those are not the commit's (a note staged and changed again
// before git commit; a kk write killed after it wrote some of its files,
// committed before any kk command, then rolled back in the work tree by
// the hook's kk): a write that finds one still as recorded here does not
// keep a copy of it as a hand edit.
func NoteCheckedOut(k *store.KB, files map[string][]byte) error {
	var b strings.Builder
	for _, p := range slices.Sorted(maps.Keys(files)) {
		sum := sha256.Sum256(files[p])
		fmt.Fprintf(&b, "%s\t%s\n", hex.EncodeToString(sum[:]), p)
	}
	dst := filepath.Join(k.StateDir(), checkedOutFile)
	return store.InStateFolder(k.StateDir(), func() error { return atomicfile.Write(dst, []byte(b.String()), 0o644) })
}

// checkedOut returns the record NoteCheckedOut wrote (path -> sha256);
// empty when there is none.
func checkedOut(k *store.KB) map[string]string {
	out := map[string]string{}
	data, err := os.ReadFile(filepath.Join(k.StateDir(), checkedOutFile))
	if err != nil {
		return out
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		if sum, p, ok := strings.Cut(sc.Text(), "\t"); ok {
			out[p] = sum
		}
	}
	return out
}

// asCheckedOut reports whether data is the file name as the record holds
// it.
func asCheckedOut(rec map[string]string, name string, data []byte) bool {
	want, ok := rec[name]
	if !ok {
		return false
	}
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:]) == want
}
