package store

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"
)

// A long-running process (kk serve) reads the tree once per job. Its
// leaf cache spares re-parsing, but finding what changed still meant
// listing every folder and stat'ing every leaf: at 10,000 leaves, 400
// folder reads and 10,000 stats, 17 ms on this project's machines, a
// cost per job that grows with the tree. With WatchTree, the process
// asks the kernel to report changes under nodes/ instead (inotify on
// Linux), and a read lists again only the folders something happened
// in; the entries of the others are kept from the read before. A folder
// holding a symlink is listed at every read (its target may change
// elsewhere). An overflowed event queue, the loss of nodes/ itself, or
// a folder the kernel cannot watch sends the read back to a full walk,
// which sets the watches again; so does a read 30 s after the last full
// walk (the kernel does not see changes made through another machine's
// mount of a network file system). Where watching is not available,
// reads walk the tree as before.

// notifier reports the folders (relative to nodes/) in which entries
// changed since the last drain.
type notifier interface {
	// add watches folder rel. It is called before the folder is read, so
	// that a change after the read is reported.
	add(rel string) error
	// drain adds the folders with changes to dirty, with the entries
	// changed (relative to nodes/) to named, or the folder itself when
	// a change names no entry, and the folders whose watch went (the
	// folder was removed or replaced) to unwatched; it reports lost when
	// events were lost (the queue overflowed, nodes/ went away).
	drain(dirty, named, unwatched map[string]bool) (lost bool, err error)
	close() error
}

// folderPart is what one folder holds directly: its leaves, index file,
// subfolders (as Dirs), leftovers, irregular files and problems.
type folderPart struct {
	l        Listing
	symlinks bool
}

// treeWatch keeps the entries of every folder under nodes/, up to date
// by the notifier's reports.
type treeWatch struct {
	n        notifier
	root     string
	realRoot string
	parts    map[string]*folderPart // nil until a full walk succeeded
	files    []LeafFile             // the leaves of the last listing, in byte order
	reread   map[string]bool        // the folders the current scan read
	named    map[string]bool        // what the reports of the current scan named
	fresh    map[string]bool        // the folders the current scan walked anew
	walked   time.Time              // the last full walk
}

// fullWalkEvery bounds how long a watched tree goes without a full walk:
// the kernel reports no change made through another machine's mount of
// a network file system, which a walk finds.
const fullWalkEvery = 30 * time.Second

// WatchTree makes the tree reads of k (ReadTree) find changes by the
// kernel's reports instead of a walk of every folder, for as long as k
// lives (KB.Close stops it). It returns false, and reads walk the tree
// as before, where that is not available.
func WatchTree(k *KB) bool {
	n, err := newNotifier(k.NodesDir())
	if err != nil {
		return false
	}
	m := Memo(k, treeMemoKey{}, func() *treeMemo { return &treeMemo{k: k} })
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.watch != nil {
		_ = n.close()
		return true
	}
	m.watch = &treeWatch{n: n, root: k.NodesDir()}
	return true
}

// scan returns the listing of nodes/ in ScanDir's order.
func (w *treeWatch) scan(ctx context.Context) (*Listing, error) {
	dirty, named, unwatched := map[string]bool{}, map[string]bool{}, map[string]bool{}
	lost, err := w.n.drain(dirty, named, unwatched)
	if err != nil || lost || w.parts == nil || time.Since(w.walked) > fullWalkEvery {
		return w.full(ctx)
	}
	w.reread, w.named, w.fresh = map[string]bool{}, named, map[string]bool{}
	for d, p := range w.parts {
		if p.symlinks {
			dirty[d] = true
			named[d] = true
		}
	}
	folders := make([]string, 0, len(dirty))
	for d := range dirty {
		folders = append(folders, d)
	}
	// Parents first: a parent's read drops the subtrees of its folders
	// that went, and reads whole the ones that came.
	depth := func(d string) int {
		if d == "" {
			return 0
		}
		return strings.Count(d, "/") + 1
	}
	slices.SortFunc(folders, func(a, b string) int { return cmp.Or(cmp.Compare(depth(a), depth(b)), strings.Compare(a, b)) })
	for _, d := range folders {
		old, known := w.parts[d]
		if !known {
			continue // under a folder that went, or one a parent's read covers
		}
		if unwatched[d] {
			// Removed and made again, or replaced: its watch is gone, and
			// what is under it is new.
			w.drop(d)
			err := w.walkFrom(ctx, d)
			if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
				w.drop(d)
				continue
			}
			if err != nil {
				return w.full(ctx)
			}
			continue
		}
		part, subs, err := w.read(d)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			w.drop(d) // its parent's entry went too: the parent is dirty
			continue
		}
		if err != nil {
			return w.full(ctx)
		}
		w.parts[d] = part
		for _, s := range subs {
			if !slices.Contains(old.l.Dirs, s) {
				if err := w.walkFrom(ctx, s); err != nil {
					return w.full(ctx)
				}
			}
		}
		for _, s := range old.l.Dirs {
			if !slices.Contains(subs, s) {
				w.drop(s)
			}
		}
	}
	return w.assemble(false), nil
}

