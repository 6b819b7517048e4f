//go:build !unix

package index

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
)

// walkLeaves lists the leaves under nodesDir with their size and mtime.
func walkLeaves(ctx context.Context, nodesDir, realRoot string) ([]fileStat, []Problem, error) {
	var files []fileStat
	var problems []Problem
	err := filepath.WalkDir(nodesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == nodesDir {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel := filepath.ToSlash(filepath.Dir(p[len(nodesDir)+1:]))
		if rel == "." {
			rel = ""
		}
		kind, f, prob := classify(nodesDir, realRoot, rel, d.Name(), d.Type())
		switch kind {
		case skipEntry:
			if d.IsDir() {
				return filepath.SkipDir
			}
		case badEntry:
			problems = append(problems, prob)
		case linkedLeaf:
			files = append(files, f)
		case leafFile:
			fi, err := os.Lstat(p)
			if err != nil {
				return err
			}
			f.size, f.mtime = fi.Size(), fi.ModTime().UnixNano()
			files = append(files, f)
		}
		return nil
	})
	return files, problems, err
}
