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
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/txn"
)

// A rebuild that finds the generated files already current records the
// generation cache, so the next rebuild skips generating: without it,
// every "nothing to do" rebuild of a fresh clone renders the whole tree
// again.
func TestRebuildWithNothingToWriteRecordsTheGenerationCache(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	for _, title := range []string{"One", "Two"} {
		in := contracts.NodeInput{Type: "practice", Title: title, Description: "d", Body: "b", Folder: "f"}
		if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	cache := filepath.Join(k.StateDir(), "index.cache")
	if err := os.Remove(cache); err != nil {
		t.Fatal(err)
	}
	res, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed) != 0 {
		t.Fatalf("the generated files were current, yet %v changed", res.Changed)
	}
	if _, err := os.Stat(cache); err != nil {
		t.Fatalf("a rebuild with nothing to write left no generation cache: %v", err)
	}
}

// The generation cache records no content hash for a generated file
// larger than it hashes (GRAPH.md of a large tree). A hand edit of such a
// file moments after kk wrote it, same size and same mtime, is still
// found: a file that recent is generated again and compared, instead of
// being trusted by its stat.
func TestRacyEditOfALargeGeneratedFileIsFound(t *testing.T) {
	t.Parallel()
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
	if len(data) <= 256<<10 {
		t.Fatalf("GRAPH.md is %d bytes; the test needs one larger than the hashed limit", len(data))
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
