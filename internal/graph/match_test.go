package graph

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/bmatcuk/doublestar/v4"
)

// TestPatternSetAgreesWithBruteForce checks the bucketed matcher against
// trying every pattern on every path.
func TestPatternSetAgreesWithBruteForce(t *testing.T) {
	t.Parallel()
	segs := []string{"src", "auth", "a", "b.go", "x_test.go", "docs", "readme.md", "*", "**", "*.go", "*_test.go", "[ab]", "[a-z].go", "{auth,docs}", "a?", `a\*b`, "a*b"}
	names := []string{"src", "auth", "a", "b.go", "x_test.go", "docs", "readme.md", "ab", "a*b", "c.go", "zz"}
	rng := rand.New(rand.NewPCG(1, 2))
	var patterns []string
	for range 1500 {
		n := 1 + rng.IntN(4)
		p := ""
		for i := range n {
			if i > 0 {
				p += "/"
			}
			p += segs[rng.IntN(len(segs))]
		}
		if doublestar.ValidatePattern(p) {
			patterns = append(patterns, p)
		}
	}
	set := NewPatternSet()
	for i, p := range patterns {
		set.Add(i, p)
	}
	matches := 0
	for range 800 {
		n := 1 + rng.IntN(5)
		p := ""
		for i := range n {
			if i > 0 {
				p += "/"
			}
			p += names[rng.IntN(len(names))]
		}
		var want, got []string
		for i, pat := range patterns {
			if ok, _ := doublestar.Match(pat, p); ok {
				want = append(want, fmt.Sprint(i))
			}
		}
		set.Match(p, func(owner int, pattern string) {
			if patterns[owner] != pattern {
				t.Fatalf("owner %d reported with pattern %q, added with %q", owner, pattern, patterns[owner])
			}
			got = append(got, fmt.Sprint(owner))
		})
		matches += len(want)
		slices.Sort(want)
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Fatalf("path %q: bucketed %v, brute force %v", p, got, want)
		}
	}
	if matches < 1000 {
		t.Fatalf("only %d matches: the generated paths do not exercise the matcher", matches)
	}
}
