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
