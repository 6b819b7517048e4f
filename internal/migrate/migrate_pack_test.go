package migrate

import (
	"context"
	"errors"
	"github.com/kk-project/kk/internal/store"
	"io/fs"
	"os"
	"testing"
)

// TestMigrateCopy converts a bare copy of a v2 tree (no config, no lock,
// no index files but the old ones): leaves become v3, old index.md
// summaries join FOLDER_SUMMARIES.md behind the entries already there, and
// nothing else is written.
func TestMigrateCopy(t *testing.T) {
	ctx := context.Background()
	k := store.New(t.TempDir())
	migWriteTree(t, k, map[string]string{
		"index.md":                   "---\nschema_version: 2\nnode_count: 2\n---\n# old\n",
		"cli/index.md":               "---\nschema_version: 2\nsummary: >-\n  command line\n  conventions\n---\n# Cli Index\n",
		"store/index.md":             "---\nschema_version: 2\nsummary: old store summary\n---\n# Store Index\n",
		"cli/practice-exit-codes.md": "---\nschema_version: 2\nid: practice-exit-codes\ntitle: Exit codes\nkind: practice\ntags:\n  - cli\nderived_from: []\nrelates_to:\n  - map-store\ndepends_on: []\nconfidence: high\nsummary: One switch decides them.\n---\nBody.\n",
		"store/map-store.md":         "---\nschema_version: 2\nid: map-store\ntitle: Store\nkind: map\ntags: []\nderived_from: []\nrelates_to: []\ndepends_on: []\nconfidence: medium\nsummary: Where data lives.\n---\nStore body.\n",
	})
	if err := os.WriteFile(k.SummariesPath(), []byte("---\nschema_version: 1\nsummaries:\n  store: kept summary\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	oldIndex, err := os.ReadFile(k.NodePath("cli/index.md"))
	if err != nil {
		t.Fatal(err)
	}
	res, err := MigrateCopy(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	if res.Noop || res.Converted != 2 || res.FolderSummaries != 1 {
		t.Fatalf("result = %+v; want 2 converted and 1 summary harvested", res)
	}
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range tree.Leaves {
		if n.Format != 3 {
			t.Errorf("%s: format %d after MigrateCopy", n.Path, n.Format)
		}
	}
	leaf, err := k.ReadLeaf("cli/practice-exit-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	if leaf.Description != "One switch decides them." || len(leaf.RelatesTo) != 1 || leaf.RelatesTo[0] != "map-store" {
		t.Errorf("converted leaf = %+v", leaf)
	}
	s, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		t.Fatal(err)
	}
	if s["cli"] != "command line conventions" || s["store"] != "kept summary" || len(s) != 2 {
		t.Errorf("summaries = %v; want the harvested cli summary and the existing store one", s)
	}
	if got, _ := os.ReadFile(k.NodePath("cli/index.md")); string(got) != string(oldIndex) {
		t.Error("MigrateCopy rewrote an index.md; it must leave index files to the caller")
	}
	for _, p := range []string{k.EntryPath(), k.GraphPath(), k.LockPath()} {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists after MigrateCopy (err %v); it neither rebuilds nor locks", p, err)
		}
	}

	again, err := MigrateCopy(ctx, k)
	if err != nil || !again.Noop {
		t.Errorf("second MigrateCopy = %+v, %v; want nothing to do", again, err)
	}
}

// TestMigrateCopyRefuses leaves a flat v1 copy, and a copy with a broken
// v2 leaf, exactly as they were.
func TestMigrateCopyRefuses(t *testing.T) {
	ctx := context.Background()
	flat := store.New(t.TempDir())
	migWriteTree(t, flat, map[string]string{"practice/practice-a.md": "---\nid: practice-a\ntitle: A\nkind: practice\nsummary: a\n---\nA.\n"})
	if _, err := MigrateCopy(ctx, flat); !errors.Is(err, ErrStepOrder) {
		t.Errorf("MigrateCopy of a v1 copy: %v; want ErrStepOrder", err)
	}

	k := store.New(t.TempDir())
	good := "---\nschema_version: 2\nid: practice-good\ntitle: Good\nkind: practice\ntags: []\nderived_from: []\nrelates_to: []\ndepends_on: []\nconfidence: high\nsummary: fine\n---\nGood.\n"
	bad := "---\nschema_version: 2\nid: practice-bad\ntitle: Bad\nkind: practice\ntype: practice\ntags: []\nderived_from: []\nrelates_to: []\ndepends_on: []\nconfidence: high\nsummary: carries a v3 key\n---\nBad.\n"
	migWriteTree(t, k, map[string]string{"practice-good.md": good, "practice-bad.md": bad})
	before := migSnapshot(t, k)
	_, err := MigrateCopy(ctx, k)
	var te *store.TreeError
	if !errors.As(err, &te) {
		t.Fatalf("MigrateCopy with a bad leaf: %v; want a *store.TreeError", err)
	}
	migDiff(t, "a refused MigrateCopy", before, migSnapshot(t, k))
}
