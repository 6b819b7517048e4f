package store

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"sync"

	"github.com/kk-project/kk/internal/node"
)

// treeMemo is the leaf cache a process keeps in memory for one knowledge
// base, so that a long-running process (kk serve, kk mcp) reading the tree
// once per transaction neither decodes .state/leaves.cache nor rewrites it
// every time. A read still stats every leaf (one walk of nodes/), so that
// a hand edit or a git pull between two reads is seen exactly as the leaf
// cache file would see it: an entry is trusted by path, size and mtime,
// and only when the mtime is older than RacyWindow before the read that
// recorded it.
//
// The file is still written, but only every memoFlushEvery changed leaves
// and when the KB is closed: until then the next process re-reads the few
// leaves the file does not have yet, which is what it does after any write
// anyway.
type treeMemo struct {
	mu      sync.Mutex // held for a whole ReadTree: reads take turns
	k       *KB
	cache   *leafCache // nil until the first read
	unsaved int        // leaves changed since the file was written
	save    bool       // a read that may write the file ran since
	watch   *treeWatch // set by WatchTree

	// The maps of the last read's tree, as it read them: the next read
	// derives its own from them (derive). nil until a read keeps them,
	// and after a read that could not derive.
	hashes map[string]string
	byID   map[string]*node.Node

	// snaps holds, when raceChecks is on, a copy of every leaf node a
	// read handed out, as it was then.
	snaps map[*cacheEntry]node.Node
}

// keep records the maps of t, a tree just read in full, for the next
// read to derive its own from.
func (m *treeMemo) keep(t *Tree) {
	m.hashes, m.byID = maps.Clone(t.Hashes), maps.Clone(t.byID)
}

// derive makes the maps of a read's tree from the last read's, changing
// only what the leaves it parsed again change: a long-running process
// reading a tree of ten thousand leaves after a write that changed one
// then neither hashes ten thousand paths nor ids into new maps. files are
// the read's leaves, entries their cache entries, fresh the indexes of
// those parsed (new entries). It runs before update, while the memo's
// cache still holds the last read's entries. It reports false when it
// cannot: no kept maps, a leaf gone since (rare: the full build handles
// it), or an id that collides, which the full build reports with the
// same words as ever.
func (m *treeMemo) derive(files []LeafFile, entries []*cacheEntry, fresh []int) (map[string]string, map[string]*node.Node, bool) {
	if m.hashes == nil || m.cache == nil {
		return nil, nil, false
	}
	replaced := 0
	for _, i := range fresh {
		if m.cache.entries[files[i].Rel] != nil {
			replaced++
		}
	}
	if len(files)-len(fresh)+replaced != len(m.cache.entries) {
		return nil, nil, false
	}
	// Every id a replaced leaf had goes first, so that two leaves may
	// swap ids.
	for _, i := range fresh {
		if old := m.cache.entries[files[i].Rel]; old != nil {
			if key := IDKey(old.n.ID); m.byID[key] == &old.n {
				delete(m.byID, key)
			}
		}
	}
	for _, i := range fresh {
		e := entries[i]
		key := IDKey(e.n.ID)
		if _, dup := m.byID[key]; dup {
			m.hashes, m.byID = nil, nil // changed halfway: the full build keeps new ones
			return nil, nil, false
		}
		m.byID[key] = &e.n
		m.hashes[files[i].Rel] = e.hash
	}
	return maps.Clone(m.hashes), maps.Clone(m.byID), true
}

// shared records that a read hands out e's node (see checkShared).
func (m *treeMemo) shared(e *cacheEntry) {
	if !raceChecks {
		return
	}
	if m.snaps == nil {
		m.snaps = map[*cacheEntry]node.Node{}
	}
	if _, ok := m.snaps[e]; !ok {
		m.snaps[e] = cloneNode(e.n)
	}
}

