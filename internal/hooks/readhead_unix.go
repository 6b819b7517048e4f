//go:build unix

package hooks

import "syscall"

// readHead reads the start of the file at path into buf: until buf is
// full (eof false) or the file ends (eof true). It opens, reads and closes
// the file with the system calls themselves: os.Open also registers the
// file with the runtime's poller (two more calls, for a file read once),
// which was a third of session-start's time over 10,000 session logs.
func readHead(path string, buf []byte) (n int, eof bool, err error) {
	var fd int
	for {
		fd, err = syscall.Open(path, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		return 0, false, err
	}
	defer func() { _ = syscall.Close(fd) }()
	for n < len(buf) {
		m, err := syscall.Read(fd, buf[n:])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return n, false, err
		}
		if m == 0 {
			return n, true, nil
		}
		n += m
	}
	return n, false, nil
}
