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
	"strings"
	"syscall"
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

// Append appends data to path, which it creates with perm when missing,
// in one write to a file opened with O_APPEND: concurrent appenders of
// one line each (logs, ledgers) never interleave their lines, without a
// lock. A path that is not a regular file is an error (see OpenAppend),
// and nothing is written.
func Append(path string, data []byte, perm fs.FileMode) error {
	f, err := OpenAppend(path, perm)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		_ = f.Close()
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("appending to %s: %w", path, err)
	}
	return nil
}

// OpenAppend opens path for appending (O_APPEND), creating it with perm
// when missing. A path that is not a regular file (a named pipe, a
// device, a socket, a folder) is an error naming it: the open does not
// wait (O_NONBLOCK), since opening a named pipe for writing waits for a
// reader, for ever when none comes.
func OpenAppend(path string, perm fs.FileMode) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|os.O_CREATE|syscall.O_NONBLOCK, perm)
	if err != nil {
		if errors.Is(err, syscall.ENXIO) {
			// A named pipe without a reader, opened without waiting.
			return nil, fmt.Errorf("appending to %s: not a regular file (a named pipe)", path)
		}
		return nil, fmt.Errorf("appending to %s: %w", path, err)
	}
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		_ = f.Close() // nothing was written
		if err == nil {
			err = errors.New("not a regular file (a named pipe, a device or a socket)")
		}
		return nil, fmt.Errorf("appending to %s: %w", path, err)
	}
	return f, nil
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

// maxLinks bounds the symbolic links Follow goes through, as the kernel's
// own limit (40 on Linux) bounds a path's resolution.
const maxLinks = 40

// Follow returns the file a write of path inside the folder root should
// replace. A path that is not a symbolic link is itself. A link is
// followed, link after link, to the file it names (which need not exist
// yet), so that a write keeps the link and changes what it points at, as
// an editor does: AGENTS.md linked to CLAUDE.md, or a settings file linked
// into the repository's own dotfiles. A link whose target is outside root
// is an error naming both, and nothing is written: a cloned repository's
// link must not make kk write into a person's home or anywhere else.
//
// Write and Replace themselves replace a link with a regular file; Follow
// is for files a person owns and may have linked.
func Follow(root, path string) (string, error) {
	top, err := filepath.EvalSymlinks(root)
	if err != nil {
		return "", fmt.Errorf("resolving %s: %w", root, err)
	}
	p := path
	for range maxLinks {
		fi, err := os.Lstat(p)
		if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
			break // not a link (or nothing there): the write says what is wrong with it
		}
		dest, err := os.Readlink(p)
		if err != nil {
			return "", fmt.Errorf("reading the link %s: %w", path, err)
		}
		if !filepath.IsAbs(dest) {
			dest = filepath.Join(filepath.Dir(p), dest)
		}
		p = filepath.Clean(dest)
		if p == path {
			break
		}
	}
	if fi, err := os.Lstat(p); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		return "", fmt.Errorf("%s is a symbolic link that never reaches a file (a loop, or more than %d links); make it a file, then run kk again", path, maxLinks)
	}
	if p == path {
		return path, nil
	}
	// The folder the target is in, with its own links resolved, must be
	// inside root: a link to ../outside or to a folder linked elsewhere is
	// refused alike.
	dir, err := filepath.EvalSymlinks(filepath.Dir(p))
	if err != nil {
		return "", fmt.Errorf("%s is a symbolic link to %s, whose folder cannot be read: %w; make %s a file or fix the link, then run kk again", path, p, err, filepath.Base(path))
	}
	rel, err := filepath.Rel(top, dir)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", fmt.Errorf("%s is a symbolic link to %s, outside %s; kk writes only inside the repository: make %s a file (or link it to one inside the repository), then run kk again", path, p, root, filepath.Base(path))
	}
	// Spelt from root as the caller spells it, so that paths made relative
	// to root stay inside it.
	return filepath.Join(root, rel, filepath.Base(p)), nil
}
