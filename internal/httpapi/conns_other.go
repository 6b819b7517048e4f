//go:build !unix

package httpapi

// openFileLimit is 1024 where the system has no RLIMIT_NOFILE.
func openFileLimit() uint64 { return 1024 }
