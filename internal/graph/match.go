package graph

import (
	"strings"

	"github.com/bmatcuk/doublestar/v4"
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

const globMeta = `*?[{\`

// Add adds pattern, owned by owner.
func (s *PatternSet) Add(owner int, pattern string) {
	prefix := ""
	rest := pattern
	for {
		seg, after, more := strings.Cut(rest, "/")
		if !more || strings.ContainsAny(seg, globMeta) {
			break
		}
		if prefix == "" {
			prefix = seg
		} else {
			prefix += "/" + seg
		}
		rest = after
	}
	if !strings.ContainsAny(pattern, globMeta) {
		// A literal pattern names one file (or folder): its bucket is the
		// pattern itself.
		prefix = pattern
	}
	tail := pattern
	if i := strings.LastIndexAny(pattern, globMeta+"]/"); i >= 0 {
		tail = pattern[i+1:]
	}
	if strings.ContainsAny(pattern, "{") {
		tail = "" // a brace alternative may end differently
	}
	s.buckets[prefix] = append(s.buckets[prefix], entry{owner: owner, pattern: pattern, tail: tail})
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
	try("")
	for i := 0; i < len(p); i++ {
		if p[i] == '/' {
			try(p[:i])
		}
	}
	try(p)
}
