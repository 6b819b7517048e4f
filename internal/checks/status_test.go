package checks

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/store"
)

func (f *lintKB) status() *StatusReport {
	f.t.Helper()
	r, err := Status(context.Background(), f.k)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

func TestStatusNotInitialized(t *testing.T) {
	k := store.New(t.TempDir())
	if err := os.MkdirAll(k.NodesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	_, err := Status(context.Background(), k)
	if !errors.Is(err, store.ErrNotFound) || !strings.Contains(err.Error(), "kk init") || !strings.Contains(err.Error(), ".state/installed-version") {
		t.Fatalf("err = %v", err)
	}
}

func TestStatusEmpty(t *testing.T) {
	f := newLintKB(t)
	r := f.status()
	if r.Version != "1.0.0" || r.InstalledAt != "2026-01-02" {
		t.Fatalf("version %q installed_at %q", r.Version, r.InstalledAt)
	}
	if r.Nodes != 0 || len(r.NodesByType) != 0 || r.Folders != 1 || r.IndexState != "fresh" || !r.IndexFresh {
		t.Fatalf("%+v", r)
	}
	if r.Sessions.Total != 0 || len(r.Sessions.ByStatus) != 0 || r.Sessions.ByStatus == nil || r.Conflicts != (ConflictCounts{}) || r.MissingSummaries == nil || r.NodesByType == nil {
		t.Fatalf("%+v", r)
	}
}

func TestStatusCounts(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "practice-c", path: "other/deep/practice-c.md"})
	f.leaf(lintLeaf{id: "adr-d"})
	f.rebuild()
	f.write("_sessions/20260101-0000-a.md", "---\nschema_version: 1\nproposal_status: pending\n---\n## Transcript\n")
	f.write("_sessions/20260101-0001-b.md", "---\nschema_version: 1\nproposal_status: done\n---\n")
	f.write("_sessions/20260101-0002-c.md", "---\nproposal_status: pending\n---\n"+strings.Repeat("long transcript line\n", 100000))
	f.write("_sessions/20260101-0003-d.md", "---\nproposal_status: [unclosed\n")
	f.write("_sessions/notes.txt", "not a session log")
	f.write("conflicts/run-1.md", "---\nstatus: pending\n---\n")
	f.write("conflicts/run-2.md", "---\nstatus: resolved\n---\n")
	f.write("conflicts/run-3.md", "---\nstatus: pending\n---\n")
	r := f.status()
	if r.Nodes != 4 || !maps.Equal(r.NodesByType, map[string]int{"practice": 2, "map": 1, "adr": 1}) {
		t.Fatalf("nodes %d %v", r.Nodes, r.NodesByType)
	}
	if r.Folders != 4 { // root, topic, other, other/deep
		t.Fatalf("folders %d", r.Folders)
	}
	if s := r.Sessions; s.Total != 4 || s.Pending != 2 || s.Other != 2 || !maps.Equal(s.ByStatus, map[string]int{"pending": 2, "done": 1}) {
		t.Fatalf("sessions %+v", r.Sessions)
	}
	// The curation queue: done logs no curate run consumed, and their
	// candidates (kenkeep's status shows both).
	cand := "  - {type: practice, tags: [], title: T, description: d, body: b, kk_confidence: high}\n"
	logOf := func(id, curated, practice string) string {
		return "---\nschema_version: 1\nsession_id: " + id + "\ncaptured_by: stop\ncaptured_at: '2026-05-19T08:00:00.000Z'\ntranscript_hash: sha256:00\nproposal_status: done\n" +
			"proposal_completed_at: null\nproposal_error: null\nproposal_log: null\nproposals:\n  practice:\n" + practice + "  map: []\n" + curated + "---\n## Transcript\n"
	}
	f.write("_sessions/20260102-0000-e.md", logOf("0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e01", "", cand+cand))
	f.write("_sessions/20260102-0001-f.md", logOf("0d9f6c2e-8f1a-4b7e-9c3d-2a1b4c5d6e02", "curator_processed_at: '2026-05-20T00:00:00.000Z'\ncurator_run_id: r\n", cand))
	r = f.status()
	if s := r.Sessions; s.Curation != 1 || s.Candidates != 2 || s.ByStatus["done"] != 3 {
		t.Fatalf("curation queue %+v", s)
	}
	if want := (ConflictCounts{Total: 3, Pending: 2}); r.Conflicts != want {
		t.Fatalf("conflicts %+v, want %+v", r.Conflicts, want)
	}
	if !slices.Equal(r.MissingSummaries, []string{"other", "other/deep"}) {
		t.Fatalf("missing summaries %q", r.MissingSummaries)
	}
	if !r.IndexFresh {
		t.Fatalf("index %s", r.IndexState)
	}
}

