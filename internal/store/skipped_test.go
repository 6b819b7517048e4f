package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/node"
)

// A tree read skips the leaves it cannot read, listing each with every
// problem in it, and reads the others; leaves sharing an id are all
// skipped; the ids skipped leaves name stay claimed.
func TestReadTreeSkipsWhatItCannotRead(t *testing.T) {
	k := sharedKB(t) // practice-a, practice-b, practice-c
	nodes := k.NodesDir()
	write := func(rel, s string) {
		t.Helper()
		p := filepath.Join(nodes, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go/ctx.md", "---\ntype: practice\ntitle: Use context timeouts\nkk_id: practice-ctx\n---\nbody\n")
	b, err := os.ReadFile(filepath.Join(nodes, "b.md"))
	if err != nil {
		t.Fatal(err)
	}
	write("copy/b.md", string(b))
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone.md"), filepath.Join(nodes, "link.md")); err != nil {
		t.Fatal(err)
	}
	for _, opts := range []LoadOptions{{}, {}, {NoCache: true}, {Bodies: true}} {
		tr, err := k.ReadTree(opts)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, n := range tr.Leaves {
			ids = append(ids, n.ID)
		}
		if !slices.Equal(ids, []string{"practice-a", "practice-c"}) {
			t.Fatalf("%+v: leaves %v", opts, ids)
		}
		if !slices.Equal(tr.SkippedPaths(), []string{"b.md", "copy/b.md", "go/ctx.md", "link.md"}) {
			t.Fatalf("%+v: skipped %v", opts, tr.SkippedPaths())
		}
		var ctx *node.Error
		for _, p := range tr.Problems {
			if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == "go/ctx.md" {
				ctx = ne
			}
		}
		if ctx == nil || len(ctx.Problems()) != 6 {
			t.Fatalf("%+v: the problems of go/ctx.md: %v", opts, tr.Problems)
		}
		for _, id := range []string{"practice-ctx", "Practice-B"} {
			if _, ok := tr.Claimed(id); !ok {
				t.Errorf("%+v: %s is not claimed", opts, id)
			}
		}
		if _, ok := tr.ByID("practice-b"); ok {
			t.Errorf("%+v: a shared id leads to a leaf", opts)
		}
		if err := tr.Err(); err == nil || !strings.Contains(err.Error(), "4 problem(s)") {
			t.Errorf("%+v: Err() = %v", opts, err)
		}
	}
	if got := k.TakeSkipped(); len(got) != 4 {
		t.Fatalf("noted %d skipped leaves, want each of the 4 once: %v", len(got), got)
	}
	if got := k.TakeSkipped(); len(got) != 0 {
		t.Fatalf("noted again: %v", got)
	}
}

// sharedKB makes a knowledge base of three leaves (practice-a, -b, -c),
// an hour old.
func sharedKB(t *testing.T) *KB {
	t.Helper()
	dir := t.TempDir()
	nodes := filepath.Join(dir, DirName, "nodes")
	if err := os.MkdirAll(nodes, 0o755); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-time.Hour)
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
