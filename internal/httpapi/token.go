package httpapi

import (
	"fmt"
	"io/fs"
	"runtime"
	"strings"
)

// CheckTokenFileMode refuses a token file other users may read or write:
// its mode must be 0600 or stricter. (Windows has no such mode bits; the
// check is skipped there.)
func CheckTokenFileMode(name string, mode fs.FileMode) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	if perm := mode.Perm(); perm&0o077 != 0 {
		return fmt.Errorf("the token file %s is open to other users (mode %04o); it must be private: run chmod 600 %s", name, perm, name)
	}
	return nil
}

// ParseToken returns the bearer token a token file holds: exactly one
// line (its line end optional), the token alone on it; white space
// around it is dropped.
func ParseToken(name string, data []byte) (string, error) {
	text := strings.NewReplacer("\r\n", "\n", "\r", "\n").Replace(string(data))
	text = strings.TrimSuffix(text, "\n")
	if strings.Contains(text, "\n") {
		return "", fmt.Errorf("the token file %s holds %d lines; it must hold the token alone, on one line", name, strings.Count(text, "\n")+1)
	}
	token := strings.TrimSpace(text)
	if token == "" {
		return "", fmt.Errorf("the token file %s is empty", name)
	}
	return token, nil
}

// MinTokenBytes is the shortest bearer token kk serve takes: a token of
// a few characters is guessed by a client that tries them all, each try
// costing one request. (knowledged has no token at all, and its clients,
// kc and mcp-knowledged, send none: the token is kk's, for kk client and
// for whatever carries it beyond loopback.)
const MinTokenBytes = 16

// CheckTokenLength refuses a token (as ParseToken returns it: white
// space around it dropped) shorter than MinTokenBytes, naming the file
// it came from.
func CheckTokenLength(name, token string) error {
	if len(token) < MinTokenBytes {
		return fmt.Errorf("the token file %s holds a token of %d bytes; it must be at least %d bytes (a short token is guessed): make one with openssl rand -hex 32 > %s", name, len(token), MinTokenBytes, name)
	}
	return nil
}
