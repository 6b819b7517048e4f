//go:build unix

package serve

import (
	"os"
	"syscall"
)

// lockSetup takes an exclusive flock on the folder dir itself, waiting
// for another process's, and returns its release: two kk serve started
// at once on a new folder set it up one after the other (nothing else
// exists there yet to hold a lock in). The kernel frees it when its
// holder dies.
func lockSetup(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err == syscall.ENOLCK || err == syscall.EOPNOTSUPP || err == syscall.ENOTSUP {
		// A file system without flock (some network ones): the setup
		// goes on unlocked, as kk's other locks there cannot either.
		_ = f.Close()
		return func() {}, nil
	}
	if err != nil {
		_ = f.Close()
		return nil, &os.PathError{Op: "flock", Path: dir, Err: err}
	}
	return func() { _ = f.Close() }, nil
}
