package store

import "testing"

func TestLinkPath(t *testing.T) {
	cases := []struct {
		from, target, want string
		ok                 bool
	}{
		{"c/z.md", "../a/x.md", "a/x.md", true},
		{"c/z.md", "x.md", "c/x.md", true},
		{"c/z.md", "./d/../x.md", "c/x.md", true},
		{"z.md", "a/x.md", "a/x.md", true},
		{"c/d/z.md", "/a/x.md", "a/x.md", true},
		{"c/z.md", "../../README.md", "", false}, // out of nodes/: a file of the repository
		{"z.md", "../x.md", "", false},
		{"c/z.md", "/../x.md", "", false},
		{"c/z.md", "..", "", false},
	}
	for _, c := range cases {
		got, ok := LinkPath(c.from, c.target)
		if got != c.want || ok != c.ok {
			t.Errorf("LinkPath(%q, %q) = %q, %v; want %q, %v", c.from, c.target, got, ok, c.want, c.ok)
		}
	}
}
