package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/kk-project/kk/internal/node"
)

// ScanPart lists part of the tree under root (nodes/) as ScanDir lists the
// whole of it, for a long-running process that knows where changes
// happened since its last look (kk serve's watch of the tree: see
// index.DB.Watch). Each of folders is listed by itself: its leaves with
// their size and mtime, its index.md, leftovers, irregular files and
// problems, and the folder in Dirs, not its subfolders. Then more, when
// not nil, is given the subfolders found in each of them (a folder left
// out has none) and names the folders to list with everything under them,
// which are listed as ScanDir lists the tree (each of them, and every
// folder under it, in Dirs). A folder of either kind that is not there,
// or is not a folder, is left out. Every folder is listed once: one of
// folders that is in or under a folder listed whole is taken from the
// whole listing, and so is a folder listed whole under another. Linked
// names the listed folders that hold a symlink or a leaf with more than
// one link.
func ScanPart(ctx context.Context, root string, folders []string, more func(subdirs map[string][]string) ([]string, error)) (*Listing, error) {
	realRoot, err := filepath.EvalSymlinks(root)
	if err != nil {
		return nil, err
	}
	l := &Listing{IndexDirs: map[string]bool{}}
	subdirs := make(map[string][]string, len(folders))
	var listed []string
	parts := make(map[string]*Listing, len(folders))
	for _, rel := range folders {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if rel != "" {
			// A folder replaced by a symlink is not one of the tree's.
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
			if gone(err) || err == nil && !fi.IsDir() {
				continue
			}
		}
		part := &Listing{IndexDirs: map[string]bool{}}
		subs, linked, err := walkFolder(root, realRoot, rel, part)
		if gone(err) {
			continue
		}
		if err != nil {
			return nil, err
		}
		part.Dirs = []string{rel} // the folder itself, not its subfolders
		if linked {
			part.Linked = []string{rel}
		}
		subdirs[rel] = subs
		if parts[rel] == nil {
			listed = append(listed, rel)
		}
		parts[rel] = part
	}
	var starts []string
	if more != nil {
		trees, err := more(subdirs)
		if err != nil {
			return nil, err
		}
		for _, rel := range slices.Sorted(slices.Values(trees)) {
			if slices.ContainsFunc(starts, func(t string) bool { return inFolder(t, rel) }) {
				continue // in or under one listed whole
			}
			fi, err := os.Lstat(filepath.Join(root, filepath.FromSlash(rel)))
			if gone(err) || err == nil && !fi.IsDir() {
				continue
			}
			if err != nil {
				return nil, err
			}
			starts = append(starts, rel)
		}
	}
	for _, rel := range listed {
		if !slices.ContainsFunc(starts, func(t string) bool { return inFolder(t, rel) }) {
			l.merge(parts[rel])
		}
	}
	if err := walkFrom(ctx, root, realRoot, starts, l); err != nil {
		return nil, err
	}
	l.sortBytes()
	return l, nil
}

// inFolder reports whether folder rel is tree or under it (both relative
// to nodes/, "" for nodes/ itself).
func inFolder(tree, rel string) bool {
	return tree == "" || rel == tree || strings.HasPrefix(rel, tree+"/")
}

// UnreadableFolder is the problem of a folder of the tree (rel) that kk
// may not read.
func UnreadableFolder(rel string, err error) error {
	if pe, ok := errors.AsType[*fs.PathError](err); ok {
		err = pe.Err
	}
	return &node.Error{Path: rel, Msg: fmt.Sprintf("folder cannot be read (%v): its leaves are left out until it can", err)}
}

// gone reports whether err says that a folder is not there (or is not a
// folder).
func gone(err error) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR)
}
