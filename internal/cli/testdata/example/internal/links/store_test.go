package links

import (
	"errors"
	"testing"
	"time"
)

func TestShortenRoundTrip(t *testing.T) {
	s := NewStore(time.Hour)
	code, err := s.Shorten("ann", "https://example.com/a")
	if err != nil {
		t.Fatal(err)
	}
	if got, err := s.Resolve(code); err != nil || got != "https://example.com/a" {
		t.Fatalf("Resolve = %q, %v", got, err)
	}
}

func TestExpiry(t *testing.T) {
	s := NewStore(time.Hour)
	code, _ := s.Shorten("ann", "https://example.com/a")
	s.now = func() time.Time { return time.Now().Add(2 * time.Hour) }
	if _, err := s.Resolve(code); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired link resolved: %v", err)
	}
}

func TestDeleteOwnerOnly(t *testing.T) {
	s := NewStore(time.Hour)
	code, _ := s.Shorten("ann", "https://example.com/a")
	if err := s.Delete("bob", code); !errors.Is(err, ErrNotOwner) {
		t.Fatalf("Delete by another user: %v", err)
	}
	if err := s.Delete("ann", code); err != nil {
		t.Fatal(err)
	}
}
