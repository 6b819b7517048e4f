package index

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash/crc32"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/store"
)

// The stat cache lets a sync that finds nothing changed skip the database:
// next to index.db, index.db.stat lists the size and mtime of every leaf
// and extractor source file the index was last synced with, and what that
// sync reported. It belongs to one state of the database: a sync that
// writes stores a new generation in meta (stat_gen) and then writes the
// cache with it, and the cache is used only while the generations agree.
// A sync whose files all match the cache, and are old enough to be trusted
// by their stat, returns without a transaction; any difference takes the
// full path, which reads the database itself. A missing, stale or damaged
// cache only costs that full path.
//
// A sync that changed a few leaves (SyncPaths, once per kk serve job)
// appends a patch to the file instead of rewriting every leaf's line:
//
//	patch	<fromgen>	<togen>
//	H	<size>	<mtime>	<sha>	<rel>	(a leaf set)
//	D	<rel>	(a leaf removed)
//	end	<togen>	<crc32 of the block's bytes before this line, hex>
//
// A reader applies a block only when it starts from the generation read
// so far and ends whole with its checksum; the first block that does not
// (torn by a write in progress or a crash, or appended to a file another
// sync has since replaced) ends the cache, whose generation is then the
// last one read: an older one than the database's, so unused. The log is
// bounded: past maxLogLines lines, or as many bytes as the base, the next
// sync rewrites the file whole.

const statCacheMagic = "kk-stat-cache 1"

type statEntry struct {
	size, mtime int64
	extractor   string // sources only
	// sha is the content hash of a leaf written by a transaction and
	// recorded by SyncPaths: its mtime is too recent to trust, so a fast
	// sync compares the file's hash instead.
	sha string
}

// maxHashChecks bounds the leaves a fast sync verifies by hash (those
// SyncPaths recorded since the last full sync); past it, the full sync
// runs and trusts them by their stat again.
const maxHashChecks = 64

type statCache struct {
	gen     string
	synced  int64
	extract bool
	sources map[string]statEntry
	leaves  map[string]statEntry
	// order is the keys of leaves, sorted, when known (a cache this
	// process wrote); nil otherwise.
	order    []string
	entities int
	edges    int
	problems []Problem // the extractor problems the sources table keeps

	// file is the cache file as this cache was read from or written to
	// it, ending with this generation; nil when unknown (then the next
	// save rewrites the file). base is the length of the file's base,
	// before its first patch, and logLines the lines of its patches.
	file     os.FileInfo
	base     int64
	logLines int
}

// maxLogLines bounds the patch lines a cache file collects before a save
// rewrites it whole.
const maxLogLines = 1024

func newGen() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func (db *DB) statCachePath() string { return db.Path + ".stat" }

// statCacheFor returns the stat cache of generation gen (the database's
// stat_gen), nil when there is none. The handle keeps the cache it last
// wrote or read, so that a long-running process syncing after each
// transaction (SyncPaths) does not parse the file it has just written;
// the generation, which every sync that writes changes, tells when
// another process has synced since. The result is shared: callers must
// not change it.
func (db *DB) statCacheFor(gen string) *statCache {
	db.stat.Lock()
	c := db.stat.c
	db.stat.Unlock()
	if c != nil && c.gen == gen {
		return c
	}
	c = readStatCache(db.statCachePath())
	if c == nil || c.gen != gen {
		return nil
	}
	db.keepStatCache(c)
	return c
}

// keepStatCache records c (nil: none) as the handle's stat cache.
func (db *DB) keepStatCache(c *statCache) {
	db.stat.Lock()
	db.stat.c = c
	db.stat.Unlock()
}

// clean reports whether s can be written as one field of the cache.
func clean(s string) bool { return !strings.ContainsAny(s, "\t\n\r") }

