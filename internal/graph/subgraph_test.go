package graph

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/op"
)

// TestIndexedReadsMatchTheWholeGraph: context and get, which read only part
// of the graph from the index, answer exactly what the whole graph parsed
// from the leaves answers.
func TestIndexedReadsMatchTheWholeGraph(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	k, err := benchtree.Generate(filepath.Join(t.TempDir(), "repo"), benchtree.Options{Nodes: 600, Atoms: 300, Molecules: 20, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	whole, err := Load(k)
	if err != nil {
		t.Fatal(err)
	}
	o := viewOpts{changelog: true, limit: DefaultChangelogLimit}
	same := func(what string, got, want any) {
		t.Helper()
		g, _ := json.Marshal(got)
		w, _ := json.Marshal(want)
		if string(g) != string(w) {
			t.Fatalf("%s differs:\n index: %s\n whole: %s", what, g, w)
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	matched := 0
	for round := range 20 {
		var paths []string
		for range 1 + round%7 {
			paths = append(paths, benchtree.RepoPath(rng, 300))
		}
		r := op.Wrap(Context(ctx, k, ContextParams{Paths: paths}))
		if !r.Success {
			t.Fatal(r.Error)
		}
		want, err := whole.Context(ctx, k.Root, paths, o)
		if err != nil {
			t.Fatal(err)
		}
		matched += len(paths) - len(want.UnmatchedPaths)
		same("context of "+paths[0], r.Data, want)
	}
	if matched < 20 {
		t.Fatalf("only %d paths matched an atom: the test exercises nothing", matched)
	}
	for _, a := range whole.SortedAtoms()[:30] {
		r := op.Wrap(Get(ctx, k, GetParams{EntityType: KindAtom, ID: a.ID}))
		want, _ := whole.get(ctx, KindAtom, a.ID, o)
		same("get "+a.ID, r.Data, want)
	}
	for _, m := range whole.SortedMolecules() {
		r := op.Wrap(Get(ctx, k, GetParams{EntityType: KindMolecule, ID: m.ID}))
		want, _ := whole.get(ctx, KindMolecule, m.ID, o)
		same("get "+m.ID, r.Data, want)
	}
}
