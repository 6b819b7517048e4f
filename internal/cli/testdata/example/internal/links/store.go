// Package links stores short links.
package links

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"sync"
	"time"
)

// ErrNotFound is returned for a code that names no live link.
var ErrNotFound = errors.New("links: not found")

// ErrNotOwner is returned when someone other than the owner deletes a link.
var ErrNotOwner = errors.New("links: not the owner")

// Link is one short link.
type Link struct {
	Code    string
	Target  string
	Owner   string
	Created time.Time
}

// Store keeps links in memory.
type Store struct {
	mu    sync.Mutex
	ttl   time.Duration
	now   func() time.Time
	links map[string]Link
}

// NewStore returns an empty store whose links expire after ttl.
func NewStore(ttl time.Duration) *Store {
	return &Store{ttl: ttl, now: time.Now, links: map[string]Link{}}
}

// Shorten stores target for owner and returns its code.
func (s *Store) Shorten(owner, target string) (string, error) {
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	code := base64.RawURLEncoding.EncodeToString(b[:])
	s.mu.Lock()
	defer s.mu.Unlock()
	s.links[code] = Link{Code: code, Target: target, Owner: owner, Created: s.now()}
	return code, nil
}

// Resolve returns the target of a live link.
func (s *Store) Resolve(code string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[code]
	if !ok || Expired(l, s.now(), s.ttl) {
		return "", ErrNotFound
	}
	return l.Target, nil
}

// Delete removes a link; only its owner may.
func (s *Store) Delete(owner, code string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	l, ok := s.links[code]
	if !ok {
		return ErrNotFound
	}
	if l.Owner != owner {
		return ErrNotOwner
	}
	delete(s.links, code)
	return nil
}
