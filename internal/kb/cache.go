package kb

import (
	"bytes"
	"encoding/gob"
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

const cacheVersion = 1

// racyWindow is how close to the cache's write time an mtime must be for
// the entry to be re-read anyway.
const racyWindow = 2 * time.Second

type leafCache struct {
	Version int
	Written int64
	Entries []cacheEntry
	entries map[string]*cacheEntry
}

type cacheEntry struct {
	Rel         string
	Size        int64
	Mtime       int64
	Hash        string
	Format      int
	Type        string
	Title       string
	Description string
	Tags        []string
	ID          string
	DerivedFrom []string
	RelatesTo   []string
	DependsOn   []string
	Confidence  string
	Status      string
	StaleAfter  string
	BodySize    int
}

func (k *KB) loadCache() *leafCache {
	data, err := os.ReadFile(k.CachePath())
	if err != nil {
		return nil
	}
	var c leafCache
	if gob.NewDecoder(bytes.NewReader(data)).Decode(&c) != nil || c.Version != cacheVersion {
		return nil
	}
	c.entries = make(map[string]*cacheEntry, len(c.Entries))
	for i := range c.Entries {
		e := &c.Entries[i]
		c.entries[e.Rel] = e
	}
	return &c
}

func (c *leafCache) lookup(f leafFile) (*node.Node, string, bool) {
	e, ok := c.entries[f.rel]
	if !ok || e.Size != f.size || e.Mtime != f.mtime || f.mtime >= c.Written-int64(racyWindow) {
		return nil, "", false
	}
	n := &node.Node{
		Path: e.Rel, Format: e.Format, Type: e.Type, Title: e.Title, Description: e.Description,
		Tags: e.Tags, ID: e.ID, DerivedFrom: e.DerivedFrom, RelatesTo: e.RelatesTo, DependsOn: e.DependsOn,
		Confidence: e.Confidence, Status: e.Status, StaleAfter: e.StaleAfter, BodySize: e.BodySize,
	}
	return n, e.Hash, true
}

func (k *KB) saveCache(files []leafFile, leaves []*node.Node, hashes []string) {
	c := leafCache{Version: cacheVersion, Written: time.Now().UnixNano(), Entries: make([]cacheEntry, len(files))}
	for i, f := range files {
		n := leaves[i]
		c.Entries[i] = cacheEntry{
			Rel: f.rel, Size: f.size, Mtime: f.mtime, Hash: hashes[i],
			Format: n.Format, Type: n.Type, Title: n.Title, Description: n.Description, Tags: n.Tags, ID: n.ID,
			DerivedFrom: n.DerivedFrom, RelatesTo: n.RelatesTo, DependsOn: n.DependsOn, Confidence: n.Confidence,
			Status: n.Status, StaleAfter: n.StaleAfter, BodySize: n.BodySize,
		}
	}
	var buf bytes.Buffer
	if gob.NewEncoder(&buf).Encode(&c) != nil {
		return
	}
	if os.MkdirAll(k.StateDir(), 0o755) != nil {
		return
	}
	// The cache is an optimisation: failing to save it is not an error.
	_ = atomicfile.Write(k.CachePath(), buf.Bytes(), 0o644)
}
