//go:build !unix

package store

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// walk lists what is under nodes/ (root, realRoot its symlink-free path)
// into l, by classify's rules, with every regular leaf's size and mtime.
func walk(ctx context.Context, root, realRoot string, l *Listing) error {
	return walkFrom(ctx, root, realRoot, []string{""}, l)
}

// walkFrom is walk of the folders starts (relative to root) and
// everything under them.
func walkFrom(ctx context.Context, root, realRoot string, starts []string, l *Listing) error {
	for _, start := range starts {
		if err := walkOne(ctx, root, realRoot, start, l); err != nil {
			return err
		}
	}
	return nil
}

func walkOne(ctx context.Context, root, realRoot, start string, l *Listing) error {
	from := root
	if start != "" {
		from = filepath.Join(root, filepath.FromSlash(start))
		l.Dirs = append(l.Dirs, start)
	}
	return filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil && p != root && d != nil && d.IsDir() && errors.Is(err, fs.ErrPermission) {
			l.Problems = append(l.Problems, UnreadableFolder(filepath.ToSlash(p[len(root)+1:]), err))
			return filepath.SkipDir
		}
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := ""
		if len(p) > len(root) {
			rel = filepath.ToSlash(p[len(root)+1:])
		}
		if p == from && start != "" {
			return nil // listed above
		}
		kind, f, problem := classify(realRoot, p, rel, d)
		if kind == entrySkipDir {
			return filepath.SkipDir
		}
		if kind == entryLeaf && f.Size < 0 {
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed since the folder was listed: as if listed after
			}
			if err != nil {
				return err
			}
			f.Size, f.mtime = fi.Size(), fi.ModTime().UnixNano()
		}
		l.add(kind, rel, f, problem)
		return nil
	})
}

// walkFolder reads folder rel into l and returns its subfolders, and
// whether it holds a symlink.
func walkFolder(root, realRoot, rel string, l *Listing) (subdirs []string, linked bool, err error) {
	abs := root
	if rel != "" {
		abs = filepath.Join(root, filepath.FromSlash(rel))
	}
	entries, err := os.ReadDir(abs)
	if rel != "" && errors.Is(err, fs.ErrPermission) {
		l.Problems = append(l.Problems, UnreadableFolder(rel, err))
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			linked = true
		}
		child := e.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		p := filepath.Join(abs, e.Name())
		kind, f, problem := classify(realRoot, p, child, e)
		if kind == entryLeaf && f.Size < 0 {
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue // removed since the folder was listed: as if listed after
			}
			if err != nil {
				return nil, false, err
			}
			f.Size, f.mtime = fi.Size(), fi.ModTime().UnixNano()
		}
		if kind == entryDir {
			subdirs = append(subdirs, child)
		}
		l.add(kind, child, f, problem)
	}
	return subdirs, linked, nil
}