func TestStatusIndexStates(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "practice-new"})
	if r := f.status(); r.IndexState != "stale" || r.IndexFresh {
		t.Fatalf("after an unindexed write: %s", r.IndexState)
	}
	f.remove("ENTRY.md")
	if r := f.status(); r.IndexState != "missing" || r.IndexFresh {
		t.Fatalf("without ENTRY.md: %s", r.IndexState)
	}
	// A leaf kk cannot read is counted apart; the others are counted as
	// ever.
	f.write("nodes/practice-bad.md", "---\ntype: practice\n---\n")
	r := f.status()
	if r.IndexState != "missing" || r.InvalidLeaves != 1 || r.Nodes != 3 {
		t.Fatalf("with an invalid leaf: %+v", r)
	}
}

func TestReadFrontMatterStopsAtTheFence(t *testing.T) {
	p := filepath.Join(t.TempDir(), "x.md")
	// A body that is not valid YAML or front matter must not matter.
	if err := os.WriteFile(p, []byte("---\nproposal_status: done\n---\n---\n: : bad\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := readFrontMatter(p)
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := doc.Value("proposal_status"); v != "done" {
		t.Fatalf("proposal_status = %v", v)
	}
	if err := os.WriteFile(p, []byte("no front matter\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if doc, err := readFrontMatter(p); err != nil || len(doc.Keys()) != 0 {
		t.Fatalf("doc %v err %v", doc, err)
	}
}

// graphLeaf writes a v3 leaf with extra front matter lines.
func (f *lintKB) graphLeaf(id, typ, extra string) {
	f.t.Helper()
	f.write("nodes/"+id+".md", fmt.Sprintf("---\ntype: %s\ntitle: Title of %s\ndescription: About %s\ntags: []\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n%s---\nBody.\n",
		typ, id, id, id, extra))
}

func TestStatusGraph(t *testing.T) {
	f := newLintKB(t)
	f.graphLeaf("molecule-store", "molecule", "")
	f.graphLeaf("map-keys", "map", "kk_paths: [keys/*.go]\nkk_molecule: molecule-store\n")
	f.graphLeaf("map-loose", "map", "kk_paths: [loose/*.go]\n")
	f.graphLeaf("map-lost", "map", "kk_paths: [lost/*.go]\nkk_molecule: molecule-gone\n")
	f.graphLeaf("practice-plain", "practice", "")
	edge := func(typ, to string) string {
		return fmt.Sprintf("  - {type: %s, to: %s, created_at: '2026-01-01T00:00:00Z', created_by: ann, source: T-1}\n", typ, to)
	}
	// req-a: must, specified and verified; req-b: must, verified by a
	// scenario only (no test); req-c: should, nothing; req-d: verified by
	// a test that does not exist.
	f.graphLeaf("req-a", "req", "kk_priority: must\nkk_edges:\n"+edge("specified_by", "scenario-a")+edge("verified_by", "test-a"))
	f.graphLeaf("req-b", "req", "kk_priority: must\nkk_edges:\n"+edge("verified_by", "scenario-a"))
	f.graphLeaf("req-c", "req", "kk_priority: should\n")
	f.graphLeaf("req-d", "req", "kk_edges:\n"+edge("verified_by", "test-gone"))
	f.graphLeaf("scenario-a", "scenario", "")
	f.graphLeaf("test-a", "test", "")
	f.rebuild()
	g := f.status().Graph
	if g.Entities != 11 || !maps.Equal(g.EntitiesByType, map[string]int{"molecule": 1, "map": 3, "practice": 1, "req": 4, "scenario": 1, "test": 1}) {
		t.Errorf("entities %d %v", g.Entities, g.EntitiesByType)
	}
	if g.Atoms != 3 || g.Molecules != 1 || !slices.Equal(g.AtomsWithoutMolecule, []string{"map-loose", "map-lost"}) {
		t.Errorf("atoms %d molecules %d without a molecule %v", g.Atoms, g.Molecules, g.AtomsWithoutMolecule)
	}
	if g.Requirements != 4 || !slices.Equal(g.RequirementsWithoutCoverage, []string{"req-b", "req-c", "req-d"}) {
		t.Errorf("requirements %d without coverage %v", g.Requirements, g.RequirementsWithoutCoverage)
	}
	// req-b misses both halves of must-coverage (one violation) and its
	// edge to a scenario breaks the edge table; req-d's edge dangles.
	want := map[string]int{"must-coverage": 1, "depends-on-acyclic": 0, "symbol-req-exists": 0, "no-dangling-edges": 1, "edge-endpoint-types": 1, "leaves-readable": 0, "no-dead-links": 0, "retired-ids": 0}
	if !maps.Equal(g.Violations, want) || g.ViolationCount != 3 {
		t.Errorf("violations %v (%d), want %v (3)", g.Violations, g.ViolationCount, want)
	}

	// A leaf kk cannot read is a violation of leaves-readable; the
	// others are counted as ever.
	f.write("nodes/practice-bad.md", "---\ntype: practice\n---\n")
	g = f.status().Graph
	want["leaves-readable"] = 1
	if g.Entities != 11 || !maps.Equal(g.Violations, want) || g.ViolationCount != 4 {
		t.Errorf("with an invalid leaf: %+v", g)
	}
}
