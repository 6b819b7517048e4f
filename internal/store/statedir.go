package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
)

// stateAttempts bounds how often InStateFolder starts over.
const stateAttempts = 4

// InStateFolder makes dir, a folder under .state/, with its parents and
// runs write, which writes there. .state/ is ignored by git, so a
// person's `git clean -fdx` (or -fdX) removes it, whenever they run it,
// also between the folder's creation and the write: when write fails and
// dir is gone, both run again (a few times at most), since what kk keeps
// there is its own and can be written anew. Another failure is returned
// as it is.
func InStateFolder(dir string, write func() error) error {
	var err error
	for range stateAttempts {
		if err = os.MkdirAll(dir, 0o755); err == nil {
			if err = write(); err == nil {
				return nil
			}
		}
		if _, serr := os.Stat(dir); !errors.Is(serr, fs.ErrNotExist) {
			return err
		}
	}
	return err
}

// StateNotWritable reports whether err is a write refused (permission
// denied, a read-only file system) on a path in k's .state/ folder: a
// read-only checkout or mount, a CI cache restored without write access.
func (k *KB) StateNotWritable(err error) bool {
	if !errors.Is(err, fs.ErrPermission) && !errors.Is(err, syscall.EROFS) {
		return false
	}
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return false
	}
	rel, rerr := filepath.Rel(k.StateDir(), pe.Path)
	return rerr == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// StateHint says what to do about a .state/ folder kk may not write.
func (k *KB) StateHint() string {
	rel := filepath.ToSlash(k.Rel(k.StateDir()))
	return fmt.Sprintf("%s, kk's local state (git-ignored), cannot be written: make it writable (chmod -R u+w %s)", rel, rel)
}
