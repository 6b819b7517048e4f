//go:build !unix

package store

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// walk lists what is under nodes/ (root, realRoot its symlink-free path)
// into l, by classify's rules, with every regular leaf's size and mtime.
func walk(ctx context.Context, root, realRoot string, l *Listing) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
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
		kind, f, problem := classify(realRoot, p, rel, d)
		if kind == entrySkipDir {
			return filepath.SkipDir
		}
		if kind == entryLeaf && f.Size < 0 {
			fi, err := os.Lstat(p)
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
func walkFolder(root, realRoot, rel string, l *Listing) (subdirs []string, symlinks bool, err error) {
	abs := root
	if rel != "" {
		abs = filepath.Join(root, filepath.FromSlash(rel))
	}
	entries, err := os.ReadDir(abs)
	if err != nil {
		return nil, false, err
	}
	for _, e := range entries {
		if e.Type()&fs.ModeSymlink != 0 {
			symlinks = true
		}
		child := e.Name()
		if rel != "" {
			child = rel + "/" + child
		}
		p := filepath.Join(abs, e.Name())
		kind, f, problem := classify(realRoot, p, child, e)
		if kind == entryLeaf && f.Size < 0 {
			fi, err := os.Lstat(p)
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
	return subdirs, symlinks, nil
}
