package reorg_test

import (
	"context"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/checks"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
)

// TestRelinkAfterMoveByHand: a leaf moved outside kk (as git mv does)
// leaves links at its old path. Relink points the links a person wrote at
// the new path, in the form they had, and renders the Related blocks
// again; a link to a retired id with one successor goes to the successor.
// Links to a leaf deleted outright or split into several stay as they are
// and are returned as dead. The index files are current afterwards, and a
// second run writes nothing.
func TestRelinkAfterMoveByHand(t *testing.T) {
	k := simTree(t, "a/practice-x.md", "c/map-y.md|practice-x", "m/map-new.md", "m/map-half.md", "m/map-other.md")
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"map-old": ["map-new"], "map-split": ["map-half", "map-other"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	body := "See [x](../a/practice-x.md#use), [old](/map-old.md), [s](../m/map-split.md), [g](practice-gone.md).\n\n" +
		"```\n[x](../a/practice-x.md)\n```\n"
	w := &node.Node{Format: node.SchemaVersion, Type: "practice", Title: "w", Description: "about w", Tags: []string{"t"}, ID: "practice-w",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte(body), Path: "c/practice-w.md"}
	writeLeaf(t, k, w, nil)
	rebuild(t, k)
	untouched := readFile(t, k, "m/map-new.md")

	// The move by hand.
	if err := os.MkdirAll(k.NodePath("b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(k.NodePath("a/practice-x.md"), k.NodePath("b/practice-x.md")); err != nil {
		t.Fatal(err)
	}

	res, err := reorg.Relink(context.Background(), k, "test")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range res.Links {
		got = append(got, l.File+":"+strconv.Itoa(l.Line)+" "+l.From+" -> "+l.To)
	}
	want := []string{
		".ai/kenkeep/nodes/c/map-y.md:20 /a/practice-x.md -> /b/practice-x.md",
		".ai/kenkeep/nodes/c/practice-w.md:14 ../a/practice-x.md -> ../b/practice-x.md",
		".ai/kenkeep/nodes/c/practice-w.md:14 /map-old.md -> /m/map-new.md",
	}
	if !slices.Equal(got, want) {
		t.Errorf("relinked:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !slices.Equal(res.Leaves, []string{".ai/kenkeep/nodes/c/map-y.md", ".ai/kenkeep/nodes/c/practice-w.md"}) {
		t.Errorf("leaves rewritten: %v", res.Leaves)
	}
	var dead []string
	for _, d := range res.Dead {
		dead = append(dead, d.Target)
	}
	if !slices.Equal(dead, []string{"../m/map-split.md", "practice-gone.md"}) {
		t.Errorf("left dead: %v", dead)
	}

	if got := readFile(t, k, "c/practice-w.md"); !strings.Contains(got, "See [x](../b/practice-x.md#use), [old](/m/map-new.md), [s](../m/map-split.md), [g](practice-gone.md).\n\n```\n[x](../a/practice-x.md)\n```\n") {
		t.Errorf("practice-w after the relink:\n%s", got)
	}
	if got := readFile(t, k, "c/map-y.md"); !strings.Contains(got, "- Related: [practice-x](/b/practice-x.md)\n") {
		t.Errorf("map-y after the relink:\n%s", got)
	}
	if readFile(t, k, "m/map-new.md") != untouched {
		t.Error("a leaf without a dead link was rewritten")
	}

	r, err := checks.Lint(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	var left []string
	for _, it := range r.Items {
		if it.Rule == "dead-link" {
			left = append(left, it.File+":"+strconv.Itoa(it.Line))
		}
	}
	// A line lower: the rewrite recorded the leaf's kk_version.
	if !slices.Equal(left, []string{".ai/kenkeep/nodes/c/practice-w.md:15", ".ai/kenkeep/nodes/c/practice-w.md:15"}) {
		t.Errorf("dead links after the relink: %v", left)
	}
	chk, err := indexfiles.Check(context.Background(), k)
	if err != nil {
		t.Fatal(err)
	}
	if len(chk.Changed)+len(chk.Removed) > 0 {
		t.Errorf("index is stale after the relink: %v %v", chk.Changed, chk.Removed)
	}

	before := treeSnapshot(t, k)
	again, err := reorg.Relink(context.Background(), k, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Links) != 0 || len(again.Leaves) != 0 || len(again.Dead) != 2 {
		t.Errorf("second run: %+v", again)
	}
	if after := treeSnapshot(t, k); !maps.Equal(before, after) {
		t.Error("second run changed the tree")
	}
}
