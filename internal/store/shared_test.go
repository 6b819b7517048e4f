package store

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The trees a process reads share the leaves that did not change: the
// same node, not a copy. A leaf written since is a new node.
func TestTreesShareUnchangedLeaves(t *testing.T) {
	k := sharedKB(t)
	first := readTree(t, k)
	second := readTree(t, k)
	for i, n := range first.Leaves {
		if second.Leaves[i] != n {
			t.Fatalf("%s: a second read made a new node of an unchanged leaf", n.Path)
		}
	}
	edit := filepath.Join(k.NodesDir(), "b.md")
	data, err := os.ReadFile(edit)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(edit, []byte(strings.Replace(string(data), "title: B", "title: Bee", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	third := readTree(t, k)
	for i, n := range third.Leaves {
		switch changed := n.Path == "b.md"; {
		case changed && (n == second.Leaves[i] || n.Title != "Bee" || second.Leaves[i].Title != "B"):
			t.Fatalf("b.md: the edited leaf was not read as a new node (title %q, before %q)", n.Title, second.Leaves[i].Title)
		case !changed && n != second.Leaves[i]:
			t.Fatalf("%s: a read after another leaf's edit made a new node of it", n.Path)
		}
	}
}

// Under the race detector (the test suite), changing a leaf of a tree is
// caught by the next read: it would be served to every later tree.
func TestChangingASharedLeafIsCaught(t *testing.T) {
	k := sharedKB(t)
	tr := readTree(t, k)
	tr.Leaves[0].Title = "changed by a caller"
	defer func() {
		r := recover()
		switch {
		case raceChecks && r == nil:
			t.Fatal("a changed shared leaf was not caught")
		case raceChecks && !strings.Contains(r.(string), tr.Leaves[0].Path+" of a Tree was changed"):
			t.Fatalf("the panic does not name the leaf: %v", r)
		case !raceChecks && r != nil:
			t.Fatalf("without the race detector a read checks nothing, yet it panicked: %v", r)
		}
	}()
	readTree(t, k)
}

func sharedKB(t *testing.T) *KB {
	t.Helper()
	dir := t.TempDir()
	nodes := filepath.Join(dir, DirName, "nodes")
	if err := os.MkdirAll(nodes, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour) // older than the racy window: served from the cache
	for _, name := range []string{"a", "b", "c"} {
		leaf := "---\ntype: practice\ntitle: " + strings.ToUpper(name) + "\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-" + name +
			"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n"
		p := filepath.Join(nodes, name+".md")
		if err := os.WriteFile(p, []byte(leaf), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			t.Fatal(err)
		}
	}
	return New(dir)
}

func readTree(t *testing.T, k *KB) *Tree {
	t.Helper()
	tr, err := k.ReadTree(LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return tr
}
