package indexfiles_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Rebuilds after writes reuse folder indexes whose inputs did not change.
// Whatever sequence of writes happens, the result must equal a rebuild
// from nothing: here every step's tree is checked with the caches deleted.
func TestIncrementalRebuildMatchesFull(t *testing.T) {
	dir := t.TempDir()
	k, err := benchtree.Generate(dir, benchtree.Options{Nodes: 300, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(1, 1))
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, n := range tree.Leaves {
		ids = append(ids, n.ID)
	}
	tags := []string{"api", "cache", "http", "retry", "brand-new", "search"}
	folders := []string{"", "api-0", "api-0/x", "cache-2", "new/deep/folder"}
	for step := range 25 {
		if step%7 == 3 {
			// Hand edits between two writes of one long-lived KB: a
			// leaf's title and tags change, another leaf goes.
			handEdit(t, k, tree.Leaves[rng.IntN(len(tree.Leaves))].Path, rng)
			i := rng.IntN(len(tree.Leaves))
			if err := os.Remove(k.NodePath(tree.Leaves[i].Path)); err != nil {
				t.Fatal(err)
			}
			ids = slices.DeleteFunc(ids, func(id string) bool { return id == tree.Leaves[i].ID })
		}
		in := contracts.NodeInput{
			Type: []string{"practice", "map"}[rng.IntN(2)], Title: fmt.Sprintf("Step %d", rng.IntN(15)),
			Description: fmt.Sprintf("desc %d", rng.IntN(3)), Tags: []string{tags[rng.IntN(len(tags))], tags[rng.IntN(len(tags))]},
			RelatesTo: []string{ids[rng.IntN(len(ids))]}, Folder: folders[rng.IntN(len(folders))], Body: "body\n",
		}
		if in.Tags[0] == in.Tags[1] {
			in.Tags = in.Tags[:1]
		}
		if step%6 == 2 {
			// A hand edit of GRAPH.md: the next write (through the
			// long-lived KB, which kept the bytes it wrote) generates
			// it as a full generation does, edit or not.
			p := filepath.Join(k.Dir, "GRAPH.md")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(strings.Replace(string(data), "- **kind:** ", "- **kind:** edited ", 3)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		// Odd steps write as a new command would (a new KB value: the
		// record in the branch index, nothing in memory), even ones
		// through the long-lived KB and what it keeps.
		w := k
		if step%2 == 1 {
			w = store.New(k.Root)
		}
		if _, err := curate.WriteNode(ctx, w, in, curate.WriteOptions{Mode: curate.Update}); err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if step%5 == 4 {
			// A summary change touches the parent folder's index only.
			s := store.Summaries{"api-0": fmt.Sprintf("api things %d", step)}
			data, _ := store.RenderSummaries(s)
			if err := os.WriteFile(k.SummariesPath(), data, 0o644); err != nil {
				t.Fatal(err)
			}
			if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
				t.Fatal(err)
			}
		}
		// With the branch index gone (its leaf state, the record of the
		// last generation and the rankings), a check must find nothing
		// to change.
		branches := filepath.Join(k.StateDir(), "branches")
		if err := os.Rename(branches, branches+".bak"); err != nil {
			t.Fatal(err)
		}
		// A new KB value: nothing kept in memory either.
		fresh := store.New(k.Root)
		res, err := indexfiles.Check(ctx, fresh)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Changed)+len(res.Removed) > 0 {
			t.Fatalf("step %d: incremental output differs from a full rebuild in %v %v", step, res.Changed, res.Removed)
		}
		if err := fresh.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.RemoveAll(branches); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(branches+".bak", branches); err != nil {
			t.Fatal(err)
		}
	}
}

// handEdit rewrites a leaf's tags and relates_to in place, as an editor
// would, without kk.
func handEdit(t *testing.T, k *store.KB, rel string, rng *rand.Rand) {
	t.Helper()
	p := k.NodePath(rel)
	data, err := os.ReadFile(p)
	if os.IsNotExist(err) {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	inTags := false
	for _, l := range strings.Split(string(data), "\n") {
		if inTags && strings.HasPrefix(l, "  - ") {
			continue
		}
		inTags = false
		switch {
		case strings.HasPrefix(l, "tags:"):
			l, inTags = fmt.Sprintf("tags: [hand-%d, cache]", rng.IntN(3)), true
		case strings.HasPrefix(l, "title:"):
			l = fmt.Sprintf("title: Hand edited %d", rng.IntN(3))
		}
		out = append(out, l)
	}
	if err := os.WriteFile(p, []byte(strings.Join(out, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
}
