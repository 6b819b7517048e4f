package store

import (
	"errors"
	"io/fs"
	"os"
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
