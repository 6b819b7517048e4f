//go:build unix

package index

import (
	"context"
	"errors"
	"os"
	"sync"

	"golang.org/x/sys/unix"

	"github.com/kk-project/kk/internal/workpool"
)

// walkLeaves lists the leaves under nodesDir with their size and mtime.
// The folders of each depth are read in parallel, and each folder's files
// are stat'ed relative to the open folder (fstatat), which spares the
// kernel resolving every leaf's whole path: a no-change sync is mostly
// this walk. It stops between folders once ctx is done.
func walkLeaves(ctx context.Context, nodesDir, realRoot string) ([]fileStat, []Problem, error) {
	var (
		mu       sync.Mutex
		files    []fileStat
		problems []Problem
	)
	level := []string{""}
	for len(level) > 0 {
		subdirs := make([][]string, len(level))
		errs := make([]error, len(level))
		workpool.Run(0, len(level), func(j int) {
			if errs[j] = ctx.Err(); errs[j] != nil {
				return
			}
			var fs []fileStat
			var ps []Problem
			subdirs[j], errs[j] = walkFolder(nodesDir, realRoot, level[j], func(f fileStat, p *Problem) {
				if p != nil {
					ps = append(ps, *p)
				} else {
					fs = append(fs, f)
				}
			})
			mu.Lock()
			files = append(files, fs...)
			problems = append(problems, ps...)
			mu.Unlock()
		})
		if err := errors.Join(errs...); err != nil {
			return nil, nil, err
		}
		level = level[:0:0]
		for _, s := range subdirs {
			level = append(level, s...)
		}
	}
	return files, problems, nil
}

// walkFolder reads folder rel, reports its leaves and problems to add, and
// returns its subfolders.
func walkFolder(nodesDir, realRoot, rel string, add func(fileStat, *Problem)) ([]string, error) {
	abs := nodesDir
	if rel != "" {
		abs = nodesDir + string(os.PathSeparator) + rel
	}
	dir, err := os.Open(abs)
	if err != nil {
		return nil, err
	}
	defer dir.Close()
	entries, err := dir.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	fd := int(dir.Fd())
	var subdirs []string
	var st unix.Stat_t
	for _, e := range entries {
		kind, f, p := classify(nodesDir, realRoot, rel, e.Name(), e.Type())
		switch kind {
		case descend:
			subdirs = append(subdirs, f.rel)
		case badEntry:
			add(f, &p)
		case linkedLeaf:
			add(f, nil)
		case leafFile:
			if err := unix.Fstatat(fd, e.Name(), &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
				return nil, &os.PathError{Op: "lstat", Path: f.abs, Err: err}
			}
			f.size, f.mtime = st.Size, st.Mtim.Nano()
			add(f, nil)
		}
	}
	return subdirs, nil
}
