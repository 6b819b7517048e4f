package index

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/treewatch"
)

// A sync finds what changed under nodes/ by a walk: it lists every folder
// and stats every leaf, and compares each with the leaf state (about 60
// ms of CPU per sync at 10,000 leaves, most of it fstatat). A long-running
// process (kk serve) instead asks the kernel where the tree changed since
// its last sync (Watch, internal/treewatch): the folders named are read
// again, those created or removed with everything under them, and
// compared with the leaf state by the same rule (store.Unchanged, the
// racy window); the other folders are as the state records them. It is
// not a cache: the watcher only says where to look, or that it cannot
// tell, and the sync then walks the whole tree as before.
//
// Another writer of the index (another process's sync, or this
// process's transaction through SyncPaths) derives what it writes from
// the tree as it read it, which may be before a change the kernel has
// already reported to this handle, and applied: a sync that listed a
// folder before a person's write and commits after this handle's sync
// records the folder as it was, and the kernel does not report the
// change again. So the handle keeps the state its last watched sync left
// (vouched); when the index holds another generation, the folders whose
// state differs from it are read again too (those it added whole, and
// above those it removed), and a state that changes between the choice
// of the folders and the comparison has the sync choose again. A new handle
// (the file removed and opened anew, a seed copied from another branch)
// starts with a walk (Watch's Unsure).

// ChangeSource tells a sync where the tree under nodes/ changed since the
// last call (treewatch.Watcher).
type ChangeSource interface {
	// Changes waits until every change made before the call is known
	// and returns the folders where something changed since the last
	// call, or All.
	Changes(ctx context.Context) treewatch.Changes
	// Unsure makes the next Changes report All: the sync could not
	// apply what the last one reported.
	Unsure()
}

// watchState is a handle's change source, and the folders the kernel's
// reports do not vouch for.
type watchState struct {
	// mu is held across a watched sync, from the change source's answer
	// to the commit of what it found: two syncs of one handle cannot
	// then each apply half of what changed.
	mu  sync.Mutex
	src ChangeSource
	// linked are the folders a watched sync reads at every sync: those
	// holding a symlink or a leaf with more than one link, whose content
	// may change through another folder (store.Listing.Linked), as the
	// last look at each found them.
	linked map[string]bool
	// vouched is the leaf state the last watched sync left, nil until
	// one succeeded: the state whose folders the kernel named no change
	// in are as they are on disk.
	vouched *treeState
	// watched and walked count the syncs made each way.
	watched, walked int
}

// Watch has this handle's syncs (Sync, SyncWith, Tree, TreeOrSnapshot,
// SyncShape) read only the folders src names instead of walking the tree;
// nil walks again. The next sync walks (src is told Unsure). Only a
// long-running process that owns src (kk serve) sets it.
func (db *DB) Watch(src ChangeSource) {
	db.watch.mu.Lock()
	defer db.watch.mu.Unlock()
	db.watch.src = src
	db.watch.linked = nil
	db.watch.vouched = nil
	if src != nil {
		src.Unsure()
	}
}

// WatchCounts returns how many syncs of this handle used the change
// source, and how many walked the tree (for tests and benchmarks).
func (db *DB) WatchCounts() (watched, walked int) {
	db.watch.mu.Lock()
	defer db.watch.mu.Unlock()
	return db.watch.watched, db.watch.walked
}

func (db *DB) changeSource() ChangeSource {
	db.watch.mu.Lock()
	defer db.watch.mu.Unlock()
	return db.watch.src
}

// syncWatched is sync for a handle with a change source.
func (db *DB) syncWatched(ctx context.Context, nodesDir string, ex *Extraction, facts bool) (st Stats, s *treeState, err error) {
	db.watch.mu.Lock()
	defer db.watch.mu.Unlock()
	src := db.watch.src
	if src == nil { // Watch(nil) meanwhile
		l, base, start, err := db.listAll(ctx, nodesDir)
		if err != nil {
			return Stats{}, nil, err
		}
		return db.syncListed(ctx, nodesDir, start, ex, l, nil, base, facts)
	}
	defer func() {
		if err != nil {
			db.watch.vouched = nil
			src.Unsure()
		}
	}()
	start := time.Now() // before the barrier: the state is as of then at least
	c := src.Changes(ctx)
	for try := 0; ; try++ {
		var l *store.Listing
		var scope map[string]bool
		var base string
		if !c.All && try < maxChoices {
			l, scope, base, err = db.scanChanged(ctx, nodesDir, c)
			if err != nil {
				return Stats{}, nil, err
			}
		}
		linked := db.watch.linked
		if l == nil {
			if l, base, _, err = db.listAll(ctx, nodesDir); err != nil {
				return Stats{}, nil, err
			}
			linked = map[string]bool{}
		}
		st, s, err = db.syncListed(ctx, nodesDir, start, ex, l, scope, base, facts)
		if errors.Is(err, errStateMoved) {
			continue // another writer meanwhile: choose the folders again
		}
		if err != nil {
			return st, s, err
		}
		if scope == nil {
			db.watch.walked++
		} else {
			db.watch.watched++
			for dir := range scope {
				delete(linked, dir)
			}
		}
		for _, dir := range l.Linked {
			linked[dir] = true
		}
		db.watch.linked, db.watch.vouched = linked, s
		return st, s, nil
	}
}

// maxChoices is how many times a watched sync chooses the folders to
// read when another writer changes the leaf state meanwhile, before it
// walks instead.
const maxChoices = 3

// errStateMoved is syncListed's answer when the leaf state is no longer
// the one the folders to read were chosen against (base).
var errStateMoved = errors.New("index: the leaf state changed since the folders to read were chosen")

