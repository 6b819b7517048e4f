package store

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
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

// A read derives its tree's maps from the last read's (treeMemo.derive).
// Whatever happens between two reads of one long-lived KB (leaves added,
// edited, removed, ids changed, swapped, made to collide and fixed), the
// tree is the one a full read without the memo gives, with the same
// problems.
func TestDerivedTreeMatchesAFullRead(t *testing.T) {
	k := sharedKB(t)
	nodes := k.NodesDir()
	rng := rand.New(rand.NewPCG(5, 5))
	write := func(name, id, title string) {
		t.Helper()
		leaf := "---\ntype: practice\ntitle: " + title + "\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: " + id +
			"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nbody\n"
		p := filepath.Join(nodes, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(leaf), 0o644); err != nil {
			t.Fatal(err)
		}
		if rng.IntN(2) == 0 { // old enough to be served from the cache next time
			old := time.Now().Add(-time.Duration(1+rng.IntN(1000)) * time.Minute)
			if err := os.Chtimes(p, old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	names := []string{"a.md", "b.md", "c.md", "d.md", "x/e.md", "x/y/f.md", "z/g.md"}
	ids := []string{"practice-a", "practice-b", "practice-c", "Practice-A", "practice-d", "practice-e"}
	derived, errors := 0, 0
	for step := range 300 {
		name := names[rng.IntN(len(names))]
		switch op := rng.IntN(10); {
		case op < 5:
			write(name, ids[rng.IntN(len(ids))], fmt.Sprintf("T%d", step))
		case op < 7:
			if err := os.Remove(filepath.Join(nodes, name)); err != nil {
				t.Fatal(err)
			}
		case op < 9: // two leaves swap ids
			other := names[rng.IntN(len(names))]
			write(name, ids[step%len(ids)], "swap")
			write(other, ids[(step+1)%len(ids)], "swap")
		default: // a unique id for every leaf: the tree is readable again
			for i, n := range names {
				write(n, fmt.Sprintf("practice-u%d-%d", step, i), "unique")
			}
		}
		mem := Memo(k, treeMemoKey{}, func() *treeMemo { return &treeMemo{k: k} })
		before := reflect.ValueOf(mem.hashes).Pointer() // derive edits the kept map; a full read keeps a new one
		got, err := k.ReadTree(LoadOptions{NoSave: true})
		if err != nil {
			t.Fatal(err)
		}
		want, err := k.ReadTree(LoadOptions{NoCache: true})
		if err != nil {
			t.Fatal(err)
		}
		gotErr, wantErr := got.Err(), want.Err()
		if (gotErr == nil) != (wantErr == nil) || gotErr != nil && gotErr.Error() != wantErr.Error() {
			t.Fatalf("step %d: read %v, full read %v", step, gotErr, wantErr)
		}
		if gotErr != nil {
			errors++
		} else if before != 0 && reflect.ValueOf(mem.hashes).Pointer() == before {
			derived++
		}
		if !maps.Equal(got.Hashes, want.Hashes) {
			t.Fatalf("step %d: hashes %v, full read %v", step, got.Hashes, want.Hashes)
		}
		if len(got.byID) != len(want.byID) || len(got.Leaves) != len(want.Leaves) {
			t.Fatalf("step %d: %d ids and %d leaves, full read %d and %d", step, len(got.byID), len(got.Leaves), len(want.byID), len(want.Leaves))
		}
		for i, n := range want.Leaves {
			if got.Leaves[i].Path != n.Path || got.Leaves[i].ID != n.ID || got.Leaves[i].Title != n.Title {
				t.Fatalf("step %d: leaf %d is %s %s %q, full read %s %s %q", step, i, got.Leaves[i].Path, got.Leaves[i].ID, got.Leaves[i].Title, n.Path, n.ID, n.Title)
			}
			if m, ok := got.ByID(n.ID); !ok || m != got.Leaves[i] {
				t.Fatalf("step %d: id %s does not lead to %s", step, n.ID, n.Path)
			}
		}
	}
	t.Logf("%d reads derived their maps, %d failed", derived, errors)
	if derived < 50 || errors < 20 {
		t.Fatalf("%d reads derived their maps and %d failed; the test needs more of both", derived, errors)
	}
}
