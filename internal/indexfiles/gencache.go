package indexfiles

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/store"

	"github.com/kk-project/kk/internal/atomicfile"
)

// The generation cache lets a rebuild with nothing to do skip generation.
// It records a key over everything generation reads (the leaves' bytes
// through nodes_hash, the folder summaries, the root summary) and the hash
// of every file generation produced. When the key still matches and every
// generated file on disk still has its recorded hash, the output would be
// byte-identical, so there is nothing to write.

// generatorVersion changes whenever generated output changes shape, so an
// upgraded kk never trusts an older cache.
const generatorVersion = "kk-index-1"

type genCache struct {
	key     string
	written int64
	files   map[string]genFile // by name relative to .ai/kenkeep
	folders []string
	missing []string
}

// maxSummed is the largest generated file whose content hash the cache
// records. The hash only serves to trust a file written moments before a
// later run (its mtime too recent to trust); a larger file (GRAPH.md, 3 MB
// at ten thousand leaves, written by every transaction of kk serve) is
// then generated again instead, which costs less than hashing it at every
// write.
const maxSummed = 256 << 10

// noSum stands for the hash of a file larger than maxSummed.
const noSum = "-"

type genFile struct {
	sum         string // sha256 hex of the content, or noSum
	Size, mtime int64  // of the file as written
	key         string // hash of the inputs it was rendered from
}

func genCachePath(k *store.KB) string { return filepath.Join(k.StateDir(), "index.cache") }

// genKey hashes the inputs of generation.
func genKey(k *store.KB, nodesHash string, summaries []byte) string {
	h := sha256.New()
	h.Write([]byte(generatorVersion + "\n" + nodesHash + "\n"))
	h.Write(summaries)
	h.Write([]byte("\n" + k.EntrySummary()))
	return hex.EncodeToString(h.Sum(nil))
}

func loadGenCache(k *store.KB) *genCache {
	data, err := os.ReadFile(genCachePath(k))
	if err != nil {
		return nil
	}
	c := &genCache{files: map[string]genFile{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<16), 1<<20)
	for sc.Scan() {
		kind, rest, _ := strings.Cut(sc.Text(), " ")
		switch kind {
		case "key":
			c.key = rest
		case "written":
			c.written, _ = strconv.ParseInt(rest, 10, 64)
		case "file":
			f := strings.SplitN(rest, " ", 5)
			if len(f) != 5 {
				return nil
			}
			size, err1 := strconv.ParseInt(f[1], 10, 64)
			mtime, err2 := strconv.ParseInt(f[2], 10, 64)
			if err1 != nil || err2 != nil {
				return nil
			}
			c.files[f[4]] = genFile{sum: f[0], Size: size, mtime: mtime, key: f[3]}
		case "folder":
			c.folders = append(c.folders, rest)
		case "missing":
			c.missing = append(c.missing, rest)
		}
	}
	if c.key == "" || len(c.files) == 0 {
		return nil
	}
	return c
}

func saveGenCache(k *store.KB, key string, g *Generated, prev *genCache) {
	var b strings.Builder
	b.WriteString("key " + key + "\n")
	fmt.Fprintf(&b, "written %d\n", time.Now().UnixNano())
	names := make([]string, 0, len(g.Keys))
	for n := range g.Keys {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		var f genFile
		if data, ok := g.Files[n]; ok {
			fi, err := os.Stat(filepath.Join(k.Dir, filepath.FromSlash(n)))
			if err != nil {
				return
			}
			f = genFile{sum: noSum, Size: fi.Size(), mtime: fi.ModTime().UnixNano()}
			if len(data) <= maxSummed {
				sum := sha256.Sum256(data)
				f.sum = hex.EncodeToString(sum[:])
			}
		} else if prev != nil {
			f = prev.files[n] // skipped as fresh: the file is as recorded
		}
		if f.sum == "" {
			return
		}
		fmt.Fprintf(&b, "file %s %d %d %s %s\n", f.sum, f.Size, f.mtime, g.Keys[n], n)
	}
	for _, f := range g.Folders {
		b.WriteString("folder " + f + "\n")
	}
	for _, f := range g.MissingSummaries {
		b.WriteString("missing " + f + "\n")
	}
	if os.MkdirAll(k.StateDir(), 0o755) == nil {
		_ = atomicfile.Replace(genCachePath(k), []byte(b.String()), 0o644)
	}
}

// freshFunc returns the test generation uses to skip rendering a file: the
// cache rendered it from inputs with the same key and the file on disk is
// still the one it wrote. A nil cache skips nothing.
func (c *genCache) freshFunc(k *store.KB) func(file, key string) bool {
	if c == nil {
		return nil
	}
	return func(file, key string) bool {
		f, ok := c.files[file]
		return ok && f.key == key && c.unchanged(k, file, f)
	}
}

// unchanged reports whether the file on disk is the one recorded.
func (c *genCache) unchanged(k *store.KB, name string, f genFile) bool {
	path := filepath.Join(k.Dir, filepath.FromSlash(name))
	fi, err := os.Stat(path)
	if err != nil || fi.Size() != f.Size {
		return false
	}
	if mt := fi.ModTime().UnixNano(); mt == f.mtime && mt < c.written-int64(store.RacyWindow) {
		return true
	}
	if f.sum == noSum {
		return false
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return false
	}
	got := sha256.Sum256(data)
	return hex.EncodeToString(got[:]) == f.sum
}

// upToDate reports whether the generated files on disk are exactly what
// generation would produce for key, according to the cache. A file whose
// size and mtime are as recorded, and not racily close to the moment they
// were recorded, is trusted without reading it.
func (c *genCache) upToDate(k *store.KB, key string, t *store.Tree) bool {
	if c == nil || c.key != key || len(t.IndexDirs) != len(c.folders) {
		return false
	}
	for _, f := range c.folders {
		if !t.IndexDirs[f] {
			return false
		}
	}
	for name, f := range c.files {
		if !c.unchanged(k, name, f) {
			return false
		}
	}
	return true
}