// scanChanged lists the folders c names, those holding links, and the
// subtrees created or removed, and returns the listing with its scope
// (every folder whose state it decides: see treeState.diffIn). It returns
// a nil listing when the sync must walk instead: the index was never
// synced, or a folder named is not one the state knows (its parent's
// sync failed). base is the generation of the state the choice was made
// on.
func (db *DB) scanChanged(ctx context.Context, nodesDir string, c treewatch.Changes) (*store.Listing, map[string]bool, string, error) {
	s, err := db.readState(ctx)
	if err != nil {
		return nil, nil, "", err
	}
	v := db.watch.vouched
	if s.synced == 0 || db.watch.linked == nil || v == nil {
		return nil, nil, "", nil
	}
	folders := map[string]bool{}
	for _, d := range c.Folders {
		folders[d] = true
	}
	if s.gen != v.gen {
		// Written by another since: what it changed is read again, a
		// folder it added whole (as one the state does not know), and
		// for a folder it removed, the nearest folder above it that the
		// state holds (whose listing finds it, if it is there).
		for d, f := range s.folders {
			if g := v.folders[d]; g == nil || f != g && !f.same(g) {
				folders[d] = true
			}
		}
		for d := range v.folders {
			if s.folders[d] == nil {
				for d != "" && s.folders[d] == nil {
					d = store.DirOf(d)
				}
				folders[d] = true
			}
		}
	}
	for d := range db.watch.linked {
		folders[d] = true
	}
	created := map[string]bool{}
	for _, t := range c.Subtrees {
		created[t] = true
		folders[store.DirOf(t)] = true
	}
	for d := range folders {
		if s.folders[d] == nil && !created[d] && !created[parentIn(d, created)] {
			return nil, nil, "", nil
		}
	}
	list := slices.Sorted(maps.Keys(folders))
	// Read whole: the subtrees created (a folder made and filled before
	// its watch was set has no report of what is in it), and any
	// subfolder the state does not know.
	var trees []string
	found := map[string]bool{} // the subfolders of the folders read
	l, err := store.ScanPart(ctx, nodesDir, list, func(subdirs map[string][]string) ([]string, error) {
		for _, subs := range subdirs {
			for _, sub := range subs {
				found[sub] = true
			}
		}
		for _, d := range list {
			for _, sub := range subdirs[d] {
				if created[sub] || s.folders[sub] == nil {
					trees = append(trees, sub)
				}
			}
		}
		return trees, nil
	})
	if err != nil {
		return nil, nil, "", err
	}
	// The scope: the folders read, those under the subtrees read whole,
	// and, of the state's, those under a folder read whose subfolder
	// list no longer has them (removed, or no longer a folder of the
	// tree) and those under the subtrees.
	scope := make(map[string]bool, len(list)+len(l.Dirs))
	for _, d := range list {
		scope[d] = true
	}
	for _, d := range l.Dirs {
		scope[d] = true
	}
	roots := map[string]bool{}
	for _, t := range trees {
		roots[t] = true
	}
	for t := range created {
		roots[t] = true
	}
	for d := range s.folders {
		if scope[d] || d == "" {
			continue
		}
		if roots[parentIn(d, roots)] || roots[d] {
			scope[d] = true
			continue
		}
		// A subfolder of a folder read, which the read did not find.
		if folders[store.DirOf(d)] && !found[d] {
			roots[d] = true
			scope[d] = true
		}
	}
	// A folder under one found gone is gone too.
	for d := range s.folders {
		if !scope[d] && roots[parentIn(d, roots)] {
			scope[d] = true
		}
	}
	return l, scope, s.gen, nil
}

// parentIn returns the nearest folder above d that is in set, "" when
// none is (so set[parentIn(d, set)] tells whether one is, unless set
// holds "").
func parentIn(d string, set map[string]bool) string {
	for d != "" {
		d = store.DirOf(d)
		if d != "" && set[d] {
			return d
		}
	}
	return ""
}

// readState reads the leaf state without the leaves' facts, from a read
// snapshot (the handle's kept state when it is current).
func (db *DB) readState(ctx context.Context) (*treeState, error) {
	rtx, err := db.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, err
	}
	defer rtx.Rollback()
	return db.state(ctx, rtx, false)
}

// diffIn is diff for a listing of the folders of scope alone (scope nil:
// of the whole tree). A folder of scope that the listing does not hold is
// gone; a folder of the state outside scope is kept as it is.
func (s *treeState) diffIn(l *store.Listing, scope map[string]bool) *walkDiff {
	if scope == nil {
		return s.diff(l)
	}
	sub := &treeState{gen: s.gen, synced: s.synced, folders: make(map[string]*folderState, len(scope))}
	for dir := range scope {
		if f := s.folders[dir]; f != nil {
			sub.folders[dir] = f
		}
	}
	d := s.diffScoped(sub, l)
	return d
}

// diffScoped is sub's diff with l, with the folders of s that sub does
// not hold added as they are (not dirty: walkDiff.next keeps them).
func (s *treeState) diffScoped(sub *treeState, l *store.Listing) *walkDiff {
	d := sub.diff(l)
	for dir, f := range s.folders {
		if _, ok := sub.folders[dir]; ok {
			continue
		}
		if _, ok := d.walks[dir]; ok {
			continue // a folder the listing holds that the state's scope did not
		}
		d.walks[dir] = f
		for i := range f.leaves {
			if f.leaves[i].indexed() {
				d.unchanged++
			}
		}
	}
	return d
}
