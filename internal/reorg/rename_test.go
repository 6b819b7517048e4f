package reorg_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/graph"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/reorg"
	"github.com/kk-project/kk/internal/store"
)

// TestRenameNote: the leaf gets its new id, a new version and the file
// named for it in the same folder; the other leaves' kk_relates_to,
// kk_depends_on and kk_edges name the new id (matched without regard to
// case, and through a retired id that led to the old one), the links
// typed to the old file (in other bodies and its own) lead to the new one,
// the old id is retired to the new one and the ledger's entries that led
// to it lead to the new one; the tree is healthy afterwards.
func TestRenameNote(t *testing.T) {
	k := simTree(t,
		"a/practice-retyr.md",
		"a/practice-keep.md|PRACTICE-RETYR,map-stay|practice-retyr",
		"b/map-stay.md|map-older|",
		"b/map-bystander.md|map-stay|",
	)
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"map-older": ["practice-retyr"], "practice-v0": ["practice-retyr", "map-stay"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	req := &node.Node{Format: node.SchemaVersion, Type: "req", Title: "login", Description: "about login", Tags: []string{"t"}, ID: "req-login",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Login.\n"), Path: "r/req-login.md"}
	if err := req.SetExtra(graph.KeyEdges, graph.EdgeValues([]graph.Edge{
		{Type: "relates_to", To: "practice-retyr", Kind: "uses", CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"},
	})); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, req, nil)
	user, err := k.ReadLeaf("b/map-bystander.md")
	if err != nil {
		t.Fatal(err)
	}
	user.Body = []byte("Read [retry](../a/practice-retyr.md#backoff) first.\n")
	writeLeaf(t, k, user, nil)
	self, err := k.ReadLeaf("a/practice-retyr.md")
	if err != nil {
		t.Fatal(err)
	}
	self.Body = []byte("See [above](practice-retyr.md#top).\n")
	writeLeaf(t, k, self, nil)
	rebuild(t, k)

	res, err := reorg.RenameNote(context.Background(), k, "Practice-Retyr", "practice-retry", reorg.RenameOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "practice-retyr" || res.NewID != "practice-retry" || res.Path != "a/practice-retyr.md" || res.NewPath != "a/practice-retry.md" || res.Version != 3 {
		t.Errorf("result: %+v", res)
	}
	want := []string{
		"practice-keep kk_relates_to PRACTICE-RETYR -> practice-retry",
		"practice-keep kk_depends_on practice-retyr -> practice-retry",
		"map-stay kk_relates_to map-older -> practice-retry",
		"req-login kk_edges practice-retyr -> practice-retry",
	}
	if got := edgeLines(&reorg.DeleteResult{Edges: res.Edges}); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(k.NodePath("a/practice-retyr.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old file is still there: %v", err)
	}
	renamed := readFile(t, k, "a/practice-retry.md")
	// Version 2 is the body written above outside kk; the rename makes 3.
	for _, s := range []string{"kk_id: practice-retry\n", "kk_version: 3\n", "See [above](practice-retry.md#top).\n"} {
		if !strings.Contains(renamed, s) {
			t.Errorf("the renamed leaf lacks %q:\n%s", s, renamed)
		}
	}
	keep := readFile(t, k, "a/practice-keep.md")
	for _, s := range []string{"kk_relates_to:\n  - practice-retry\n  - map-stay\nkk_depends_on:\n  - practice-retry\n", "kk_version: 2\n", "- Related: [practice-retry](/a/practice-retry.md)\n"} {
		if !strings.Contains(keep, s) {
			t.Errorf("practice-keep lacks %q:\n%s", s, keep)
		}
	}
	if got := readFile(t, k, "r/req-login.md"); !strings.Contains(got, "to: practice-retry\n") {
		t.Errorf("req-login's kk_edges:\n%s", got)
	}
	if got := readFile(t, k, "b/map-bystander.md"); !strings.Contains(got, "Read [retry](../a/practice-retry.md#backoff) first.\n") {
		t.Errorf("map-bystander's typed link:\n%s", got)
	}
	if len(res.Links) != 1 || res.Links[0].File != ".ai/kenkeep/nodes/b/map-bystander.md" || res.Links[0].Target != "../a/practice-retyr.md" ||
		res.Links[0].NewTarget != "../a/practice-retry.md" || res.Links[0].Line == 0 {
		t.Errorf("links: %+v", res.Links)
	}
	wantLedger := "{\n  \"map-older\": [\n    \"practice-retry\"\n  ],\n  \"practice-retyr\": [\n    \"practice-retry\"\n  ],\n  \"practice-v0\": [\n    \"practice-retry\",\n    \"map-stay\"\n  ]\n}\n"
	if got := readFile(t, k, ".redirects.json"); got != wantLedger {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, wantLedger)
	}
	if !slices.Equal(res.Redirects, []string{"map-older", "practice-v0"}) {
		t.Errorf("redirects: %v", res.Redirects)
	}
	checkTreeHealthy(t, k)
}

// TestRenameNoteRefusals: an id that is no live note or is of a type
// another command keeps, and a new id that is the same, held by a leaf,
// retired, or no valid id for the note's type, are refused naming the
// argument; nothing is written.
func TestRenameNoteRefusals(t *testing.T) {
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
		id, newID string
		ofNew     bool
		reason    string
	}{
		{id: "practice-nope", newID: "practice-z", reason: "no leaf has this id"},
		{id: "", newID: "practice-z", reason: "is empty"},
		{id: "Practice-Old", newID: "practice-z", reason: "was retired to practice-x (.ai/kenkeep/nodes/.redirects.json); rename practice-x instead"},
		{id: "req-r", newID: "req-s", reason: "is a req, a traceability entity: kk upsert and kk delete keep them"},
		{id: "molecule-m", newID: "molecule-n", reason: "is a molecule of the knowledge graph: kk graph"},
		{id: "map-atom", newID: "map-atom-2", reason: "is an atom of the knowledge graph (it has kk_paths): kk graph"},
		{id: "practice-y", newID: "practice-z", reason: "map-atom (.ai/kenkeep/nodes/g/map-atom.md) names it in kk_related or kk_molecule"},
		{id: "practice-x", newID: "", ofNew: true, reason: "is empty"},
		{id: "practice-x", newID: "PRACTICE-X", ofNew: true, reason: "is the id practice-x has already"},
		{id: "practice-x", newID: "Practice-Y", ofNew: true, reason: "is the id of .ai/kenkeep/nodes/a/practice-y.md; choose another id"},
		{id: "practice-x", newID: "practice-old", ofNew: true, reason: "was retired to practice-x (.ai/kenkeep/nodes/.redirects.json); a retired id is not given again"},
		{id: "practice-x", newID: "map-x", ofNew: true, reason: "is no id for a practice: id map-x does not start with its type prefix practice-"},
		{id: "practice-x", newID: "practice-X Two", ofNew: true, reason: "is no id for a practice: id practice-X Two is not canonical; expected practice-x-two"},
		{id: "practice-x", newID: "practice-index/x", ofNew: true, reason: "is no id for a practice: id practice-index/x is not canonical"},
	} {
		_, err := reorg.RenameNote(context.Background(), k, c.id, c.newID, reorg.RenameOptions{Command: "test"})
		r, ok := errors.AsType[*reorg.RenameRefusal](err)
		if !ok {
			t.Errorf("%q → %q: %v, want a refusal", c.id, c.newID, err)
			continue
		}
		arg := c.id
		if c.ofNew {
			arg = c.newID
		}
		if r.NewID != c.ofNew || r.Arg != arg || !strings.HasPrefix(r.Reason, c.reason) {
			t.Errorf("%q → %q: %+v, want %s: %s…", c.id, c.newID, r, arg, c.reason)
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
	if _, err := store.New(k.Root).ReadLeaf("a/practice-x.md"); err != nil {
		t.Errorf("practice-x: %v", err)
	}
}

// TestRenameNoteFileNamedOtherwise: a leaf whose file is not named for its
// id (renamed by hand; kk check reports it) gets the file <new-id>.md in
// its folder, the name kk's identity contract gives a leaf: kept, the
// name would not match the new id either, and no write would take it.
func TestRenameNoteFileNamedOtherwise(t *testing.T) {
	k := simTree(t, "a/practice-keep.md|practice-retyr|")
	n := &node.Node{Format: node.SchemaVersion, Type: "practice", Title: "retry", Description: "about retry", Tags: []string{"t"}, ID: "practice-retyr",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Retry.\n"), Path: "a/retry-notes.md"}
	writeLeaf(t, k, n, nil)
	rebuild(t, k)

	res, err := reorg.RenameNote(context.Background(), k, "practice-retyr", "practice-retry", reorg.RenameOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Path != "a/retry-notes.md" || res.NewPath != "a/practice-retry.md" {
		t.Errorf("result: %+v", res)
	}
	if _, err := os.Stat(k.NodePath("a/retry-notes.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old file is still there: %v", err)
	}
	if got := readFile(t, k, "a/practice-retry.md"); !strings.Contains(got, "kk_id: practice-retry\n") {
		t.Errorf("the renamed leaf:\n%s", got)
	}
	if got := readFile(t, k, "a/practice-keep.md"); !strings.Contains(got, "kk_relates_to:\n  - practice-retry\n") {
		t.Errorf("practice-keep:\n%s", got)
	}
	checkTreeHealthy(t, k)
}

// TestRenameNoteCaseOnly: a new id that differs from the old only in case
// (the same id, as kk compares ids) was refused as "the id it has
// already"; now it fixes the spelling. The leaf's kk_id and file name
// change, the edges (kk_relates_to, kk_edges) and the ledger's successors
// spelled the old way are spelled the new way, those spelled the new way
// already are left as they are, and the ledger gains no entry retiring
// the old spelling to the new: it is the same id.
func TestRenameNoteCaseOnly(t *testing.T) {
	k := simTree(t,
		"a/practice-Retry.md",
		"a/practice-keep.md|practice-Retry|practice-retry",
		"b/map-stay.md",
	)
	req := &node.Node{Format: node.SchemaVersion, Type: "req", Title: "login", Description: "about login", Tags: []string{"t"}, ID: "req-login",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Login.\n"), Path: "r/req-login.md"}
	if err := req.SetExtra(graph.KeyEdges, graph.EdgeValues([]graph.Edge{
		{Type: "relates_to", To: "practice-Retry", Kind: "uses", CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"},
	})); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, req, nil)
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"practice-v0": ["practice-Retry", "map-stay"], "practice-v1": ["practice-retry"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuild(t, k)

	res, err := reorg.RenameNote(context.Background(), k, "practice-Retry", "practice-retry", reorg.RenameOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "practice-Retry" || res.NewID != "practice-retry" || res.NewPath != "a/practice-retry.md" || !res.CaseOnly {
		t.Errorf("result: %+v", res)
	}
	want := []string{
		"practice-keep kk_relates_to practice-Retry -> practice-retry",
		"req-login kk_edges practice-Retry -> practice-retry",
	}
	if got := edgeLines(&reorg.DeleteResult{Edges: res.Edges}); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if _, err := os.Stat(k.NodePath("a/practice-Retry.md")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the old file is still there: %v", err)
	}
	if got := readFile(t, k, "a/practice-retry.md"); !strings.Contains(got, "kk_id: practice-retry\n") {
		t.Errorf("the renamed leaf:\n%s", got)
	}
	if got := readFile(t, k, "a/practice-keep.md"); !strings.Contains(got, "kk_relates_to:\n  - practice-retry\nkk_depends_on:\n  - practice-retry\n") {
		t.Errorf("practice-keep:\n%s", got)
	}
	if got := readFile(t, k, "r/req-login.md"); !strings.Contains(got, "to: practice-retry\n") {
		t.Errorf("req-login's kk_edges:\n%s", got)
	}
	wantLedger := "{\n  \"practice-v0\": [\n    \"practice-retry\",\n    \"map-stay\"\n  ],\n  \"practice-v1\": [\n    \"practice-retry\"\n  ]\n}\n"
	if got := readFile(t, k, ".redirects.json"); got != wantLedger {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, wantLedger)
	}
	if !slices.Equal(res.Redirects, []string{"practice-v0"}) {
		t.Errorf("redirects: %v", res.Redirects)
	}
	checkTreeHealthy(t, k)
}

// TestRenameNoteReferencesOnly: a leaf whose file was renamed (git mv)
// and whose kk_id was changed by hand leaves no file naming the old id;
// RenameNote of the old id to the new one points the references at it
// (kk_relates_to, kk_edges, the links typed to the old file, its own body's
// among them, the ledger's entries) and retires the old id, leaving the
// leaf's id and file as they are. Before, the old id was "no leaf", and
// the new one "the id of" the renamed file. An old id nothing names is
// refused, writing nothing.
func TestRenameNoteReferencesOnly(t *testing.T) {
	k := simTree(t,
		"a/practice-keep.md|practice-one|",
		"a/practice-first.md",
	)
	req := &node.Node{Format: node.SchemaVersion, Type: "req", Title: "login", Description: "about login", Tags: []string{"t"}, ID: "req-login",
		DerivedFrom: []string{}, RelatesTo: []string{}, DependsOn: []string{}, Confidence: "high", Body: []byte("Login.\n"), Path: "r/req-login.md"}
	if err := req.SetExtra(graph.KeyEdges, graph.EdgeValues([]graph.Edge{
		{Type: "relates_to", To: "practice-one", Kind: "uses", CreatedAt: "2026-01-01T00:00:00Z", CreatedBy: "t", Source: "t"},
	})); err != nil {
		t.Fatal(err)
	}
	writeLeaf(t, k, req, nil)
	first, err := k.ReadLeaf("a/practice-first.md")
	if err != nil {
		t.Fatal(err)
	}
	first.Body = []byte("See [me](practice-one.md#top).\n")
	writeLeaf(t, k, first, nil)
	if err := os.WriteFile(k.NodePath(".redirects.json"), []byte(`{"practice-v0": ["practice-one"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rebuild(t, k)
	before := snapshot(t, k)

	_, err = reorg.RenameNote(context.Background(), k, "practice-nobody", "practice-first", reorg.RenameOptions{Command: "test"})
	if r, ok := errors.AsType[*reorg.RenameRefusal](err); !ok || r.NewID || !strings.HasPrefix(r.Reason, "no leaf has this id, and no edge, typed link or entry of .ai/kenkeep/nodes/.redirects.json names it") {
		t.Errorf("an id nothing names: %v, want a refusal", err)
	}
	if after := snapshot(t, k); !maps.Equal(before, after) {
		t.Errorf("the refusal wrote")
	}

	// (Given in another case, the id is retired as the references spell
	// it: the ledger is looked up by the id as an edge spells it.)
	res, err := reorg.RenameNote(context.Background(), k, "Practice-One", "practice-first", reorg.RenameOptions{Command: "test"})
	if err != nil {
		t.Fatal(err)
	}
	if res.ID != "practice-one" || res.NewID != "practice-first" || res.Path != "a/practice-first.md" || res.NewPath != "a/practice-first.md" || !res.ReferencesOnly || res.Version != 3 {
		t.Errorf("result: %+v", res)
	}
	want := []string{
		"practice-keep kk_relates_to practice-one -> practice-first",
		"req-login kk_edges practice-one -> practice-first",
	}
	if got := edgeLines(&reorg.DeleteResult{Edges: res.Edges}); !slices.Equal(got, want) {
		t.Errorf("edges:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if got := readFile(t, k, "a/practice-first.md"); !strings.Contains(got, "kk_id: practice-first\n") || !strings.Contains(got, "See [me](practice-first.md#top).\n") {
		t.Errorf("the leaf:\n%s", got)
	}
	if got := readFile(t, k, "r/req-login.md"); !strings.Contains(got, "to: practice-first\n") {
		t.Errorf("req-login's kk_edges:\n%s", got)
	}
	wantLedger := "{\n  \"practice-one\": [\n    \"practice-first\"\n  ],\n  \"practice-v0\": [\n    \"practice-first\"\n  ]\n}\n"
	if got := readFile(t, k, ".redirects.json"); got != wantLedger {
		t.Errorf("ledger:\n%s\nwant:\n%s", got, wantLedger)
	}
	checkTreeHealthy(t, k)
}
