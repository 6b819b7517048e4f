package txn_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// A rebuild that finds the generated files already current records them
// in the branch index, so the next rebuild skips generating: without it,
// every "nothing to do" rebuild of a fresh clone renders the whole tree
// again.
func TestRebuildWithNothingToWriteRecordsTheGeneration(t *testing.T) {
	k := optest.NewKB(t)
	ctx := context.Background()
	for _, title := range []string{"One", "Two"} {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b", Folder: "f"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		t.Fatal(err)
	}
	if g, err := db.Generation(ctx); err != nil || g == nil || len(g.Files) != 4 {
		t.Fatalf("after the writes: %+v, %v; want ENTRY.md, GRAPH.md and two index.md recorded", g, err)
	}
	if err := db.ForgetGeneration(ctx); err != nil {
		t.Fatal(err)
	}
	res, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 {
		t.Fatalf("the generated files were current, yet %v changed", res.Changed)
	}
	if g, err := db.Generation(ctx); err != nil || g == nil || len(g.Files) != 4 {
		t.Fatalf("a rebuild with nothing to write recorded %+v, %v", g, err)
	}
}

// A hand edit of a generated file moments after kk wrote it (GRAPH.md of
// a large tree here), same size and same mtime, is still found: a file
// that recent is not trusted by its stat but by the sha256 of its bytes.
func TestRacyEditOfALargeGeneratedFileIsFound(t *testing.T) {
	dir := t.TempDir()
	k, err := benchtree.Generate(dir, benchtree.Options{Nodes: 1200, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	in := contracts.NodeInput{Type: "practice", Title: "Fresh", Description: "d", Body: "b", Folder: "f"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatal(err)
	}
	graph := filepath.Join(k.Dir, "GRAPH.md")
	data, err := os.ReadFile(graph)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(graph)
	if err != nil {
		t.Fatal(err)
	}
	edited := bytes.Replace(data, []byte("Fresh"), []byte("Frash"), 1)
	if bytes.Equal(edited, data) {
		t.Fatal("the new leaf's title is not in GRAPH.md")
	}
	if err := os.WriteFile(graph, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(graph, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
	res, err := indexfiles.Check(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(res.Changed, ".ai/kenkeep/GRAPH.md") {
		t.Fatalf("a same-size edit of GRAPH.md right after a write was not found: changed %v", res.Changed)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := os.ReadFile(graph); !bytes.Equal(got, data) {
		t.Fatal("the rebuild did not restore GRAPH.md")
	}
}
