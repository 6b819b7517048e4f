package session

import (
	"crypto/rand"
	"fmt"
	"regexp"
	"strings"
)

var (
	uuidV4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	// uuidAny accepts every UUID version: some harnesses (Codex) use v7.
	uuidAny = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
)

// CheckID checks that id is a UUID version 4 and returns it lowercased.
func CheckID(id string) (string, error) {
	lower := strings.ToLower(id)
	if !uuidV4.MatchString(lower) {
		return "", fmt.Errorf("session id %q is not a UUID v4 (like 0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e7f)", id)
	}
	return lower, nil
}

// IsUUID reports whether s is a UUID of any version, in either case.
func IsUUID(s string) bool { return uuidAny.MatchString(strings.ToLower(s)) }

// NewID returns a random UUID version 4, lowercase.
func NewID() string {
	var b [16]byte
	rand.Read(b[:]) // crypto/rand.Read never fails
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// Private spans: text between these tags never reaches a session log.
const (
	privateOpen    = "<kk-private>"
	privateClose   = "</kk-private>"
	privateRemoved = "[kk-private removed]"
)

// StripPrivate replaces every <kk-private>…</kk-private> span of s with a
// marker. An opening tag that is never closed hides everything after it.
// Tags match in any letter case.
func StripPrivate(s string) string {
	lower := asciiLower(s)
	if !strings.Contains(lower, privateOpen) {
		return s
	}
	var b strings.Builder
	for {
		i := strings.Index(lower, privateOpen)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		b.WriteString(s[:i])
		b.WriteString(privateRemoved)
		rest := i + len(privateOpen)
		j := strings.Index(lower[rest:], privateClose)
		if j < 0 {
			return b.String()
		}
		next := rest + j + len(privateClose)
		s, lower = s[next:], lower[next:]
	}
}

// asciiLower lowercases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}
