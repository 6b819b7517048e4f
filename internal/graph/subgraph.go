package graph

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Reads that concern a few entities (get, context) do not read the whole
// graph: they ask the index for the rows they need — the atoms owning a
// pattern that may match the paths, the entity asked for — and for the
// rows those name (their molecules, members and related entities), and
// run the ordinary code on that part of the graph. The answer is the same
// as over the whole graph: an atom left out can neither match a path nor
// be named by a view.

// subgraph reads the given atoms and molecules from the index with their
// bodies, the atoms of the molecules when members is set, then the
// molecules and related entities the rows name.
func subgraph(ctx context.Context, k *store.KB, db *index.DB, ids []string, members bool) (*Graph, error) {
	g := &Graph{Atoms: map[string]*Atom{}, Molecules: map[string]*Molecule{}, Leaves: map[string]*node.Node{}, k: k, db: db, full: true}
	rows, err := db.GraphRowsByID(ctx, ids)
	if err != nil {
		return nil, err
	}
	if err := g.addRows(rows); err != nil {
		return nil, err
	}
	if members && len(g.Molecules) > 0 {
		rows, err := db.GraphRowsByMolecule(ctx, sortedKeys(g.Molecules))
		if err != nil {
			return nil, err
		}
		if err := g.addRows(rows); err != nil {
			return nil, err
		}
	}
	// The molecules of the atoms and the entities related lists name, for
	// grouping and for the names in the views.
	var more []string
	want := func(id string) {
		if _, a := g.Atoms[store.IDKey(id)]; !a {
			if _, m := g.Molecules[store.IDKey(id)]; !m && id != "" {
				more = append(more, id)
			}
		}
	}
	for _, a := range g.Atoms {
		want(a.Molecule)
		for _, r := range a.Related {
			want(r.ID)
		}
	}
	for _, m := range g.Molecules {
		for _, r := range m.Related {
			want(r.ID)
		}
	}
	if len(more) > 0 {
		slices.Sort(more)
		rows, err := db.GraphRowsByID(ctx, slices.Compact(more))
		if err != nil {
			return nil, err
		}
		if err := g.addRows(rows); err != nil {
			return nil, err
		}
	}
	return g, nil
}

func (g *Graph) addRows(rows []*index.GraphRow) error {
	for _, row := range rows {
		r := &reader{path: row.Path, src: row}
		if row.Type == TypeMolecule {
			m, err := r.molecule(row.ID, row.Type, row.Title, []byte(row.Body))
			if err != nil {
				return err
			}
			g.Molecules[store.IDKey(m.ID)] = m
			continue
		}
		if _, isAtom := row.Extra(KeyPaths); !isAtom {
			continue
		}
		a, err := r.atom(row.ID, row.Type, row.Title, []byte(row.Body))
		if err != nil {
			return err
		}
		g.Atoms[store.IDKey(a.ID)] = a
	}
	return nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// contextGraph is the part of the graph a context lookup of paths needs:
// the atoms with a pattern matching one of the paths, found among those
// whose bucket one of the paths falls in.
func contextGraph(ctx context.Context, k *store.KB, paths []string) (*Graph, error) {
	db, err := BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	st, err := SyncForRead(ctx, k, db)
	if err != nil {
		return nil, err
	}
	var keys, buckets []string
	for _, p := range paths {
		key := NormalizePath(k.Root, p)
		if key == "" {
			key = strings.TrimSpace(p)
		}
		if key != "" {
			keys = append(keys, key)
			buckets = append(buckets, index.PathBuckets(key)...)
		}
	}
	slices.Sort(buckets)
	cands, err := patternsIn(ctx, k, db, st.Gen, slices.Compact(buckets))
	if err != nil {
		return nil, err
	}
	// Only the atoms with a pattern that does match are read.
	set := NewPatternSet()
	for i, c := range cands {
		set.Add(i, c.Pattern)
	}
	var rids []int64
	for _, key := range keys {
		set.Match(key, func(i int, _ string) { rids = append(rids, cands[i].RID) })
	}
	slices.Sort(rids)
	ids, err := db.AtomIDs(ctx, slices.Compact(rids))
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return subgraph(ctx, k, db, slices.Compact(ids), false)
}

// getGraph is the part of the graph a get of id needs, from the index as
// it is (get reads the entity itself from its leaf).
func getGraph(ctx context.Context, k *store.KB, kind, id string, synced bool) (*Graph, error) {
	db, err := BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	if synced {
		if _, err := SyncForRead(ctx, k, db); err != nil {
			return nil, err
		}
	} else if gen, err := db.Meta(ctx, "stat_gen"); err != nil || gen == "" {
		if _, err := SyncForRead(ctx, k, db); err != nil { // never synced
			return nil, err
		}
	}
	return subgraph(ctx, k, db, []string{id}, kind == KindMolecule)
}

// A long-running process asks for the same buckets again and again; the
// knowledge base value keeps the patterns of each bucket read, per index,
// for one generation of the index.
type bucketCache struct {
	sync.Mutex
	byDB map[string]*bucketEntry
}

type bucketCacheKey struct{}

type bucketEntry struct {
	gen      string
	patterns map[string][]index.PatternRow // by bucket
}

// patternsIn is db.PatternsIn through the bucket cache, for the index at
// generation gen ("" bypasses the cache).
func patternsIn(ctx context.Context, k *store.KB, db *index.DB, gen string, buckets []string) ([]index.PatternRow, error) {
	if gen == "" {
		return db.PatternsIn(ctx, buckets)
	}
	bucketCache := store.Memo(k, bucketCacheKey{}, func() *bucketCache { return &bucketCache{byDB: map[string]*bucketEntry{}} })
	bucketCache.Lock()
	e := bucketCache.byDB[db.Path]
	if e == nil || e.gen != gen {
		e = &bucketEntry{gen: gen, patterns: map[string][]index.PatternRow{}}
		bucketCache.byDB[db.Path] = e
	}
	var out []index.PatternRow
	var missing []string
	for _, b := range buckets {
		if rows, ok := e.patterns[b]; ok {
			out = append(out, rows...)
		} else {
			missing = append(missing, b)
		}
	}
	bucketCache.Unlock()
	if len(missing) == 0 {
		return out, nil
	}
	rows, err := db.PatternsIn(ctx, missing)
	if err != nil {
		return nil, err
	}
	fresh := make(map[string][]index.PatternRow, len(missing))
	for _, b := range missing {
		fresh[b] = nil // a bucket without patterns is worth remembering too
	}
	for _, r := range rows {
		fresh[r.Bucket] = append(fresh[r.Bucket], r)
	}
	bucketCache.Lock()
	if bucketCache.byDB[db.Path] == e {
		maps.Copy(e.patterns, fresh)
	}
	bucketCache.Unlock()
	return append(out, rows...), nil
}
