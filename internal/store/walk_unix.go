//go:build unix

package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"slices"

	"golang.org/x/sys/unix"
)

// walk lists what is under nodes/ (root, realRoot its symlink-free path)
// into l, by classify's rules, with every regular leaf's size and mtime.
// The folders of each depth are read in parallel, and each folder's files
// are stat'ed relative to the open folder (fstatat), which spares the
// kernel resolving every leaf's whole path: reading an unchanged tree is
// mostly this walk. It stops between folders once ctx is done.
func walk(ctx context.Context, root, realRoot string, l *Listing) error {
	return walkFrom(ctx, root, realRoot, []string{""}, l)
}

// walkFrom is walk of the folders starts (relative to root) and
// everything under them.
func walkFrom(ctx context.Context, root, realRoot string, starts []string, l *Listing) error {
	level := slices.Clone(starts)
	l.Dirs = append(l.Dirs, starts...)
	var parts []*Listing // one per folder, merged once at the end
	removed := map[string]bool{}
	for len(level) > 0 {
		subdirs := make([][]string, len(level))
		errs := make([]error, len(level))
		at := len(parts)
		parts = append(parts, make([]*Listing, len(level))...)
		gone := make([]bool, len(level))
		Parallel(len(level), func(j int) {
			if errs[j] = ctx.Err(); errs[j] != nil {
				return
			}
			part := &Listing{IndexDirs: map[string]bool{}}
			var linked bool
			subdirs[j], linked, errs[j] = walkFolder(root, realRoot, level[j], part)
			if level[j] != "" && (errors.Is(errs[j], unix.ENOENT) || errors.Is(errs[j], unix.ENOTDIR)) {
				// Removed (or replaced by a file) since its parent was
				// listed: as if the parent were listed after.
				errs[j], gone[j], part = nil, true, &Listing{IndexDirs: map[string]bool{}}
			}
			if linked {
				part.Linked = []string{level[j]}
			}
			parts[at+j] = part
		})
		if err := ctx.Err(); err != nil {
			// Stopped: said once, not once per folder of this depth.
			return err
		}
		if err := errors.Join(errs...); err != nil {
			return err
		}
		for j, g := range gone {
			if g {
				removed[level[j]] = true
			}
		}
		level = level[:0:0]
		for _, s := range subdirs {
			level = append(level, s...)
		}
	}
	l.mergeAll(parts)
	if len(removed) > 0 {
		l.Dirs = slices.DeleteFunc(l.Dirs, func(d string) bool { return removed[d] })
	}
	return nil
}

// walkFolder reads folder rel into l, which is empty, and returns its
// subfolders, and whether it holds a symlink (whose target may change
// without the folder changing) or a leaf with more than one link (which
// may change through another folder). A folder of the tree that kk may
// not read (its mode: a person's chmod) is a problem of the tree, listed
// with nothing in it, as a leaf kk cannot read is: never a reason to
// refuse the rest.
func walkFolder(root, realRoot, rel string, l *Listing) (subdirs []string, linked bool, err error) {
	subdirs, linked, err = listFolder(root, realRoot, rel, l)
	if rel != "" && errors.Is(err, fs.ErrPermission) {
		*l = Listing{IndexDirs: map[string]bool{}, Problems: []error{UnreadableFolder(rel, err)}}
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return subdirs, linked, nil
}

// listFolder is walkFolder, but for a folder it may not read.
func listFolder(root, realRoot, rel string, l *Listing) (subdirs []string, linked bool, err error) {
	abs := root
	if rel != "" {
		abs = root + string(os.PathSeparator) + rel
	}
	dir, err := os.Open(abs)
	if err != nil {
		return nil, false, err
	}
	defer func() { _ = dir.Close() }()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, false, err
	}
	fd := int(dir.Fd())
	var st unix.Stat_t
	l.Files = slices.Grow(l.Files, len(entries))
	for _, e := range entries {
		if e.Type()&os.ModeSymlink != 0 {
			linked = true
		}
		// One string holds the entry's path and, as its end, its path
		// relative to nodes/.
		p := abs + string(os.PathSeparator) + e.Name()
		child := p[len(root)+1:]
		kind, f, problem := classify(realRoot, p, child, e)
		if kind == entryLeaf && f.Size < 0 {
			err := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW)
			if errors.Is(err, unix.ENOENT) {
				continue // removed since the folder was listed: as if listed after
			}
			if err != nil {
				return nil, false, &os.PathError{Op: "lstat", Path: f.Abs, Err: err}
			}
			f.Size, f.mtime = st.Size, st.Mtim.Nano()
			if st.Nlink > 1 {
				linked = true
			}
		}
		if kind == entryDir {
			subdirs = append(subdirs, child)
		}
		l.add(kind, child, f, problem)
	}
	return subdirs, linked, nil
}
