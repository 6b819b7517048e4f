package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/node"
)

// The facts a snapshot carries through its patches (in-degrees, the
// leaves of each folder and of each tag) are those gathered from its
// leaves anew, after every one of 200 random patches: leaves put in new
// and old folders, removed, rewritten with other tags and links, tags
// repeated in one leaf. The snapshot patched from stays as it was.
func TestSnapshotFactsFollowPatches(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 8))
	dirs := []string{"", "api", "api/v2", "cache", "deep/er/still"}
	tags := []string{"api", "cache", "http", "retry", "API"}
	leaf := func(rel, id string) LeafRead {
		var tl, rl []string
		for range rng.IntN(4) {
			tl = append(tl, tags[rng.IntN(len(tags))])
		}
		for range rng.IntN(3) {
			rl = append(rl, fmt.Sprintf("practice-%d", rng.IntN(40)))
		}
		src := fmt.Sprintf("---\ntype: practice\ntitle: T %s\ndescription: d\ntags: [%s]\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: [%s]\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n",
			id, joinComma(tl), id, joinComma(rl))
		n, err := node.Parse(rel, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		n.Release(false)
		return LeafRead{File: NewLeafFile(rel, "/x/"+rel, int64(len(src)), 1), Leaf: n, Hash: fmt.Sprintf("%064x", rng.Uint64())}
	}
	relOf := func(i int) string {
		d := dirs[i%len(dirs)]
		return JoinRel(d, fmt.Sprintf("practice-%d.md", i))
	}
	var reads []LeafRead
	for i := range 30 {
		reads = append(reads, leaf(relOf(i), fmt.Sprintf("practice-%d", i)))
	}
	l := &Listing{Dirs: dirs, IndexDirs: map[string]bool{}}
	snap := NewSnapshot(l, reads)
	_ = snap.InDegrees(nil) // gathered: carried from here on
	patched := 0
	for step := range 200 {
		live := slices.Collect(func(yield func(string) bool) {
			for v := range snap.All() {
				if !yield(v.Path()) {
					return
				}
			}
		})
		var gone []string
		var put []LeafRead
		for range 1 + rng.IntN(3) {
			i := rng.IntN(40)
			rel := relOf(i)
			if slices.Contains(gone, rel) || slices.ContainsFunc(put, func(r LeafRead) bool { return r.File.Rel == rel }) {
				continue
			}
			_, there := snap.LeafAt(rel)
			switch {
			case there && rng.IntN(2) == 0:
				gone = append(gone, rel)
			case there:
				gone = append(gone, rel)
				put = append(put, leaf(rel, fmt.Sprintf("practice-%d", i)))
			default:
				put = append(put, leaf(rel, fmt.Sprintf("practice-%d", i)))
			}
		}
		before := snap.facts()
		beforeIn := maps.Clone(before.inDegree)
		next, ok := snap.Patch(gone, put, dirs, map[string]bool{})
		if !ok {
			t.Fatalf("step %d: patch refused (gone %v)", step, gone)
		}
		if !maps.Equal(snap.facts().inDegree, beforeIn) || len(live) != snap.Leaves() {
			t.Fatalf("step %d: the snapshot patched from changed", step)
		}
		if next.f.Load() == nil {
			t.Fatalf("step %d: the facts were not carried", step)
		}
		want := gatherFacts(next.t.Leaves)
		got := next.facts()
		if !maps.Equal(got.inDegree, want.inDegree) {
			t.Fatalf("step %d: in-degrees %v, gathered %v", step, got.inDegree, want.inDegree)
		}
		for name, pair := range map[string][2]map[string][]*node.Node{"folder": {got.byDir, want.byDir}, "tag": {got.byTag, want.byTag}} {
			if !maps.EqualFunc(pair[0], pair[1], func(a, b []*node.Node) bool { return slices.Equal(a, b) }) {
				t.Fatalf("step %d: the leaves of each %s differ from those gathered", step, name)
			}
		}
		snap = next
		patched++
	}
	if patched < 150 {
		t.Fatalf("only %d patches", patched)
	}
}

func joinComma(l []string) string {
	out := ""
	for i, s := range l {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
