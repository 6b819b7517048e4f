package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"os"
	"time"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/node"
)

// The leaf cache keeps the parsed fields of every leaf, keyed by path, size
// and modification time, in .state/leaves.cache (gitignored). A read of an
// unchanged tree then costs one stat per leaf instead of a parse. Entries
// whose mtime is too close to the moment the cache was written are not
// trusted, since a same-size edit within the file system's timestamp
// granularity would otherwise go unseen.
//
// The format is a small binary encoding (a magic line, then varint-prefixed
// fields) because decoding it is on the path of every read command.

const cacheMagic = "kk-leaf-cache 3\n"

// RacyWindow is the one racy-timestamp window of every cache kk keeps over
// files (leaf cache, generation cache, index stat cache, hook caches): a
// file whose mtime is this close to (or after) the moment a cache recorded
// it is re-read even when its size and mtime match, since a same-size edit
// within the file system's timestamp granularity would otherwise go
// unseen.
const RacyWindow = 2 * time.Second

type leafCache struct {
	written int64
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	Size, mtime int64
	hash        string
	n           node.Node
}

func (k *KB) loadCache() *leafCache {
	data, err := os.ReadFile(k.CachePath())
	if err != nil || !bytes.HasPrefix(data, []byte(cacheMagic)) {
		return nil
	}
	r := &cacheReader{s: string(data[len(cacheMagic):])}
	c := &leafCache{written: r.int()}
	count := r.int()
	if r.err != nil || count < 0 || count > int64(len(data)) {
		return nil
	}
	c.entries = make(map[string]*cacheEntry, count)
	for range count {
		e := &cacheEntry{}
		rel := r.str()
		e.Size, e.mtime, e.hash = r.int(), r.int(), r.str()
		e.n = node.Node{
			Path: rel, Format: int(r.int()), Type: r.str(), Title: r.str(), Description: r.str(),
			Tags: r.list(), ID: r.str(), DerivedFrom: r.list(), RelatesTo: r.list(), DependsOn: r.list(),
			Confidence: r.str(), Status: r.str(), StaleAfter: r.str(), BodySize: int(r.int()),
		}
		if links := r.list(); len(links) > 0 {
			e.n.GraphLinks = links // a leaf without graph links has nil, as Parse gives it
		}
		if r.err != nil {
			return nil
		}
		c.entries[rel] = e
	}
	return c
}

func (c *leafCache) lookup(f LeafFile) (*node.Node, string, bool) {
	e := c.entry(f)
	if e == nil {
		return nil, "", false
	}
	n := e.n
	return &n, e.hash, true
}

// entry returns the entry of f when it can be trusted, else nil: its
// size and mtime are the entry's, and the mtime is older than the racy
// window before the read that recorded it, or the watch reports the leaf
// quiet since.
func (c *leafCache) entry(f LeafFile) *cacheEntry {
	e, ok := c.entries[f.Rel]
	if !ok || e.Size != f.Size || e.mtime != f.mtime || (!f.quiet && f.mtime >= c.written-int64(RacyWindow)) {
		return nil
	}
	return e
}

func (k *KB) saveCache(files []LeafFile, leaves []*node.Node, hashes []string) {
	k.writeCache(time.Now().UnixNano(), len(files), func(w *cacheWriter) {
		for i, f := range files {
			w.entry(f.Rel, f.Size, f.mtime, hashes[i], leaves[i])
		}
	})
}

// writeCache writes the leaf cache file: count entries, which each
// writes, recorded as of written.
func (k *KB) writeCache(written int64, count int, each func(w *cacheWriter)) {
	w := &cacheWriter{b: make([]byte, 0, 64+count*256)}
	w.b = append(w.b, cacheMagic...)
	w.int(written)
	w.int(int64(count))
	each(w)
	if os.MkdirAll(k.StateDir(), 0o755) != nil {
		return
	}
	// The cache is an optimisation: failing to save it is not an error.
	_ = atomicfile.Replace(k.CachePath(), w.b, 0o644)
}

func (w *cacheWriter) entry(rel string, size, mtime int64, hash string, n *node.Node) {
	w.str(rel)
	w.int(size)
	w.int(mtime)
	w.str(hash)
	w.int(int64(n.Format))
	w.str(n.Type)
	w.str(n.Title)
	w.str(n.Description)
	w.list(n.Tags)
	w.str(n.ID)
	w.list(n.DerivedFrom)
	w.list(n.RelatesTo)
	w.list(n.DependsOn)
	w.str(n.Confidence)
	w.str(n.Status)
	w.str(n.StaleAfter)
	w.int(int64(n.BodySize))
	w.list(n.GraphLinks)
}

// cacheWriter encodes the cache into one growing slice (appends are
// cheaper than a buffered writer's calls for fields of a few bytes).
type cacheWriter struct{ b []byte }

func (c *cacheWriter) int(v int64) { c.b = binary.AppendVarint(c.b, v) }

func (c *cacheWriter) str(s string) {
	c.int(int64(len(s)))
	c.b = append(c.b, s...)
}

func (c *cacheWriter) list(l []string) {
	c.int(int64(len(l)))
	for _, s := range l {
		c.str(s)
	}
}

// cacheReader decodes from one string, so decoded strings share its memory
// instead of each being allocated.
type cacheReader struct {
	s   string
	err error
}

var errCorruptCache = errors.New("corrupt leaf cache")

func (c *cacheReader) int() int64 {
	if c.err != nil {
		return 0
	}
	var x uint64
	var shift uint
	for i := 0; i < len(c.s) && i < binary.MaxVarintLen64; i++ {
		b := c.s[i]
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			c.s = c.s[i+1:]
			v := int64(x >> 1)
			if x&1 != 0 {
				v = ^v
			}
			return v
		}
		shift += 7
	}
	c.err = errCorruptCache
	return 0
}

func (c *cacheReader) str() string {
	n := c.int()
	if c.err != nil || n < 0 || n > int64(len(c.s)) {
		c.err = io.ErrUnexpectedEOF
		return ""
	}
	s := c.s[:n]
	c.s = c.s[n:]
	return s
}

func (c *cacheReader) list() []string {
	n := c.int()
	if c.err != nil || n < 0 || n > int64(len(c.s)) {
		c.err = io.ErrUnexpectedEOF
		return nil
	}
	out := make([]string, n)
	for i := range out {
		out[i] = c.str()
	}
	return out
}