// checkShared panics, when raceChecks is on, if a leaf node some read
// handed out was changed since: the trees of a process share their leaves
// with its memo, and a change would be served to every later read.
func (m *treeMemo) checkShared() {
	for e, snap := range m.snaps {
		if !reflect.DeepEqual(e.n, snap) {
			panic(fmt.Sprintf("store: leaf %s of a Tree was changed; the leaves of a Tree are shared and read-only (copy one, or read it with ReadLeaf, to change it)", e.n.Path))
		}
	}
}

// cloneNode copies n and its lists (the YAML values it keeps verbatim are
// shared).
func cloneNode(n node.Node) node.Node {
	c := n
	c.Tags, c.DerivedFrom, c.RelatesTo, c.DependsOn = slices.Clone(n.Tags), slices.Clone(n.DerivedFrom), slices.Clone(n.RelatesTo), slices.Clone(n.DependsOn)
	c.Phrasings, c.GraphLinks, c.Body = slices.Clone(n.Phrasings), slices.Clone(n.GraphLinks), slices.Clone(n.Body)
	return c
}

type treeMemoKey struct{}

// memoFlushEvery is how many changed leaves the memo lets the cache file
// fall behind before writing it again.
const memoFlushEvery = 256

// update records what a read found, as of start (taken before the walk):
// every leaf's stat, hash and parsed fields. cache is what the read used
// (the memo's, or the file's when fromDisk), fresh the indexes of the
// leaves it parsed.
func (m *treeMemo) update(start int64, cache *leafCache, fromDisk bool, files []LeafFile, entries []*cacheEntry, fresh []int, noSave bool) {
	wasNil := cache == nil
	if wasNil {
		cache = &leafCache{entries: make(map[string]*cacheEntry, len(files))}
	}
	changed, removed := 0, 0
	for _, i := range fresh {
		f := files[i]
		e := entries[i]
		if old := cache.entries[f.Rel]; old == nil || old.Size != f.Size || old.mtime != f.mtime || old.hash != e.hash {
			changed++
		}
		cache.entries[f.Rel] = e
		m.shared(e)
	}
	if len(cache.entries) != len(files) {
		live := make(map[string]bool, len(files))
		for _, f := range files {
			live[f.Rel] = true
		}
		for rel := range cache.entries {
			if !live[rel] {
				delete(cache.entries, rel)
				removed++
			}
		}
	}
	cache.written = start
	m.cache = cache
	if fromDisk {
		// The file was just read; it is rewritten when this read parsed
		// or dropped anything, as a read without the memo does.
		m.unsaved = 0
		if wasNil || len(fresh) > 0 || removed > 0 {
			m.unsaved = max(changed+removed, 1)
		}
	} else {
		m.unsaved += changed + removed
	}
	m.save = m.save || !noSave
	switch {
	case noSave:
	case fromDisk && m.unsaved > 0:
		// A command's read: written in the tree's order from what it
		// read, as of the read.
		m.k.writeCache(start, len(files), func(w *cacheWriter) {
			for i, f := range files {
				w.entry(f.Rel, f.Size, f.mtime, entries[i].hash, &entries[i].n)
			}
		})
		m.unsaved = 0
	case m.unsaved >= memoFlushEvery:
		m.flush()
	}
}

// flush writes the cache file from the memo.
func (m *treeMemo) flush() {
	c := m.cache
	m.k.writeCache(c.written, len(c.entries), func(w *cacheWriter) {
		for rel, e := range c.entries {
			w.entry(rel, e.Size, e.mtime, e.hash, &e.n)
		}
	})
	m.unsaved = 0
}

// Close writes the cache file when the memo holds leaves it lacks (a
// read that promised to write nothing never leads to a write).
func (m *treeMemo) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.cache != nil && m.unsaved > 0 && m.save {
		m.flush()
	}
	if m.watch != nil {
		err := m.watch.close()
		m.watch = nil
		return err
	}
	return nil
}
