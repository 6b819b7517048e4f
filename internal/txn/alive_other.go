//go:build !unix

package txn

import "os"

// processAlive reports whether a process with this id exists.
func processAlive(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return false
	}
	p.Release()
	return true
}
