package index

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
}

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
			os.Remove(db.statCachePath())
			return
		}
		fmt.Fprintf(&b, "L\t%d\t%d\t%s\n", f.size, f.mtime, f.rel)
	}
	db.finishStatCache(&b, sources, kept)
}

// saveStatCacheEntries writes the cache from c, the last cache with the
// changed leaves patched in (SyncPaths), as generation gen, and keeps it.
func (db *DB) saveStatCacheEntries(gen string, c *statCache, entities, edges int, sources []*sourceWork, kept []Problem) {
	c.gen, c.entities, c.edges = gen, entities, edges
	c.sources, c.problems = map[string]statEntry{}, kept
	for _, s := range sources {
		c.sources[s.f.rel] = statEntry{size: s.f.size, mtime: s.f.mtime, extractor: s.ex.Name()}
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
			os.Remove(db.statCachePath())
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
	if db.finishStatCache(&b, sources, kept) {
		db.keepStatCache(c)
	} else {
		db.keepStatCache(nil)
	}
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
			os.Remove(db.statCachePath())
			return false
		}
		fmt.Fprintf(b, "S\t%d\t%d\t%s\t%s\n", s.f.size, s.f.mtime, s.ex.Name(), s.f.rel)
	}
	for _, p := range kept {
		if !clean(p.Path) || !clean(p.Msg) || !clean(p.Extractor) {
			os.Remove(db.statCachePath())
			return false
		}
		fmt.Fprintf(b, "P\t%s\t%s\t%s\n", p.Extractor, p.Path, p.Msg)
	}
	if err := atomicfile.Replace(db.statCachePath(), b.Bytes(), 0o644); err != nil {
		os.Remove(db.statCachePath())
		return false
	}
	return true
}

func readStatCache(path string) *statCache {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	c := &statCache{leaves: map[string]statEntry{}, sources: map[string]statEntry{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	if !sc.Scan() || sc.Text() != statCacheMagic {
		return nil
	}
	for sc.Scan() {
		line := sc.Text()
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
			e := statEntry{sha: f[3]}
			if e.size, err = strconv.ParseInt(f[1], 10, 64); err == nil {
				e.mtime, err = strconv.ParseInt(f[2], 10, 64)
			}
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
	if sc.Err() != nil || c.gen == "" {
		return nil
	}
	return c
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
