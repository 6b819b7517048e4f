package index

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"

	"github.com/kk-project/kk/internal/store"
)

// obsoleteState are the files under .state/ that kk versions before the
// one derived store wrote beside the branch index (its leaf, rank,
// generation and staleness caches and the index's stat sidecar). Nothing
// reads them any more; a tree of 100,000 leaves left hundreds of
// megabytes of them.
var obsoleteState = []string{"leaves.cache", "index.cache", "rank.cache", "staleness.cache", "staleness.leaves", "branches/*/index.db.stat"}

// ObsoleteState lists the files older kk versions left under .state/
// that this one no longer reads (paths relative to the repository root),
// and their total size in bytes.
func ObsoleteState(k *store.KB) ([]string, int64, error) {
	var out []string
	var size int64
	for _, pat := range obsoleteState {
		m, err := filepath.Glob(filepath.Join(k.StateDir(), pat))
		if err != nil {
			return nil, 0, err
		}
		for _, p := range m {
			fi, err := os.Lstat(p)
			if errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, 0, err
			}
			if !fi.Mode().IsRegular() {
				continue
			}
			size += fi.Size()
			out = append(out, k.Rel(p))
		}
	}
	sort.Strings(out)
	return out, size, nil
}

// RemoveObsoleteState removes what ObsoleteState lists and returns it.
func RemoveObsoleteState(k *store.KB) ([]string, error) {
	files, _, err := ObsoleteState(k)
	if err != nil {
		return nil, err
	}
	var removed []string
	for _, rel := range files {
		if err := os.Remove(filepath.Join(k.Root, rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return removed, fmt.Errorf("removing %s: %w", rel, err)
		}
		removed = append(removed, rel)
	}
	return removed, nil
}
