package mcpserver

import (
	"errors"
	"syscall"
)

// peerGone reports whether err means that the client closed its end of the
// connection: a broken or closing pipe, or a reset socket.
func peerGone(err error) bool {
	return errors.Is(err, syscall.ERROR_BROKEN_PIPE) || errors.Is(err, syscall.Errno(232)) || // ERROR_NO_DATA: the pipe is being closed
		errors.Is(err, syscall.WSAECONNRESET) || errors.Is(err, syscall.EPIPE)
}
