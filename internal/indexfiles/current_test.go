package indexfiles_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/benchtree"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A rebuild with nothing to do is told by the branch index alone
// (indexfiles.Current: the sync's shape of the tree and the record of the
// last generation), without assembling the tree; anything generation
// reads or writes that changed since makes it plan from the tree.
func TestCurrentWithoutTheTree(t *testing.T) {
	k, err := benchtree.Generate(t.TempDir(), benchtree.Options{Nodes: 200, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rebuild := func() {
		t.Helper()
		if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	age := func() {
		t.Helper()
		old := time.Now().Add(-time.Hour)
		err := filepath.WalkDir(k.Dir, func(p string, d os.DirEntry, err error) error {
			switch {
			case err != nil:
				return err
			case d.IsDir() && p == k.StateDir():
				return filepath.SkipDir
			case !d.IsDir():
				return os.Chtimes(p, old, old)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	rebuild()
	branch, err := index.CurrentBranch(ctx, k)
	if err != nil {
		t.Fatal(err)
	}
	db, err := index.OpenShared(ctx, k, branch)
	if err != nil {
		t.Fatal(err)
	}
	current := func() bool {
		t.Helper()
		_, sh, err := db.SyncShape(ctx, k.NodesDir(), nil)
		if err != nil {
			t.Fatal(err)
		}
		p, err := indexfiles.Current(ctx, k, db, sh)
		if err != nil {
			t.Fatal(err)
		}
		return p != nil
	}
	if !current() {
		t.Fatal("right after a rebuild the files are not current")
	}
	age()
	if !current() {
		t.Fatal("the files are not current once aged")
	}
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf := k.NodePath(tr.Leaves[7].Path)
	for _, c := range []struct {
		name   string
		change func() error
	}{
		{"a leaf edited by hand", func() error {
			data, err := os.ReadFile(leaf)
			if err != nil {
				return err
			}
			return os.WriteFile(leaf, append(data, "\nMore.\n"...), 0o644)
		}},
		{"a generated file edited", func() error {
			f, err := os.OpenFile(k.GraphPath(), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			_, err = f.WriteString("\n")
			return err
		}},
		{"a folder's index.md removed", func() error { return os.Remove(filepath.Join(k.NodesDir(), tr.Leaves[3].Dir(), "index.md")) }},
		{"a stale index.md added", func() error {
			if err := os.MkdirAll(filepath.Join(k.NodesDir(), "empty"), 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(k.NodesDir(), "empty", "index.md"), []byte("x\n"), 0o644)
		}},
		{"a folder summary changed", func() error {
			f, err := os.OpenFile(k.SummariesPath(), os.O_APPEND|os.O_WRONLY|os.O_CREATE, 0o644)
			if err != nil {
				return err
			}
			defer func() { _ = f.Close() }()
			_, err = f.WriteString("\n## zz-new\nA folder no leaf is in.\n")
			return err
		}},
	} {
		if err := c.change(); err != nil {
			t.Fatal(err)
		}
		if current() {
			t.Fatalf("%s: the files were taken as current", c.name)
		}
		rebuild()
		if !current() {
			t.Fatalf("%s: not current after the rebuild", c.name)
		}
		res, err := indexfiles.Check(ctx, store.New(k.Root))
		if err != nil || len(res.Changed)+len(res.Removed) > 0 {
			t.Fatalf("%s: check after the rebuild: %+v %v", c.name, res, err)
		}
		age()
	}
}
