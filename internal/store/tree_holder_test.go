package store

import "testing"

func TestHolder(t *testing.T) {
	for _, c := range []struct {
		paths []string
		want  int
		ok    bool
	}{
		{[]string{"a/practice-x.md"}, 0, true},
		{[]string{"a/practice-x (copy).md", "a/practice-x.md"}, 1, true},
		{[]string{"practice-x.md", "b/Copy of practice-x.md"}, 0, true},
		{[]string{"a/practice-x.md", "b/practice-x.md"}, -1, false}, // copied into another folder by its name
		{[]string{"a/one.md", "b/two.md"}, -1, false},               // neither named for it
		{[]string{"a/Practice-X.md", "a/copy.md"}, -1, false},       // named in another case: not for this spelling
	} {
		got, ok := Holder("practice-x", c.paths)
		if got != c.want || ok != c.ok {
			t.Errorf("Holder(%q) = %d, %v; want %d, %v", c.paths, got, ok, c.want, c.ok)
		}
	}
}

// TestHolderOf: of ids that differ only in case, a practice, map or
// molecule spelled with an upper-case letter (an id kk never gives) yields
// to the other; ids of other types, kept as written, name neither.
func TestHolderOf(t *testing.T) {
	for _, c := range []struct {
		ids, types, paths []string
		want              int
		ok                bool
	}{
		{[]string{"practice-x", "practice-X"}, []string{"practice", "practice"}, []string{"a/practice-x.md", "a/practice-X.md"}, 0, true},
		{[]string{"map-Y", "map-y"}, []string{"map", "map"}, []string{"map-Y.md", "b/map-y.md"}, 1, true},
		{[]string{"practice-x", "practice-x", "practice-X"}, []string{"practice", "practice", "practice"}, []string{"practice-x (copy).md", "practice-x.md", "practice-X.md"}, 1, true},
		{[]string{"REQ-1", "req-1"}, []string{"req", "req"}, []string{"REQ-1.md", "req-1.md"}, -1, false},
		{[]string{"practice-x", "practice-X"}, []string{"practice", "practice"}, []string{"a/other.md", "a/practice-X.md"}, -1, false},
		{[]string{"practice-x", "practice-x"}, []string{"practice", "practice"}, []string{"a/practice-x (copy).md", "a/practice-x.md"}, 1, true},
	} {
		got, ok := HolderOf(c.ids, c.types, c.paths)
		if got != c.want || ok != c.ok {
			t.Errorf("HolderOf(%q, %q) = %d, %v; want %d, %v", c.ids, c.paths, got, ok, c.want, c.ok)
		}
	}
}
