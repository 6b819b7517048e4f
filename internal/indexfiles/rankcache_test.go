package indexfiles

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
)

// TestRankCacheMatchesFull: a run that generates once ranks from the
// rankings the branch index records, re-ranking only the cohorts that
// changed; whatever changed since they were recorded (and whatever is
// wrong with the record), the ranking is the one computed from scratch.
func TestRankCacheMatchesFull(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 5))
		recorded := map[string]index.Ranked{} // what the index would hold
		next := 0
		newLeaf := func(ids []string) *node.Node {
			next++
			n := &node.Node{ID: fmt.Sprintf("practice-l%d", next), Path: fmt.Sprintf("f%d/practice-l%d.md", rng.IntN(4), next), Title: fmt.Sprintf("Title %d", rng.IntN(8))}
			size := rng.IntN(6)
			if rng.IntN(12) == 0 {
				size = maxSubsetTags + 1 + rng.IntN(3)
			}
			for range size {
				n.Tags = append(n.Tags, fmt.Sprintf("t%d", rng.IntN(25)))
			}
			for range rng.IntN(3) {
				if len(ids) > 0 {
					n.RelatesTo = append(n.RelatesTo, ids[rng.IntN(len(ids))])
				}
			}
			return n
		}
		var leaves []*node.Node
		ids := func() []string {
			out := make([]string, len(leaves))
			for i, n := range leaves {
				out[i] = n.ID
			}
			return out
		}
		for range 60 + rng.IntN(80) {
			leaves = append(leaves, newLeaf(ids()))
		}
		for step := range 30 {
			for range 1 + rng.IntN(3) {
				switch op := rng.IntN(4); {
				case op == 0 && len(leaves) > 5:
					i := rng.IntN(len(leaves))
					leaves = slices.Delete(leaves, i, i+1)
				case op == 1:
					leaves = append(leaves, newLeaf(ids()))
				default:
					i := rng.IntN(len(leaves))
					c := newLeaf(ids())
					c.ID, c.Path = leaves[i].ID, leaves[i].Path
					leaves[i] = c
				}
			}
			if step == 10 {
				// A record that lies: right fingerprints, ids of leaves
				// that are gone or wrong.
				for tag, r := range recorded {
					r.IDs = append([]string{"practice-gone"}, r.IDs...)
					recorded[tag] = r
					break
				}
			}
			slices.SortFunc(leaves, func(a, b *node.Node) int { return strings.Compare(a.Path, b.Path) })
			byID := map[string]*node.Node{}
			for _, n := range leaves {
				byID[strings.ToLower(n.ID)] = n
			}
			hash := func(n *node.Node) string { return fmt.Sprintf("%s|%s|%v|%v", n.Path, n.Title, n.Tags, n.RelatesTo) }
			lookup := func(id string) (*node.Node, bool) { n, ok := byID[strings.ToLower(id)]; return n, ok }
			inDegree := linksTo(leaves)
			rr := &rankRecord{old: maps.Clone(recorded), put: map[string]index.Ranked{}}
			got := rankCached(rr, leaves, hash, lookup, inDegree)
			maps.Copy(recorded, rr.put)
			for _, tag := range rr.drop {
				delete(recorded, tag)
			}
			if step > 0 && len(rr.put) == len(got) && len(got) > 10 {
				t.Fatalf("seed %d step %d: every tag was ranked again", seed, step)
			}
			want := rankCohorts(leaves, inDegree)
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: %d tags ranked, want %d", seed, step, len(got), len(want))
			}
			for tag, w := range want {
				if g := got[tag]; !slices.Equal(g, w) {
					t.Fatalf("seed %d step %d tag %s: got %v, want %v", seed, step, tag, paths(g), paths(w))
				}
			}
		}
	}
}

func paths(ns []*node.Node) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = n.Path
	}
	return out
}
