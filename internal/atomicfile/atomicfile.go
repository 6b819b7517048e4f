// Package atomicfile replaces files so that readers see either the old or
// the new content, never a mix, even across a crash.
package atomicfile

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// Write replaces path with data. The bytes go to a temporary file in the
// same directory, which is synced, closed and renamed over path; the
// directory is then synced so the rename itself is durable. An existing
// file keeps its permission bits; a new one gets perm.
func Write(path string, data []byte, perm fs.FileMode) (err error) {
	return write(path, data, perm, true)
}

// Replace replaces path with data like Write, but does not sync the
// directory: readers, and a crash of the process, see the old content or
// the new one, whole; after a power loss the old one may be back. It is
// for files whose previous version is still right to find: caches, and
// records that a durable one elsewhere (a git commit) stands for. It
// saves one of Write's two syncs.
func Replace(path string, data []byte, perm fs.FileMode) error {
	return write(path, data, perm, false)
}

func write(path string, data []byte, perm fs.FileMode, syncDir bool) (err error) {
	dir := filepath.Dir(path)
	if fi, statErr := os.Stat(path); statErr == nil {
		if !fi.Mode().IsRegular() {
			return fmt.Errorf("writing %s: not a regular file", path)
		}
		perm = fi.Mode().Perm()
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	defer func() {
		if err != nil {
			_ = tmp.Close() // the write failed: the temporary file goes, whatever its close says
			_ = os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Chmod(perm); err != nil && runtime.GOOS != "windows" {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if !syncDir {
		return nil
	}
	return SyncDir(dir)
}

// WriteIfChanged writes data to path only when the file's current content
// differs. It reports whether it wrote.
func WriteIfChanged(path string, data []byte, perm fs.FileMode) (bool, error) {
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, data) {
		return false, nil
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return false, fmt.Errorf("reading %s: %w", path, err)
	}
	return true, Write(path, data, perm)
}

// SyncDir flushes a directory's entries to disk. It is a no-op on Windows,
// where directories cannot be opened for syncing.
func SyncDir(dir string) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	f, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	defer func() { _ = f.Close() }() // a folder opened to sync it: nothing to flush
	if err := f.Sync(); err != nil && !errors.Is(err, os.ErrInvalid) {
		return fmt.Errorf("syncing %s: %w", dir, err)
	}
	return nil
}
