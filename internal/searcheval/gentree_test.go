package searcheval_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/searcheval"
	"github.com/kk-project/kk/internal/store"
)

// A question that names a leaf's title is answered, by search and by the
// prompt-context hook, on a generated tree of 10,000 leaves whose bodies
// share the same few dozen words (the worst case for ranked search): the
// question "how does the Atomic adapter header (api) work, and what should
// I watch for when I change it?" once got nothing from either.
func TestTitleQuestionsOnAGeneratedTree(t *testing.T) {
	ctx := context.Background()
	k, err := benchtree.Generate(t.TempDir(), benchtree.Options{Nodes: 10000, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	var leaves []string
	err = filepath.WalkDir(k.NodesDir(), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && filepath.Ext(p) == ".md" && d.Name() != "index.md" {
			leaves = append(leaves, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(leaves)
	search, closeSearch, err := searcheval.InProcess(ctx, k, searcheval.RankSearch, 5)
	if err != nil {
		t.Fatal(err)
	}
	defer closeSearch()
	hook, closeHook, err := searcheval.InProcess(ctx, k, searcheval.RankHook, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer closeHook()
	rng := rand.New(rand.NewPCG(7, 7))
	for range 40 {
		n := readLeaf(t, k, leaves[rng.IntN(len(leaves))])
		q := fmt.Sprintf("how does the %s work, and what should I watch for when I change it?", n.Title)
		for name, rank := range map[string]searcheval.Ranker{"search": search, "the hook": hook} {
			ids, err := rank(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(ids, n.ID) {
				t.Errorf("%s: %q lists %v, not %s", name, q, ids, n.ID)
			}
		}
	}
}

func readLeaf(t *testing.T, k *store.KB, path string) *node.Node {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(k.NodesDir(), path)
	n, err := node.Parse(filepath.ToSlash(rel), src)
	if err != nil {
		t.Fatal(err)
	}
	return n
}
