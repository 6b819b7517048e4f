package indexfiles

import (
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"math/rand/v2"
	"slices"
	"testing"

	"golang.org/x/text/collate"
)

// naiveCentrality is the definition: the sum of Jaccard similarity to every
// other leaf sharing the tag.
func naiveCentrality(sets [][]int) [][]float64 {
	out := make([][]float64, len(sets))
	for i, s := range sets {
		out[i] = make([]float64, len(s))
		for p, t := range s {
			sum := 0.0
			for j, o := range sets {
				if j != i && slices.Contains(o, t) {
					sum += jaccard(s, o)
				}
			}
			out[i][p] = roundScore(sum)
		}
	}
	return out
}

func TestCentralityMatchesDefinition(t *testing.T) {
	for seed := range uint64(20) {
		rng := rand.New(rand.NewPCG(seed, 7))
		tags := 2 + rng.IntN(15)
		n := 1 + rng.IntN(120)
		sets := make([][]int, n)
		for i := range sets {
			size := rng.IntN(6)
			if rng.IntN(15) == 0 {
				size = maxSubsetTags + 1 + rng.IntN(3) // exercises the pairwise path
			}
			for range size {
				if id := rng.IntN(max(tags, size+1)); !slices.Contains(sets[i], id) {
					sets[i] = append(sets[i], id)
				}
			}
			slices.Sort(sets[i])
		}
		total := 0
		for _, s := range sets {
			for _, id := range s {
				total = max(total, id+1)
			}
		}
		got := centralityScores(sets, total)
		want := naiveCentrality(sets)
		for i := range sets {
			for p := range sets[i] {
				if d := got[i][p] - want[i][p]; d > 1e-6 || d < -1e-6 {
					t.Fatalf("seed %d leaf %d tag %d: got %v want %v (sets %v)", seed, i, sets[i][p], got[i][p], want[i][p], sets)
				}
			}
		}
	}
}

func TestASCIICollationMatchesCollator(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := " !\"#$%&'()*+,-./0123456789:;<=>?@ABCDEFGHIJKLMNOPQRSTUVWXYZ[\\]^_`abcdefghijklmnopqrstuvwxyz{|}~"
	gen := func() string {
		b := make([]byte, rng.IntN(6))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = "aAbB-_ 1."[rng.IntN(9)]
			} else {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
		}
		return string(b)
	}
	c := store.CollatorPool.Get().(*collate.Collator)
	defer store.CollatorPool.Put(c)
	for range 20000 {
		a, b := gen(), gen()
		want := c.CompareString(a, b)
		if got := store.CompareASCII(a, b); got != want {
			t.Fatalf("compareASCII(%q, %q) = %d, collator says %d", a, b, got, want)
		}
	}
	words := []string{"banana", "Apple", "apple", "cherry", "_x", "-x", "1x", "a b", "ab", "a-b", "A"}
	got := slices.Clone(words)
	store.SortLocale(got)
	want := slices.Clone(words)
	slices.SortStableFunc(want, func(a, b string) int {
		if r := c.CompareString(a, b); r != 0 {
			return r
		}
		return store.CmpString(a, b)
	})
	if !slices.Equal(got, want) {
		t.Fatalf("SortLocale = %q, collator order %q", got, want)
	}
}

func TestRelHref(t *testing.T) {
	for _, c := range [][3]string{
		{"", "a/x.md", "a/x.md"},
		{"a", "a/x.md", "x.md"},
		{"a", "a/b/x.md", "b/x.md"},
		{"a/b", "a/c/x.md", "../c/x.md"},
		{"a/b", "x.md", "../../x.md"},
		{"a/b/c", "a/x.md", "../../x.md"},
		{"ab", "a/x.md", "../a/x.md"},
		{"a", "ab/x.md", "../ab/x.md"},
		{"a", "b/index.md", "../b/index.md"},
		{"a", "a/b/index.md", "b/index.md"},
	} {
		if got := relHref(c[0], c[1]); got != c[2] {
			t.Errorf("relHref(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
}

// Ties are broken by byTitle, one comparison of two titles, where they
// were broken by each title's rank in the sorted list of all titles
// (store.SortLocale). The two orders must be the same, on plain ASCII
// titles and on titles the fast path does not cover, mixed.
func TestByTitleIsTheSortedTitlesOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	pieces := []string{"a", "B", "b", "é", "E", "z", "_", "-", "1", " ", "Ω", "日本", "ß", "ss", "Z"}
	for round := range 50 {
		var titles []string
		for range 40 + rng.IntN(40) {
			var title string
			for range 1 + rng.IntN(4) {
				title += pieces[rng.IntN(len(pieces))]
			}
			if round%2 == 0 && !isASCII(title) {
				continue // every other round plain ASCII only
			}
			titles = append(titles, title)
		}
		want := slices.Clone(titles)
		store.SortLocale(want)
		leaves := make([]*node.Node, len(titles))
		for i, title := range titles {
			leaves[i] = &node.Node{Title: title}
		}
		slices.SortStableFunc(leaves, byTitle)
		for i, n := range leaves {
			if n.Title != want[i] {
				t.Fatalf("round %d: position %d is %q by byTitle, %q by SortLocale", round, i, n.Title, want[i])
			}
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
