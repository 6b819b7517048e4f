//go:build !windows

package mcpserver

import (
	"errors"
	"syscall"
)

// peerGone reports whether err means that the client closed its end of the
// connection: a write to a closed pipe or socket (EPIPE), or a socket the
// client closed with our answers still unread (ECONNRESET).
func peerGone(err error) bool {
	return errors.Is(err, syscall.EPIPE) || errors.Is(err, syscall.ECONNRESET)
}
