package indexfiles

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/store"
)

// The branch index records the last generation (index.Generation): the
// key over everything generation reads (the leaves' bytes through the
// nodes hash, the folder summaries, the root summary) and, for every file
// generation produced, the key of its own inputs and its size, mtime and
// sha256. A file still as recorded, by the one rule kk trusts a file it
// looked at before (store.Unchanged: size, mtime and the racy window) or
// else by the sha256 of its bytes, is the file generation rendered; when
// the key matches too, the output would be byte-identical and there is
// nothing to do.

// generatorVersion changes whenever generated output changes shape, so an
// upgraded kk never trusts an older record. 2: links to folders and
// leaves whose names hold a space (or another character a link
// destination cannot hold as it is) are percent-encoded (node.EscapeLinkPath).
// 3: a folder's index.md has no final newline, as kenkeep writes it.
// 4: a line break in a tag (a note written by hand) prints as a space in
// a folder's index.md and ENTRY.md, as it does in GRAPH.md.
const generatorVersion = "kk-index-4"

// genKey hashes the inputs of generation.
func genKey(k *store.KB, nodesHash string, summaries []byte) string {
	h := sha256.New()
	h.Write([]byte(generatorVersion + "\n" + nodesHash + "\n"))
	h.Write(summaries)
	h.Write([]byte("\n" + k.EntrySummary()))
	return hex.EncodeToString(h.Sum(nil))
}

// record is the branch index's record of the last generation, as a plan
// reads and checks it; a nil record (no index, or nothing recorded)
// trusts nothing.
type record struct {
	g *index.Generation
	// checked are the files found as recorded by their bytes (their
	// stat was too recent to trust): recorded again, they are trusted
	// by their stat next time. Generation checks files from several
	// goroutines: mu guards it while it does; the plan reads it after.
	mu      sync.Mutex
	checked map[string]index.GeneratedFile
}

// check notes that file name was found as recorded by its bytes.
func (r *record) check(name string, f index.GeneratedFile) {
	r.mu.Lock()
	r.checked[name] = f
	r.mu.Unlock()
}

// loadRecord reads db's record; nil when there is none (or no db).
func loadRecord(ctx context.Context, db *index.DB) *record {
	if db == nil {
		return nil
	}
	g, err := db.Generation(ctx)
	if err != nil || g == nil || len(g.Files) == 0 {
		return nil
	}
	return &record{g: g, checked: map[string]index.GeneratedFile{}}
}

// fresh reports whether the file on disk is the one recorded.
func (r *record) fresh(k *store.KB, name string) bool {
	f, ok := r.g.Files[name]
	if !ok {
		return false
	}
	path := filepath.Join(k.Dir, filepath.FromSlash(name))
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
		return false
	}
	if store.Unchanged(fi.Size(), fi.ModTime().UnixNano(), f.Size, f.Mtime, f.At) {
		return true
	}
	at := time.Now().UnixNano() // the look at the bytes begins
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) != f.Size {
		return false
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != f.Sum {
		return false
	}
	f.Mtime, f.At = fi.ModTime().UnixNano(), at
	r.check(name, f)
	return true
}

// holds reports whether data are the bytes the record has for one of the
// files generated (by their sha256).
func (r *record) holds(data []byte) bool {
	sum := sha256.Sum256(data)
	hexSum := hex.EncodeToString(sum[:])
	for _, f := range r.g.Files {
		if f.Sum == hexSum && f.Size == int64(len(data)) {
			return true
		}
	}
	return false
}

// freshFunc returns the test generation uses to skip rendering a file: it
// was rendered from inputs with the same key and the file on disk is
// still the one recorded. A nil record skips nothing.
func (r *record) freshFunc(k *store.KB) func(file, key string) bool {
	if r == nil {
		return nil
	}
	return func(file, key string) bool {
		f, ok := r.g.Files[file]
		return ok && f.Key == key && r.fresh(k, file)
	}
}

// read returns the bytes of the generated file name when it is the one
// recorded (checked by its stat, or else by the hash of these bytes).
func (r *record) read(k *store.KB, name string) ([]byte, bool) {
	f, ok := r.g.Files[name]
	if !ok {
		return nil, false
	}
	path := filepath.Join(k.Dir, filepath.FromSlash(name))
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Size() != f.Size {
		return nil, false
	}
	at := time.Now().UnixNano()
	data, err := os.ReadFile(path)
	if err != nil || int64(len(data)) != f.Size {
		return nil, false
	}
	if store.Unchanged(fi.Size(), fi.ModTime().UnixNano(), f.Size, f.Mtime, f.At) {
		return data, true
	}
	sum := sha256.Sum256(data)
	if hex.EncodeToString(sum[:]) != f.Sum {
		return nil, false
	}
	f.Mtime, f.At = fi.ModTime().UnixNano(), at
	r.check(name, f)
	return data, true
}

// upToDate reports whether the generated files on disk are exactly what
// generation would produce for key, according to the record.
// indexDirs are the folders holding an index.md now; the files of
// checked were checked already.
func (r *record) upToDate(k *store.KB, key string, indexDirs map[string]bool, checked ...string) bool {
	if r == nil || r.g.Key != key || len(indexDirs) != len(r.g.Folders) || hasLegacyCatalog(k) {
		return false
	}
	for _, f := range r.g.Folders {
		if !indexDirs[f] {
			return false
		}
	}
	for name := range r.g.Files {
		if !slices.Contains(checked, name) && !r.fresh(k, name) {
			return false
		}
	}
	return true
}

// fileRecord is the record of a generated file whose bytes are data, on
// disk at path now (nil when it cannot be stat'ed); sum is the sha256
// (hex) of data when known, "" to hash it. A file that holds data's text
// with CRLF line endings (checked out by git with core.autocrlf, which a
// plan leaves as it is) is recorded as it is on disk: a later plan trusts
// it by its stat, and does not bring such a GRAPH.md forward (spliceGraph
// takes only the layout kk writes).
func fileRecord(path, key string, data []byte, sum string) (index.GeneratedFile, bool) {
	at := time.Now().UnixNano()
	fi, err := os.Stat(path)
	if err != nil {
		return index.GeneratedFile{}, false
	}
	if fi.Size() != int64(len(data)) {
		disk, err := store.ReadFile(path)
		if err != nil || int64(len(disk)) != fi.Size() || !store.SameText(disk, data) {
			return index.GeneratedFile{}, false
		}
		s := sha256.Sum256(disk)
		return index.GeneratedFile{Key: key, Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Sum: hex.EncodeToString(s[:]), At: at}, true
	}
	if sum == "" {
		s := sha256.Sum256(data)
		sum = hex.EncodeToString(s[:])
	}
	return index.GeneratedFile{Key: key, Size: fi.Size(), Mtime: fi.ModTime().UnixNano(), Sum: sum, At: at}, true
}

// LegacyCatalog is the catalog kenkeep wrote before ENTRY.md (schema 2),
// relative to .ai/kenkeep. Generation removes it, as kenkeep's does: the
// catalog is ENTRY.md, and a stale INDEX.md beside it would be read by
// whatever still looks for the old name.
const LegacyCatalog = "INDEX.md"

// hasLegacyCatalog reports whether k holds kenkeep's legacy INDEX.md.
func hasLegacyCatalog(k *store.KB) bool {
	_, err := os.Lstat(filepath.Join(k.Dir, LegacyCatalog))
	return err == nil
}
