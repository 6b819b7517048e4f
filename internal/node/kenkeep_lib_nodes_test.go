package node

import (
	"strings"
	"testing"
)

// Ported from kenkeep v1.17 tests/lib/nodes.test.ts ("slugify and
// deriveNodeId match the kind-slug pattern", "ensureUniqueId returns the
// candidate, appends suffixes on collisions, and throws after 4"). The tree
// half of that file is internal/cli/testdata/script/kenkeep-lib-nodes.txtar.
func TestKenkeepLibSlugAndDerivedID(t *testing.T) {
	for in, want := range map[string]string{
		"Rivermark Discover — module!!": "rivermark-discover-module",
		"   ":                           "untitled",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
	if got, err := DeriveID("practice", "Use DI in controllers"); err != nil || got != "practice-use-di-in-controllers" {
		t.Errorf("DeriveID = %q, %v; want practice-use-di-in-controllers", got, err)
	}
	// kenkeep derives practice-untitled from a blank title; kk refuses a
	// title with no letter or digit (two such titles would share one id).
	if got, err := DeriveID("practice", "   "); err == nil {
		t.Errorf("DeriveID(practice, blank) = %q, want an error", got)
	}
}

func TestKenkeepLibUniqueIDSuffixes(t *testing.T) {
	set := func(ids ...string) func(string) bool {
		m := map[string]bool{}
		for _, id := range ids {
			m[id] = true
		}
		return func(s string) bool { return m[s] }
	}
	for _, c := range []struct {
		taken []string
		want  string
	}{
		{nil, "practice-foo"},
		{[]string{"practice-foo"}, "practice-foo-2"},
		{[]string{"practice-foo", "practice-foo-2", "practice-foo-3"}, "practice-foo-4"},
		// A gap is filled: the first free suffix wins.
		{[]string{"practice-foo", "practice-foo-3"}, "practice-foo-2"},
	} {
		if got, err := UniqueID(set(c.taken...), "practice-foo"); err != nil || got != c.want {
			t.Errorf("UniqueID(taken %v) = %q, %v; want %q", c.taken, got, err, c.want)
		}
	}
	_, err := UniqueID(set("practice-foo", "practice-foo-2", "practice-foo-3", "practice-foo-4"), "practice-foo")
	if err == nil || !strings.Contains(err.Error(), `"practice-foo"`) || !strings.Contains(err.Error(), "more distinct") {
		t.Errorf("UniqueID with four ids taken: %v, want an error naming the id and asking for a more distinct slug", err)
	}
}
