//go:build unix

package httpapi

import "syscall"

// openFileLimit is the process's open-file limit (RLIMIT_NOFILE, its
// soft value, which Go raises to the hard one at start), 1024 when it
// cannot be read.
func openFileLimit() uint64 {
	var r syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &r); err != nil || r.Cur == 0 {
		return 1024
	}
	return uint64(r.Cur)
}
