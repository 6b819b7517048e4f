package graph

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/kk-project/kk/internal/index"
)

// PatternSet matches file paths against many atoms' glob patterns without
// trying every pattern on every path. Patterns are bucketed by their
// literal leading folders ("src/auth" for "src/auth/**/*.go"): a path can
// only match patterns whose literal prefix is one of its own folder
// prefixes, so a lookup tries the buckets of the path's prefixes only. A
// literal tail ("_test.go" in "src/**/*_test.go") filters the candidates
// before the glob match.
type PatternSet struct {
	buckets map[string][]entry
}

type entry struct {
	owner   int    // index of the owning atom, as given to Add
	pattern string // the whole pattern
	tail    string // literal suffix every matching path ends with
}

// NewPatternSet returns an empty set.
func NewPatternSet() *PatternSet { return &PatternSet{buckets: map[string][]entry{}} }

// Add adds pattern, owned by owner.
func (s *PatternSet) Add(owner int, pattern string) {
	tail := pattern
	if i := strings.LastIndexAny(pattern, index.GlobMeta+"]/"); i >= 0 {
		tail = pattern[i+1:]
	}
	if strings.ContainsAny(pattern, "{") {
		tail = "" // a brace alternative may end differently
	}
	b := index.PatternBucket(pattern)
	s.buckets[b] = append(s.buckets[b], entry{owner: owner, pattern: pattern, tail: tail})
}

// Match calls fn for every (owner, pattern) whose pattern matches p, in
// the order of p's prefixes (shortest first), then in the order added.
func (s *PatternSet) Match(p string, fn func(owner int, pattern string)) {
	try := func(key string) {
		for _, e := range s.buckets[key] {
			if e.tail != "" && !strings.HasSuffix(p, e.tail) {
				continue
			}
			if ok, _ := doublestar.Match(e.pattern, p); ok {
				fn(e.owner, e.pattern)
			}
		}
	}
	for _, b := range index.PathBuckets(p) {
		try(b)
	}
}
