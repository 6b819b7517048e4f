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
