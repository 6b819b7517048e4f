package reorg_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/trace"
)

// edgeLines renders what DeleteNotes did to other leaves' edges, one line
// per edge, for comparison.
func edgeLines(res *reorg.DeleteResult) []string {
	var out []string
	for _, e := range res.Edges {
		line := e.ID + " " + e.Key + " " + e.Removed
		switch {
		case e.To != "":
			line += " -> " + e.To
		case e.Why != "":
			line += " (" + e.Why + ")"
		}
		out = append(out, line)
	}
	return out
}

// snapshot returns every file under the knowledge base but the index's
// .state, by path.
func snapshot(t *testing.T, k *store.KB) map[string]string {
	t.Helper()
	out := map[string]string{}
	root := filepath.Join(k.Root, store.DirName)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == k.StateDir() {
				return filepath.SkipDir
			}
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		out[p] = string(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestDeleteNotesDropsEdges: deleting a note removes its leaf and, in the
// same change, its id from every other leaf's kk_relates_to,
// kk_depends_on and kk_edges (matched without regard to case, and through
// a retired id that leads only to it); the leaves changed get a new
// version and a Related block without it; leaves that named no deleted
// note keep their bytes; the tree is healthy afterwards (lint, index
// files, Related links).
func TestDeleteNotesDropsEdges(t *testing.T) {
	k := simTree(t,
		"a/practice-gone.md",
		"a/practice-keep.md|PRACTICE-GONE,map-stay|practice-gone",
		"b/map-stay.md|map-older|",
		"b/map-bystander.md|map-stay|",
	)
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"map-older": ["practice-gone"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := &node.Node{Format: node.SchemaVersion, Type: "req", Title: "login", Description: "about login", Tags: []string{"t"}, ID: "req-login",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Login.\n"), Path: "r/req-login.md"}
	if err := req.SetExtra(graph.KeyEdges, graph.EdgeValues([]graph.Edge{
		{Type: "relates_to", To: "practice-gone", Kind: "uses", CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"},
		{Type: "relates_to", To: "map-stay", Kind: "uses", CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"},
	})); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, req, nil)
	rebuild(t, k)
	bystander := readFile(t, k, "b/map-bystander.md")

	res, err := reorg.DeleteNotes(context.Background(), k, []string{"Practice-Gone"}, reorg.DeleteOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Deleted) != 1 || res.Deleted[0] != (reorg.DeletedNote{ID: "practice-gone", Path: "a/practice-gone.md"}) {
		t.Errorf("deleted: %+v", res.Deleted)
	}
	want := []string{
		"practice-keep kk_relates_to PRACTICE-GONE",
		"practice-keep kk_depends_on practice-gone",
		"map-stay kk_relates_to map-older",
		"req-login kk_edges practice-gone",
	}
	if got := edgeLines(res); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(k.NodePath("a/practice-gone.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the deleted leaf is still there: %v", err)
	}
	keep := readFile(t, k, "a/practice-keep.md")
	for _, s := range []string{"kk_relates_to:\n  - map-stay\nkk_depends_on: []\n", "kk_version: 2\n", "- Related: [map-stay](/b/map-stay.md)\n"} {
		if !strings.Contains(keep, s) {
			t.Errorf("practice-keep lacks %q:\n%s", s, keep)
		}
	}
	if strings.Contains(strings.ToLower(keep), "practice-gone") {
		t.Errorf("practice-keep still names practice-gone:\n%s", keep)
	}
	if got := readFile(t, k, "r/req-login.md"); strings.Contains(got, "practice-gone") || !strings.Contains(got, "to: map-stay") {
		t.Errorf("req-login's kk_edges:\n%s", got)
	}
	if got := readFile(t, k, "b/map-stay.md"); !strings.Contains(got, "kk_relates_to: []\n") {
		t.Errorf("map-stay keeps its edge to the retired id that led to practice-gone:\n%s", got)
	}
	if readFile(t, k, "b/map-bystander.md") != bystander {
		t.Error("a leaf with no edge to the deleted note was rewritten")
	}
	checkTreeHealthy(t, k)
}

// TestDeleteNotesRedirect: with a replacement the ids are retired to it in
// the ledger and the edges name it instead, once per list; the
// replacement's own edge to a deleted note is dropped; a link typed in a
// body is returned with its line, and left as written.
func TestDeleteNotesRedirect(t *testing.T) {
	k := simTree(t,
		"a/practice-v1.md",
		"a/practice-v2.md|practice-v1|",
		"a/practice-new.md|practice-v2|practice-v1",
		"b/map-user.md|practice-v1,practice-new,practice-v2|practice-v2",
	)
	user, err := k.ReadLeaf("b/map-user.md")
	if err != nil {
		t.Fatal(err)
	}
	user.Body = []byte("Read [v1](../a/practice-v1.md) first.\n")
	writeLeaf(t, k, user, nil)
	rebuild(t, k)

	res, err := reorg.DeleteNotes(context.Background(), k, []string{"practice-v1", "practice-v2"}, reorg.DeleteOptions{RedirectTo: "practice-new", Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"practice-new kk_relates_to practice-v2 (is practice-new itself)",
		"practice-new kk_depends_on practice-v1 (is practice-new itself)",
		"map-user kk_relates_to practice-v1 (names practice-new already)",
		"map-user kk_relates_to practice-v2 (names practice-new already)",
		"map-user kk_depends_on practice-v2 -> practice-new",
	}
	if got := edgeLines(res); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if res.RedirectedTo != "practice-new" {
		t.Errorf("redirected to %q", res.RedirectedTo)
	}
	if got, want := readFile(t, k, ".redirects.json"), "{\n  \"practice-v1\": [\n    \"practice-new\"\n  ],\n  \"practice-v2\": [\n    \"practice-new\"\n  ]\n}\n"; got != want {
		t.Errorf("ledger:\n%s", got)
	}
	got := readFile(t, k, "b/map-user.md")
	for _, s := range []string{"kk_relates_to:\n  - practice-new\nkk_depends_on:\n  - practice-new\n", "Read [v1](../a/practice-new.md) first.\n"} {
		if !strings.Contains(got, s) {
			t.Errorf("map-user lacks %q:\n%s", s, got)
		}
	}
	if len(res.Links) != 1 || res.Links[0].File != ".ai/kenkeep/nodes/b/map-user.md" || res.Links[0].Target != "../a/practice-v1.md" ||
		res.Links[0].ID != "practice-v1" || res.Links[0].To != "practice-new" || res.Links[0].NewTarget != "../a/practice-new.md" {
		t.Fatalf("links: %+v", res.Links)
	}
	if line := strings.Split(got, "\n")[res.Links[0].Line-1]; !strings.Contains(line, "[v1](../a/practice-new.md)") {
		t.Errorf("line %d of map-user is %q", res.Links[0].Line, line)
	}
	if got := readFile(t, k, "a/practice-new.md"); !strings.Contains(got, "kk_relates_to: []\nkk_depends_on: []\n") {
		t.Errorf("practice-new:\n%s", got)
	}
}

// TestDeleteNotesRefusals: an id that is no live note, named twice, of a
// type another command deletes, or still named through kk graph's own
// keys, and a replacement that is missing or being deleted, are refused
// naming the argument; nothing is written.
func TestDeleteNotesRefusals(t *testing.T) {
	k := simTree(t,
		"a/practice-x.md",
		"a/practice-y.md|practice-x|",
		"a/req-r.md",
		"a/molecule-m.md",
	)
	atom := &node.Node{Format: node.SchemaVersion, Type: "map", Title: "atom", Description: "about atom", Tags: []string{"t"}, ID: "map-atom",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Atom.\n"), Path: "g/map-atom.md"}
	if err := atom.SetExtra(graph.KeyPaths, []any{"internal/x/**"}); err != nil {
		t.Fatal(err)
	}
	if err := atom.SetExtra(graph.KeyRelated, []any{map[string]any{"id": "practice-y", "reason": "uses it"}}); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, atom, nil)
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"practice-old": ["practice-x"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuild(t, k)
	before := snapshot(t, k)

	for _, c := range []struct {
		ids         []string
		to          string
		replacement bool
		arg, reason string
	}{
		{ids: []string{"practice-nope"}, arg: "practice-nope", reason: "no leaf has this id"},
		{ids: []string{"practice-x", "PRACTICE-X"}, arg: "PRACTICE-X", reason: "names practice-x a second time"},
		{ids: []string{"Practice-Old"}, arg: "Practice-Old", reason: "was retired to practice-x (.ai/kenkeep/nodes/.redirects.json); it is no note to delete"},
		{ids: []string{"req-r"}, arg: "req-r", reason: "is a req, a traceability entity: delete it with kk delete req-r"},
		{ids: []string{"molecule-m"}, arg: "molecule-m", reason: "is a molecule of the knowledge graph: delete it with kk graph delete molecule-m"},
		{ids: []string{"map-atom"}, arg: "map-atom", reason: "is an atom of the knowledge graph (it has kk_paths): delete it with kk graph delete map-atom"},
		{ids: []string{"practice-y"}, arg: "practice-y", reason: "map-atom (.ai/kenkeep/nodes/g/map-atom.md) names it in kk_related or kk_molecule"},
		{ids: []string{"practice-x"}, to: "practice-nope", replacement: true, arg: "practice-nope", reason: "no leaf has this id"},
		{ids: []string{"practice-x"}, to: "practice-x", replacement: true, arg: "practice-x", reason: "is one of the notes being deleted"},
		{ids: []string{"practice-y"}, to: "practice-old", replacement: true, arg: "practice-old", reason: "was retired to practice-x"},
	} {
		_, err := reorg.DeleteNotes(context.Background(), k, c.ids, reorg.DeleteOptions{RedirectTo: c.to, Command: "test"})
		r, ok := errors.AsType[*reorg.DeleteRefusal](err)
		if !ok {
			t.Errorf("%v --redirect-to %q: %v, want a refusal", c.ids, c.to, err)
			continue
		}
		if r.Replacement != c.replacement || r.Arg != c.arg || !strings.HasPrefix(r.Reason, c.reason) {
			t.Errorf("%v --redirect-to %q: %+v, want %s: %s…", c.ids, c.to, r, c.arg, c.reason)
		}
	}
	after := snapshot(t, k)
	for p, data := range before {
		if after[p] != data {
			t.Errorf("%s changed", p)
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			t.Errorf("%s was written", p)
		}
	}
}

// TestDeleteNotesRedirectNoDependsCycle: a depends_on edge pointed at the
// replacement would close a cycle when the replacement depends, through
// other notes, on the leaf holding the edge; that edge is dropped, with
// why, and kk check's depends-on-acyclic stays clean.
func TestDeleteNotesRedirectNoDependsCycle(t *testing.T) {
	k := simTree(t,
		"a/practice-old.md",
		"a/practice-mid.md||practice-old",
		"a/practice-new.md||practice-top",
		"a/practice-top.md||practice-mid",
		"a/practice-side.md||practice-old",
	)
	rebuild(t, k)
	res, err := reorg.DeleteNotes(context.Background(), k, []string{"practice-old"}, reorg.DeleteOptions{RedirectTo: "practice-new", Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"practice-mid kk_depends_on practice-old (would make a depends_on cycle: practice-new depends on practice-mid)",
		"practice-side kk_depends_on practice-old -> practice-new",
	}
	if got := edgeLines(res); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	checkTreeHealthy(t, k)
	checkNoDependsCycle(t, k)
}

// redirectLines renders what DeleteNotes did to the entries of the
// redirect ledger, one line per successor changed, for comparison.
func redirectLines(res *reorg.DeleteResult) []string {
	var out []string
	for _, c := range res.Redirects {
		line := c.ID + " " + c.Removed
		if c.To != "" {
			line += " -> " + c.To
		}
		if c.Why != "" {
			line += " (" + c.Why + ")"
		}
		if c.EntryRemoved {
			line += " [entry removed]"
		}
		out = append(out, line)
	}
	return out
}

// chainTree is a tree whose ledger has entries leading to practice-bee,
// the note the redirect-chain tests delete: practice-ex only to it,
// practice-why to it and to a live leaf, practice-dup to it and to the
// replacement, practice-arr (the replacement, live) to it, and
// practice-zed through practice-ex. practice-user names practice-ex,
// practice-fan names practice-zed.
func chainTree(t *testing.T) *store.KB {
	t.Helper()
	k := simTree(t,
		"a/practice-bee.md",
		"a/practice-arr.md",
		"a/practice-cee.md",
		"a/practice-user.md|practice-ex,practice-cee|",
		"a/practice-fan.md||practice-zed",
	)
	ledger := `{"practice-ex": ["practice-bee"], "practice-why": ["practice-bee", "practice-cee"], "practice-dup": ["Practice-Bee", "practice-arr"],` +
		` "practice-arr": ["practice-bee"], "practice-zed": ["practice-ex"]}` + "\n"
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(ledger), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuild(t, k)
	return k
}

// TestDeleteNotesRepointsRedirectChains: with a replacement, every ledger
// entry that led to a deleted note leads to the replacement instead, in
// the same change (once per entry; the replacement's own entry goes, as
// it would lead to itself); an entry through another retired id is left,
// as it leads to the replacement now; edges naming a retired id that led
// only to the deleted note are pointed at the replacement, as the ledger
// now says; the tree is healthy afterwards.
func TestDeleteNotesRepointsRedirectChains(t *testing.T) {
	k := chainTree(t)
	res, err := reorg.DeleteNotes(context.Background(), k, []string{"practice-bee"}, reorg.DeleteOptions{RedirectTo: "practice-arr", Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"practice-arr practice-bee (is practice-arr itself) [entry removed]",
		"practice-dup Practice-Bee (leads to practice-arr already)",
		"practice-ex practice-bee -> practice-arr",
		"practice-why practice-bee -> practice-arr",
	}
	if got := redirectLines(res); !slices.Equal(got, want) {
		t.Errorf("redirects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantLedger := `{
  "practice-bee": [
    "practice-arr"
  ],
  "practice-dup": [
    "practice-arr"
  ],
  "practice-ex": [
    "practice-arr"
  ],
  "practice-why": [
    "practice-arr",
    "practice-cee"
  ],
  "practice-zed": [
    "practice-ex"
  ]
}
`
	if got := readFile(t, k, ".redirects.json"); got != wantLedger {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, wantLedger)
	}
	wantEdges := []string{
		"practice-fan kk_depends_on practice-zed -> practice-arr",
		"practice-user kk_relates_to practice-ex -> practice-arr",
	}
	if got := edgeLines(res); !slices.Equal(got, wantEdges) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEdges, "\n"))
	}
	checkTreeHealthy(t, k)
	checkNoDanglingRedirects(t, k)
}

// TestDeleteNotesDropsRedirectChains: without a replacement, a ledger
// entry that led to a deleted note no longer names it; an entry left
// with no successor is removed (its retired id leads nowhere now, like
// the deleted note's), and so is one that led only through such an
// entry; an entry that leads to a live leaf as well stays; edges naming
// the retired ids that now lead nowhere are dropped with the others.
func TestDeleteNotesDropsRedirectChains(t *testing.T) {
	k := chainTree(t)
	res, err := reorg.DeleteNotes(context.Background(), k, []string{"practice-bee"}, reorg.DeleteOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"practice-arr practice-bee (leads nowhere now) [entry removed]",
		"practice-dup Practice-Bee (leads to practice-arr still)",
		"practice-ex practice-bee (leads nowhere now) [entry removed]",
		"practice-why practice-bee (leads to practice-cee still)",
		"practice-zed practice-ex (leads nowhere now) [entry removed]",
	}
	if got := redirectLines(res); !slices.Equal(got, want) {
		t.Errorf("redirects:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantLedger := `{
  "practice-dup": [
    "practice-arr"
  ],
  "practice-why": [
    "practice-cee"
  ]
}
`
	if got := readFile(t, k, ".redirects.json"); got != wantLedger {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, wantLedger)
	}
	wantEdges := []string{
		"practice-fan kk_depends_on practice-zed",
		"practice-user kk_relates_to practice-ex",
	}
	if got := edgeLines(res); !slices.Equal(got, wantEdges) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantEdges, "\n"))
	}
	checkTreeHealthy(t, k)
	checkNoDanglingRedirects(t, k)
}

// checkNoDanglingRedirects fails when an entry of the redirect ledger
// leads to no live leaf.
func checkNoDanglingRedirects(t *testing.T, k *store.KB) {
	t.Helper()
	r, err := k.ReadRedirects()
	if err != nil {
		t.Fatal(err)
	}
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, old := range slices.Sorted(maps.Keys(r)) {
		if len(store.ResolveRedirect(r, old, tree.IsLive)) == 0 {
			t.Errorf("ledger entry %s (%v) leads to no live leaf", old, r[old])
		}
	}
}

// checkNoDependsCycle fails when kk check's depends-on-acyclic rule finds
// a cycle.
func checkNoDependsCycle(t *testing.T, k *store.KB) {
	t.Helper()
	res, err := trace.KBCheck(context.Background(), k, trace.KBCheckParams{Rules: []string{trace.RuleDependsOnAcyclic}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Violations) > 0 {
		t.Errorf("depends_on cycles: %+v", res.Violations)
	}
}

// TestDeleteNotesRedirectNoCycleThroughTypedEdges: the cycle guard
// covers the depends_on entries of kk_edges as well as kk_depends_on, in
// any mix: a kk_depends_on edge is not pointed at the replacement when
// the replacement reaches the leaf through a kk_edges depends_on, nor a
// kk_edges depends_on when it reaches it through kk_depends_on (or
// kk_edges); one that closes no cycle is pointed at it; kk check's
// depends-on-acyclic stays clean.
func TestDeleteNotesRedirectNoCycleThroughTypedEdges(t *testing.T) {
	k := simTree(t,
		"a/practice-old.md",
		"a/practice-mid.md||practice-old",
		"a/practice-new.md||practice-top",
		"a/practice-top.md",
		"a/practice-via.md",
		"a/practice-side.md",
	)
	typed := func(id string, to ...string) {
		t.Helper()
		n, err := k.ReadLeaf("a/" + id + ".md")
		if err != nil {
			t.Fatal(err)
		}
		var edges []graph.Edge
		for _, to := range to {
			edges = append(edges, graph.Edge{Type: "depends_on", To: to, CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"})
		}
		if err := n.SetExtra(graph.KeyEdges, graph.EdgeValues(edges)); err != nil {
			t.Fatal(err)
		}
		writeLeaf(t, k, n, nil)
	}
	typed("practice-top", "practice-mid", "practice-via") // practice-new → top → mid and via
	typed("practice-via", "practice-old")
	typed("practice-side", "practice-old")
	rebuild(t, k)
	checkNoDependsCycle(t, k)

	res, err := reorg.DeleteNotes(context.Background(), k, []string{"practice-old"}, reorg.DeleteOptions{RedirectTo: "practice-new", Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"practice-mid kk_depends_on practice-old (would make a depends_on cycle: practice-new depends on practice-mid)",
		"practice-side kk_edges practice-old -> practice-new",
		"practice-via kk_edges practice-old (would make a depends_on cycle: practice-new depends on practice-via)",
	}
	if got := edgeLines(res); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := readFile(t, k, "a/practice-via.md"); strings.Contains(got, "kk_edges") {
		t.Errorf("practice-via keeps a kk_edges entry:\n%s", got)
	}
	if got := readFile(t, k, "a/practice-side.md"); !strings.Contains(got, "to: practice-new") {
		t.Errorf("practice-side's kk_edges:\n%s", got)
	}
	checkTreeHealthy(t, k)
	checkNoDependsCycle(t, k)
}
