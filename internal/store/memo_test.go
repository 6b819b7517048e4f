package store

import (
	"errors"
	"testing"
)

type counter struct{ closed int }

func (c *counter) Close() error { c.closed++; return errors.New("closed") }

type testKey struct{}

func TestMemoPerKnowledgeBase(t *testing.T) {
	dir := t.TempDir()
	a, b := New(dir), New(dir)
	made := 0
	mk := func() *counter { made++; return &counter{} }
	ca := Memo(a, testKey{}, mk)
	if again := Memo(a, testKey{}, mk); again != ca || made != 1 {
		t.Fatalf("second Memo on the same KB made a new value (made %d)", made)
	}
	cp := *a // a copy of the value shares its caches
	if Memo(&cp, testKey{}, mk) != ca {
		t.Fatal("a copy of the KB value does not share its memo")
	}
	if Memo(b, testKey{}, mk) == ca || made != 2 {
		t.Fatal("two KB values of one root share a cache")
	}
	if err := a.Close(); err == nil || ca.closed != 1 {
		t.Fatalf("Close: err %v, closed %d; want the value's Close called once and its error returned", err, ca.closed)
	}
	if Memo(a, testKey{}, mk) == ca {
		t.Fatal("after Close the KB still returns the closed value")
	}
	var zero KB
	if first, second := Memo(&zero, testKey{}, mk), Memo(&zero, testKey{}, mk); first == second {
		t.Fatal("a zero KB keeps values it can never release")
	}
}