// full lists the whole tree again, setting the watches.
func (w *treeWatch) full(ctx context.Context) (*Listing, error) {
	w.parts = nil
	realRoot, err := filepath.EvalSymlinks(w.root)
	if err != nil {
		return nil, err
	}
	w.realRoot = realRoot
	w.parts = map[string]*folderPart{}
	w.reread, w.named, w.fresh = map[string]bool{}, map[string]bool{}, map[string]bool{}
	if err := w.walkFrom(ctx, ""); err != nil {
		w.parts = nil
		return nil, err
	}
	// Events from before the walk are covered by it.
	_, _ = w.n.drain(map[string]bool{}, map[string]bool{}, map[string]bool{})
	w.walked = time.Now()
	return w.assemble(true), nil
}

// walkFrom reads folder start and everything under it, watching each
// folder before reading it.
func (w *treeWatch) walkFrom(ctx context.Context, start string) error {
	level := []string{start}
	for len(level) > 0 {
		var next []string
		for _, d := range level {
			if err := ctx.Err(); err != nil {
				return err
			}
			if err := w.n.add(d); err != nil {
				return err
			}
			w.fresh[d] = true
			part, subs, err := w.read(d)
			if err != nil {
				return err
			}
			w.parts[d] = part
			next = append(next, subs...)
		}
		level = next
	}
	return nil
}

// read lists the entries of one folder.
func (w *treeWatch) read(d string) (*folderPart, []string, error) {
	w.reread[d] = true
	p := &folderPart{l: Listing{IndexDirs: map[string]bool{}}}
	subs, symlinks, err := walkFolder(w.root, w.realRoot, d, &p.l)
	if err != nil {
		return nil, nil, err
	}
	p.symlinks = symlinks
	return p, subs, nil
}

// drop forgets folder d and everything under it.
func (w *treeWatch) drop(d string) {
	delete(w.parts, d)
	for f := range w.parts {
		if strings.HasPrefix(f, d+"/") {
			delete(w.parts, f)
		}
	}
}

// assemble joins the folders' entries into one listing, as ScanDir
// orders it. Unless all were read, a leaf no report named, in a folder
// no report named as a whole and not walked anew, is quiet: nothing
// happened to it since the scan before drained its reports, after which
// that scan (or an earlier one) stat'ed it and its read recorded its
// content, so the leaf cache may trust its entry even inside the racy
// window (leafCache.entry). A leaf a report named is checked by the
// usual rule.
//
// The leaves of the last listing are kept sorted: a scan that read a
// few folders again puts their leaves in place of the old ones, instead
// of sorting the whole tree's leaves again.
func (w *treeWatch) assemble(all bool) *Listing {
	l := &Listing{IndexDirs: map[string]bool{}, Dirs: []string{""}}
	var added []LeafFile
	for d, p := range w.parts {
		if all || w.files == nil || w.reread[d] {
			added = append(added, p.l.Files...)
		}
		l.Dirs = append(l.Dirs, p.l.Dirs...)
		for x := range p.l.IndexDirs {
			l.IndexDirs[x] = true
		}
		l.Leftovers = append(l.Leftovers, p.l.Leftovers...)
		l.Irregular = append(l.Irregular, p.l.Irregular...)
		l.Problems = append(l.Problems, p.l.Problems...)
	}
	l.sortBytes()
	// The leaves are kept in the tree's order (root collation), which
	// the read then need not sort them in: only the leaves of the folders
	// read again are sorted, and merged with the others.
	byRel := func(a, b LeafFile) int { return LocaleCompare(a.Rel, b.Rel) }
	added = sortedFiles(added)
	if all || w.files == nil {
		w.files = added
	} else {
		// The kept leaves of the folders not read again (and still
		// there), merged with the leaves of those read again.
		kept := make([]LeafFile, 0, len(w.files))
		last, keep := "", false // a folder's leaves mostly come one after another
		for i, f := range w.files {
			if d := DirOf(f.Rel); i == 0 || d != last {
				last, keep = d, !w.reread[d] && w.parts[d] != nil
			}
			if keep {
				kept = append(kept, f)
			}
		}
		merged := make([]LeafFile, 0, len(kept)+len(added))
		i, j := 0, 0
		for i < len(kept) && j < len(added) {
			if byRel(kept[i], added[j]) <= 0 {
				merged = append(merged, kept[i])
				i++
			} else {
				merged = append(merged, added[j])
				j++
			}
		}
		w.files = append(append(merged, kept[i:]...), added[j:]...)
	}
	l.Files, l.collated = slices.Clone(w.files), true
	last, quiet := "", false
	for i := range l.Files {
		if d := DirOf(l.Files[i].Rel); i == 0 || d != last {
			last, quiet = d, !all && !w.fresh[d] && !(w.reread[d] && w.named[d])
		}
		l.Files[i].quiet = quiet && (len(w.named) == 0 || !w.named[l.Files[i].Rel])
	}
	return l
}

func (w *treeWatch) close() error { return w.n.close() }
