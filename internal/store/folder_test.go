package store_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
)

// Reading every folder with ReadFolder finds the leaves ReadTree finds,
// with the same hashes, whatever the folder holds: index.md, log.md, dot
// files and folders, other files, a symlinked leaf, a link to a folder.
func TestReadFolderAgreesWithReadTree(t *testing.T) {
	k := optest.NewKB(t)
	for i, folder := range []string{"", "net", "net/retry", "db"} {
		in := contracts.NodeInput{Type: "practice", Title: "Leaf " + string(rune('a'+i)), Description: "d", Folder: folder, Body: "b\n"}
		if _, err := curate.WriteNode(context.Background(), k, in, curate.WriteOptions{Mode: curate.Create}); err != nil {
			t.Fatal(err)
		}
	}
	nodes := k.NodesDir()
	for name, data := range map[string]string{"db/log.md": "log", "db/notes.txt": "x", ".hidden/x.md": "x", "db/.draft.md": "x"} {
		p := filepath.Join(nodes, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A leaf reached through a symlink to a file in a dot folder (which
	// the readers do not walk).
	src, err := os.ReadFile(filepath.Join(nodes, "net", "practice-leaf-b.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(nodes, ".store"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(nodes, ".store", "linked.md"), []byte(strings.ReplaceAll(string(src), "practice-leaf-b", "practice-linked")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(nodes, ".store", "linked.md"), filepath.Join(nodes, "db", "practice-linked.md")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	if err := os.Symlink(filepath.Join(nodes, "net"), filepath.Join(nodes, "db", "netlink")); err != nil {
		t.Fatal(err)
	}
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	hashes := map[string]string{}
	queue := []string{""}
	var dirs []string
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		dirs = append(dirs, d)
		leaves, subs, err := k.ReadFolder(d)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range leaves {
			if l.Err != nil {
				t.Fatalf("%s: %v", l.Path, l.Err)
			}
			if n, ok := tr.ByID(l.ID); !ok || n.Path != l.Path || tr.LeafHash(l.Path) != l.Hash {
				t.Errorf("%+v is not ReadTree's leaf", l)
			}
			hashes[l.Path] = l.Hash
		}
		queue = append(queue, subs...)
	}
	if len(hashes) != len(tr.Leaves) || store.HashLeaves(hashes) != indexfiles.NodesHash(tr) {
		t.Errorf("ReadFolder found %d leaves, ReadTree %d; hashes %s and %s", len(hashes), len(tr.Leaves), store.HashLeaves(hashes), indexfiles.NodesHash(tr))
	}
	store.SortLocale(dirs)
	if got, want := len(dirs), len(tr.Dirs); got != want {
		t.Errorf("folders %v, ReadTree's %v", dirs, tr.Dirs)
	}
	if _, _, err := k.ReadFolder("gone"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a missing folder: %v", err)
	}
	if err := os.WriteFile(filepath.Join(nodes, "db", "broken.md"), []byte("---\nnot: [closed\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	leaves, _, _ := k.ReadFolder("db")
	bad := 0
	for _, l := range leaves {
		if l.Err != nil {
			bad++
		}
	}
	if bad != 1 {
		t.Errorf("%d unreadable leaves in db, want 1: %+v", bad, leaves)
	}
}

// store.LeafOrder and store.HashSorted agree with NodesHash's sort of its lines, on
// paths where byte and UTF-16 order differ and where one path starts
// another.
func TestLeafOrderIsNodesHashOrder(t *testing.T) {
	paths := []string{"a.md", "a.md/b.md", "a.mdx.md", "b/\uE000.md", "b/\U0001F600.md", "b/z.md", "a-b.md", "a/b.md", "A.md"}
	hashes := map[string]string{}
	var ls []store.FolderLeaf
	for i, p := range paths {
		h := strings.Repeat(string(rune('0'+i)), 64)
		hashes[p] = h
		ls = append(ls, store.FolderLeaf{Path: p, Hash: h})
	}
	slices.SortFunc(ls, store.LeafOrder)
	if got, want := store.HashSorted(ls), store.HashLeaves(hashes); got != want {
		t.Errorf("store.HashSorted %s, HashLeaves %s; order %v", got, want, ls)
	}
}