// saveStatCache writes the cache after a sync committed generation gen.
// Failing to write it is not an error: the next sync takes the full path.
func (db *DB) saveStatCache(gen string, synced int64, files []fileStat, st Stats, extract bool, sources []*sourceWork, kept []Problem) {
	db.keepStatCache(nil) // the next use reads the file
	skipped := map[string]bool{}
	for _, p := range st.Skipped {
		if p.Extractor == "" {
			skipped[p.Path] = true
		}
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\ngen\t%s\nsynced\t%d\nextract\t%t\t%d\t%d\n", statCacheMagic, gen, synced, extract, st.Extracted.Entities, st.Extracted.Edges)
	for _, f := range files {
		if skipped[f.rel] {
			continue
		}
		if !clean(f.rel) {
			_ = os.Remove(db.statCachePath())
			return
		}
		fmt.Fprintf(&b, "L\t%d\t%d\t%s\n", f.size, f.mtime, f.rel)
	}
	db.finishStatCache(&b, sources, kept)
}

// saveStatCacheEntries writes the cache from c, the last cache (from)
// with the changed leaves patched in (SyncPaths: set are the leaves it
// wrote, removed those it removed), as generation gen, and keeps it. When
// only those leaves changed, it appends them to the file as a patch;
// otherwise it rewrites the file.
func (db *DB) saveStatCacheEntries(gen string, from, c *statCache, set, removed []string, entities, edges int, sources []*sourceWork, kept []Problem) {
	c.gen, c.entities, c.edges = gen, entities, edges
	c.sources, c.problems = map[string]statEntry{}, kept
	for _, s := range sources {
		c.sources[s.f.rel] = statEntry{size: s.f.size, mtime: s.f.mtime, extractor: s.ex.Name()}
	}
	if db.appendStatPatch(from, c, set, removed) {
		db.keepStatCache(c)
		return
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\ngen\t%s\nsynced\t%d\nextract\t%t\t%d\t%d\n", statCacheMagic, gen, c.synced, c.extract, entities, edges)
	rels := c.order
	if len(rels) != len(c.leaves) {
		rels = make([]string, 0, len(c.leaves))
		for rel := range c.leaves {
			rels = append(rels, rel)
		}
		slices.Sort(rels)
		c.order = rels
	}
	b.Grow(len(rels) * 64)
	var line []byte
	for _, rel := range rels {
		e := c.leaves[rel]
		if !clean(rel) {
			db.keepStatCache(nil)
			_ = os.Remove(db.statCachePath())
			return
		}
		line = line[:0]
		if e.sha != "" {
			line = append(line, "H\t"...)
		} else {
			line = append(line, "L\t"...)
		}
		line = strconv.AppendInt(line, e.size, 10)
		line = append(line, '\t')
		line = strconv.AppendInt(line, e.mtime, 10)
		line = append(line, '\t')
		if e.sha != "" {
			line = append(line, e.sha...)
			line = append(line, '\t')
		}
		line = append(line, rel...)
		line = append(line, '\n')
		b.Write(line)
	}
	if !db.finishStatCache(&b, sources, kept) {
		db.keepStatCache(nil)
		return
	}
	// The file's identity, for the next save to append to it. Another
	// sync may have replaced it already: a size that differs tells that
	// mostly, and an append to its file is harmless anyway (the patch
	// does not start from that file's generation).
	c.file, c.base, c.logLines = nil, int64(b.Len()), 0
	if fi, err := os.Stat(db.statCachePath()); err == nil && fi.Size() == c.base {
		c.file = fi
	}
	db.keepStatCache(c)
}

// appendStatPatch appends to the cache file the patch taking it from
// generation from.gen to c.gen: the leaves set and removed. It does so
// only when the file is still the one this handle last read or wrote
// (from.file), whose last generation is from's, and when nothing but
// those leaves changed; it reports whether it appended, and records the
// file's new identity in c.
//
// Appends are made under kk's writer lock (SyncPaths runs inside a kk
// transaction), so no two interleave; but other processes read the file
// at any time, and a full sync of another process may replace it at any
// time. A reader reading during the write sees a torn last block, which
// fails its checksum (or has no end yet) and is not applied: it gets
// from.gen, the generation the database had before this sync. A full sync
// replacing the file before the open is seen by the identity check (and
// this sync rewrites the file); one replacing it between the open and the
// write leaves this patch in an unlinked file; and a patch appended to a
// file of another generation (an identity check fooled by a reused
// inode) does not start from that file's generation, so no reader applies
// it. SyncPaths checks, inside its database transaction, that the
// database was at from.gen, so a patch from from.gen to c.gen says what
// the sync did.
func (db *DB) appendStatPatch(from, c *statCache, set, removed []string) bool {
	lines := len(set) + len(removed) + 2
	if from.file == nil || from.logLines+lines > maxLogLines || c.entities != from.entities || c.edges != from.edges ||
		!maps.Equal(c.sources, from.sources) || !slices.Equal(c.problems, from.problems) {
		return false
	}
	b := make([]byte, 0, 64*lines)
	b = fmt.Appendf(b, "patch\t%s\t%s\n", from.gen, c.gen)
	for _, rel := range set {
		e, ok := c.leaves[rel]
		if !ok || e.sha == "" || !clean(rel) {
			return false
		}
		b = fmt.Appendf(b, "H\t%d\t%d\t%s\t%s\n", e.size, e.mtime, e.sha, rel)
	}
	for _, rel := range removed {
		if !clean(rel) {
			return false
		}
		b = fmt.Appendf(b, "D\t%s\n", rel)
	}
	b = fmt.Appendf(b, "end\t%s\t%08x\n", c.gen, crc32.ChecksumIEEE(b))
	size := from.file.Size()
	if size-from.base+int64(len(b)) > from.base {
		return false
	}
	path := db.statCachePath()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }()
	if fi, err := f.Stat(); err != nil || !sameFile(fi, from.file) {
		return false
	}
	// One write, so that the block lands whole in one place; a reader
	// reading meanwhile may see it torn, and then does not apply it.
	if _, err := f.Write(b); err != nil {
		// A half-written block fails its checksum; the file goes all the
		// same, and the caller rewrites it.
		_ = os.Remove(path)
		return false
	}
	c.file, c.base, c.logLines = nil, from.base, from.logLines+lines
	if fi, err := f.Stat(); err == nil && fi.Size() == size+int64(len(b)) {
		c.file = fi
	}
	return true
}

// sameFile reports whether a and b are the same file with the same size
// and mtime: a file that nothing has written to or replaced in between.
func sameFile(a, b os.FileInfo) bool {
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// insertSorted inserts s in sorted order when order is known (not nil).
func insertSorted(order []string, s string) []string {
	if order == nil {
		return nil
	}
	i, found := slices.BinarySearch(order, s)
	if found {
		return order
	}
	return slices.Insert(order, i, s)
}

// removeSorted removes s from sorted order when order is known.
func removeSorted(order []string, s string) []string {
	if order == nil {
		return nil
	}
	if i, found := slices.BinarySearch(order, s); found {
		return slices.Delete(order, i, i+1)
	}
	return order
}

// finishStatCache adds the sources and kept problems to a cache being
// written, and writes it.
// It reports whether the file was written.
func (db *DB) finishStatCache(b *bytes.Buffer, sources []*sourceWork, kept []Problem) bool {
	for _, s := range sources {
		if !clean(s.f.rel) {
			_ = os.Remove(db.statCachePath())
			return false
		}
		fmt.Fprintf(b, "S\t%d\t%d\t%s\t%s\n", s.f.size, s.f.mtime, s.ex.Name(), s.f.rel)
	}
	for _, p := range kept {
		if !clean(p.Path) || !clean(p.Msg) || !clean(p.Extractor) {
			_ = os.Remove(db.statCachePath())
			return false
		}
		fmt.Fprintf(b, "P\t%s\t%s\t%s\n", p.Extractor, p.Path, p.Msg)
	}
	if err := atomicfile.Replace(db.statCachePath(), b.Bytes(), 0o644); err != nil {
		_ = os.Remove(db.statCachePath())
		return false
	}
	return true
}

// readStatCache reads the cache file at path: its base, then the patches
// that apply (see the top of this file); nil when there is none, or its
// base is damaged.
func readStatCache(path string) *statCache {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer func() { _ = f.Close() }()
	fi, err := f.Stat()
	if err != nil {
		return nil
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil
	}
	raw := buf.Bytes()
	data := string(raw)
	line, off, ok := cutLine(data, 0)
	if !ok || line != statCacheMagic {
		return nil
	}
	c := &statCache{leaves: map[string]statEntry{}, sources: map[string]statEntry{}}
	for off < len(data) && !strings.HasPrefix(data[off:], "patch\t") {
		line, off, ok = cutLine(data, off)
		if !ok {
			return nil // the base is written whole, with a newline
		}
		if rest, ok := strings.CutPrefix(line, "L\t"); ok {
			// The common line, one per leaf: parsed without splitting.
			size, rest, ok1 := strings.Cut(rest, "\t")
			mtime, rel, ok2 := strings.Cut(rest, "\t")
			var e statEntry
			var err1, err2 error
			e.size, err1 = strconv.ParseInt(size, 10, 64)
			e.mtime, err2 = strconv.ParseInt(mtime, 10, 64)
			if !ok1 || !ok2 || err1 != nil || err2 != nil || strings.Contains(rel, "\t") {
				return nil
			}
			c.leaves[rel] = e
			continue
		}
		f := strings.Split(line, "\t")
		var err error
		switch {
		case f[0] == "gen" && len(f) == 2:
			c.gen = f[1]
		case f[0] == "synced" && len(f) == 2:
			c.synced, err = strconv.ParseInt(f[1], 10, 64)
		case f[0] == "extract" && len(f) == 4:
			c.extract = f[1] == "true"
			c.entities, err = strconv.Atoi(f[2])
			if err == nil {
				c.edges, err = strconv.Atoi(f[3])
			}
		case f[0] == "H" && len(f) == 5:
			var e statEntry
			e, err = parseHashLine(f)
			c.leaves[f[4]] = e
		case f[0] == "L" && len(f) == 4:
			var e statEntry
			if e.size, err = strconv.ParseInt(f[1], 10, 64); err == nil {
				e.mtime, err = strconv.ParseInt(f[2], 10, 64)
			}
			c.leaves[f[3]] = e
		case f[0] == "S" && len(f) == 5:
			e := statEntry{extractor: f[3]}
			if e.size, err = strconv.ParseInt(f[1], 10, 64); err == nil {
				e.mtime, err = strconv.ParseInt(f[2], 10, 64)
			}
			c.sources[f[4]] = e
		case f[0] == "P" && len(f) == 4:
			c.problems = append(c.problems, Problem{Extractor: f[1], Path: f[2], Msg: f[3]})
		default:
			return nil
		}
		if err != nil {
			return nil
		}
	}
	if c.gen == "" {
		return nil
	}
	c.base = int64(off)
	// The file read is the one to append to only when every patch in it
	// applied and nothing was appended since its stat.
	if c.applyPatches(raw, data, off) && int64(len(raw)) == fi.Size() {
		c.file = fi
	}
	return c
}

// cutLine returns the line of s starting at off, without its newline, and
// the offset of the next; ok is false when the line has no newline.
func cutLine(s string, off int) (line string, next int, ok bool) {
	i := strings.IndexByte(s[off:], '\n')
	if i < 0 {
		return s[off:], len(s), false
	}
	return s[off : off+i], off + i + 1, true
}

// parseHashLine parses the fields of an H line.
func parseHashLine(f []string) (statEntry, error) {
	e := statEntry{sha: f[3]}
	var err error
	if e.size, err = strconv.ParseInt(f[1], 10, 64); err == nil {
		e.mtime, err = strconv.ParseInt(f[2], 10, 64)
	}
	return e, err
}

// applyPatches applies to c the patch blocks of data (raw as a string)
// from off on, in order, each only when it starts from c's generation
// and ends whole with its checksum. It stops at the first that does not,
// and reports whether it applied them all.
func (c *statCache) applyPatches(raw []byte, data string, off int) bool {
	type change struct {
		rel string
		e   statEntry
		del bool
	}
	var changes []change
	for off < len(data) {
		start := off
		line, next, ok := cutLine(data, off)
		f := strings.Split(line, "\t")
		if !ok || len(f) != 3 || f[0] != "patch" || f[1] != c.gen {
			return false
		}
		togen := f[2]
		changes = changes[:0]
		for done := false; !done; {
			at := next
			line, next, ok = cutLine(data, at)
			if !ok {
				return false
			}
			f := strings.Split(line, "\t")
			switch {
			case f[0] == "H" && len(f) == 5:
				e, err := parseHashLine(f)
				if err != nil {
					return false
				}
				changes = append(changes, change{rel: f[4], e: e})
			case f[0] == "D" && len(f) == 2:
				changes = append(changes, change{rel: f[1], del: true})
			case f[0] == "end" && len(f) == 3:
				if f[1] != togen || f[2] != fmt.Sprintf("%08x", crc32.ChecksumIEEE(raw[start:at])) {
					return false
				}
				done = true
			default:
				return false
			}
		}
		for _, ch := range changes {
			if ch.del {
				delete(c.leaves, ch.rel)
			} else {
				c.leaves[ch.rel] = ch.e
			}
		}
		c.gen = togen
		c.logLines += len(changes) + 2
		off = next
	}
	return true
}

// fastSync answers a sync from the stat cache when every leaf and source
// file is as the last sync left it and old enough to be trusted.
func (db *DB) fastSync(ctx context.Context, files []fileStat, problems []Problem, ex *Extraction, sources []*sourceWork, srcProblems []Problem) (Stats, bool) {
	gen, err := db.Meta(ctx, "stat_gen")
	if err != nil {
		return Stats{}, false
	}
	c := db.statCacheFor(gen)
	if c == nil || c.extract != (ex != nil) || len(c.leaves) != len(files) || len(c.sources) != len(sources) {
		return Stats{}, false
	}
	trust := c.synced - int64(store.RacyWindow)
	hashChecks := 0
	for _, f := range files {
		e, ok := c.leaves[f.rel]
		if !ok || e.size != f.size || e.mtime != f.mtime {
			return Stats{}, false
		}
		if f.mtime < trust {
			continue
		}
		// Too recent to trust by its stat: a leaf a transaction wrote is
		// checked by its hash (a few files), anything else takes the full
		// path.
		if e.sha == "" || hashChecks == maxHashChecks {
			return Stats{}, false
		}
		hashChecks++
		data, err := os.ReadFile(f.abs)
		if err != nil {
			return Stats{}, false
		}
		if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != e.sha {
			return Stats{}, false
		}
	}
	for _, s := range sources {
		e, ok := c.sources[s.f.rel]
		if !ok || e.extractor != s.ex.Name() || e.size != s.f.size || e.mtime != s.f.mtime || s.f.mtime >= trust {
			return Stats{}, false
		}
	}
	st := Stats{Leaves: len(files), Unchanged: len(files), Skipped: problems}
	if ex != nil {
		st.Extracted = ExtractStats{Sources: len(sources), Entities: c.entities, Edges: c.edges, Unchanged: len(sources)}
		st.Skipped = append(append(slices.Clone(problems), srcProblems...), c.problems...)
	}
	sortProblems(st.Skipped)
	st.Gen = c.gen
	return st, true
}
