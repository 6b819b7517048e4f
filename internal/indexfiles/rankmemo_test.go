package indexfiles

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/node"
)

// TestIncrementalRankMatchesFull: whatever sequence of leaves comes, goes
// and changes (tags, titles, links, leaves of many tags), the ranking a
// memo keeps up to date is exactly the ranking computed from scratch.
func TestIncrementalRankMatchesFull(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 3))
		vocab := 3 + rng.IntN(20)
		next := 0
		newLeaf := func(ids []string) *node.Node {
			next++
			n := &node.Node{ID: fmt.Sprintf("practice-l%d", next), Path: fmt.Sprintf("f%d/practice-l%d.md", rng.IntN(4), next),
				Title: fmt.Sprintf("Title %d", rng.IntN(8))}
			size := rng.IntN(6)
			if rng.IntN(12) == 0 {
				size = maxSubsetTags + 1 + rng.IntN(3)
			}
			for range size {
				n.Tags = append(n.Tags, fmt.Sprintf("t%d", rng.IntN(max(vocab, size+2))))
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
		for range 40 + rng.IntN(80) {
			leaves = append(leaves, newLeaf(ids()))
		}
		m := &genMemo{}
		for step := range 40 {
			// A new read of the tree: every leaf a new node value.
			for i, n := range leaves {
				c := *n
				leaves[i] = &c
			}
			switch edits := 1 + rng.IntN(4); {
			case step == 20:
				for range maxRankEdits + 1 { // too many: ranked from scratch
					leaves = append(leaves, newLeaf(ids()))
				}
			default:
				for range edits {
					switch op := rng.IntN(4); {
					case op == 0 && len(leaves) > 5:
						i := rng.IntN(len(leaves))
						leaves = slices.Delete(leaves, i, i+1)
					case op == 1:
						leaves = append(leaves, newLeaf(ids()))
					default: // a leaf changes in place: tags, title or links
						i := rng.IntN(len(leaves))
						c := newLeaf(ids())
						c.ID, c.Path = leaves[i].ID, leaves[i].Path
						leaves[i] = c
					}
				}
			}
			slices.SortFunc(leaves, func(a, b *node.Node) int { return strings.Compare(a.Path, b.Path) })
			byID := map[string]*node.Node{}
			for _, n := range leaves {
				byID[strings.ToLower(n.ID)] = n
			}
			hash := func(n *node.Node) string {
				return fmt.Sprintf("%s|%s|%v|%v", n.Path, n.Title, n.Tags, n.RelatesTo)
			}
			lookup := func(id string) (*node.Node, bool) { n, ok := byID[strings.ToLower(id)]; return n, ok }
			inDegree := linksTo(leaves)
			got := m.rank(leaves, hash, lookup, inDegree)
			want := rankCohorts(leaves, inDegree)
			if len(got) != len(want) {
				t.Fatalf("seed %d step %d: %d tags ranked, want %d", seed, step, len(got), len(want))
			}
			for tag, w := range want {
				if g := got[tag]; !slices.Equal(g, w) {
					t.Fatalf("seed %d step %d tag %s: got %v, want %v", seed, step, tag, paths(g), paths(w))
				}
			}
			if step > 1 && m.ranks == nil {
				t.Fatalf("seed %d step %d: the memo keeps no ranking", seed, step)
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

// TestRankCacheMatchesFull: a run that generates once ranks from the rank
// cache file, re-ranking only the cohorts that changed; whatever changed
// since the file was written, the ranking is the one computed from
// scratch.
func TestRankCacheMatchesFull(t *testing.T) {
	for seed := range uint64(12) {
		rng := rand.New(rand.NewPCG(seed, 5))
		path := filepath.Join(t.TempDir(), "rank.cache")
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
				if err := os.WriteFile(path, []byte("kk-rank-cache 1\nbad line\n"), 0o644); err != nil {
					t.Fatal(err)
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
			got := rankCached(path, leaves, hash, lookup, inDegree)
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
