package index_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/index"
	_ "github.com/kk-project/kk/internal/schema" // registers the symbol manifest check
	"github.com/kk-project/kk/internal/store"
)

// The extraction tests live outside package index: the symbol manifest
// check comes from internal/schema, which imports index through graph.

type repo struct {
	t    *testing.T
	k    *store.KB
	tick time.Time // mtimes handed out by put, an hour back and rising
}

func newRepo(t *testing.T) *repo {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := k.Scaffold(store.InitOptions{Version: "test", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return &repo{t: t, k: k, tick: time.Now().Add(-time.Hour)}
}

// put writes a repository file with an old mtime (outside the racy
// window), different from every earlier one.
func (r *repo) put(rel, content string) {
	r.t.Helper()
	p := filepath.Join(r.k.Root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		r.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		r.t.Fatal(err)
	}
	r.age(rel)
}

func (r *repo) age(rel string) {
	r.t.Helper()
	r.tick = r.tick.Add(time.Second)
	if err := os.Chtimes(filepath.Join(r.k.Root, filepath.FromSlash(rel)), r.tick, r.tick); err != nil {
		r.t.Fatal(err)
	}
}

func (r *repo) rm(rel string) {
	r.t.Helper()
	if err := os.Remove(filepath.Join(r.k.Root, filepath.FromSlash(rel))); err != nil {
		r.t.Fatal(err)
	}
}

// sync opens the main branch's index (syncing it) and returns the stats
// and the index's entities and edges as "id type title origin" and
// "from type to source created_by" lines.
func (r *repo) sync() (index.Stats, []string, []string) {
	r.t.Helper()
	ctx := context.Background()
	db, st, err := index.Open(ctx, r.k, "main")
	if err != nil {
		r.t.Fatal(err)
	}
	defer func() { _ = db.Close() }()
	ents, err := db.Entities(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	var es []string
	for _, e := range ents {
		es = append(es, strings.Join([]string{e.ID, e.Type, e.Title, e.Origin}, " "))
	}
	edges, err := db.Edges(ctx)
	if err != nil {
		r.t.Fatal(err)
	}
	var ed []string
	for _, e := range edges {
		ed = append(ed, strings.Join([]string{e.From, e.Type, e.To, e.Source, e.CreatedBy, e.Confidence}, " "))
	}
	return st, es, ed
}

func leafDoc(id, typ, title string) string {
	return "---\ntype: " + typ + "\ntitle: " + title + "\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: " + id +
		"\nkk_derived_from: []\nkk_relates_to: []\nkk_depends_on: []\nkk_confidence: high\n---\nBody.\n"
}

const (
	reqDoc = `---
id: REQ-7
type: req
priority: must
links:
  specified_by: [SCN-reset]
  verified_by: TEST-reset
---
# Password reset
`
	scenarioDoc = "---\nid: SCN-reset\ntype: scenario\n---\n# Reset by e-mail\n"
	adrDoc      = "---\nid: ADR-3\ntype: adr\ntitle: Tokens expire\nstatus: accepted\n---\n"
	manifest    = `schema_version: 1
symbols:
  - id: auth-reset
    name: auth.Reset
    implements: [REQ-7]
    constrained_by: [ADR-3]
    covered_by: [TEST-reset]
`
)

func want(t *testing.T, what string, got, want []string) {
	t.Helper()
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got  %q\n want %q", what, got, want)
	}
}

func TestSyncExtracted(t *testing.T) {
	r := newRepo(t)
	r.put(".ai/kenkeep/nodes/auth/req-login.md", leafDoc("req-login", "req", "Login"))
	r.put("docs/requirements/reset.md", reqDoc)
	r.put("docs/scenarios/reset.md", scenarioDoc)
	r.put("docs/adr/0003-tokens.md", adrDoc)
	r.put("docs/adr/README.md", "# Decisions\n\nNo front matter: not an entity.\n")
	r.put(".ai/kenkeep/symbols.yaml", manifest)

	// phase: first sync reads every source
	st, ents, edges := r.sync()
	if st.Extracted != (index.ExtractStats{Sources: 5, Entities: 4, Edges: 5, Added: 5}) || st.Leaves != 1 || len(st.Skipped) != 0 {
		t.Fatalf("stats %+v", st)
	}
	want(t, "entities", ents, []string{"ADR-3 adr Tokens expire docs/adr/0003-tokens.md", "auth-reset symbol auth.Reset .ai/kenkeep/symbols.yaml", "REQ-7 req Password reset docs/requirements/reset.md", "req-login req Login ", "SCN-reset scenario Reset by e-mail docs/scenarios/reset.md"})
	want(t, "edges", edges, []string{"auth-reset constrained_by ADR-3 .ai/kenkeep/symbols.yaml extractor:symbols ", "auth-reset covered_by TEST-reset .ai/kenkeep/symbols.yaml extractor:symbols ", "auth-reset implements REQ-7 .ai/kenkeep/symbols.yaml extractor:symbols ", "REQ-7 specified_by SCN-reset docs/requirements/reset.md extractor:markdown ", "REQ-7 verified_by TEST-reset docs/requirements/reset.md extractor:markdown "})

	// phase: nothing changed: no source is read
	st, ents2, edges2 := r.sync()
	if st.Extracted != (index.ExtractStats{Sources: 5, Entities: 4, Edges: 5, Unchanged: 5}) || st.Changed() || len(st.Skipped) != 0 {
		t.Fatalf("no-change stats %+v", st)
	}
	want(t, "entities after a no-change sync", ents2, ents)
	want(t, "edges after a no-change sync", edges2, edges)

	// phase: touch (new mtime, same content), then edit
	r.age("docs/adr/0003-tokens.md")
	r.put("docs/requirements/reset.md", strings.Replace(strings.Replace(reqDoc, "  verified_by: TEST-reset\n", "", 1), "# Password reset", "# Reset a password", 1))
	st, ents, edges = r.sync()
	if st.Extracted != (index.ExtractStats{Sources: 5, Entities: 4, Edges: 4, Updated: 1, Touched: 1, Unchanged: 3}) || !st.Changed() {
		t.Fatalf("edit stats %+v", st)
	}
	if !slices.Contains(ents, "REQ-7 req Reset a password docs/requirements/reset.md") || slices.ContainsFunc(edges, func(s string) bool { return strings.HasPrefix(s, "REQ-7 verified_by") }) {
		t.Fatalf("after the edit: %q %q", ents, edges)
	}

	// phase: a malformed source is skipped (every sync) and its rows removed
	r.put("docs/scenarios/reset.md", "---\nid: SCN reset\ntype: scenario\n---\n")
	for range 2 {
		st, ents, _ = r.sync()
		wantSkipped := []index.Problem{{Path: "docs/scenarios/reset.md", Extractor: "markdown", Msg: `id: id "SCN reset" has the character ' '; ids use ASCII letters, digits, '-', '_' and '.'`}}
		if !slices.Equal(st.Skipped, wantSkipped) || st.Extracted.Entities != 3 || slices.ContainsFunc(ents, func(s string) bool { return strings.HasPrefix(s, "SCN-") }) {
			t.Fatalf("malformed: %+v %q", st, ents)
		}
	}
	r.put("docs/scenarios/reset.md", scenarioDoc)
	if st, _, _ = r.sync(); len(st.Skipped) != 0 || st.Extracted.Entities != 4 {
		t.Fatalf("fixed: %+v", st)
	}

	// phase: a malformed manifest names the JSON pointer
	r.put(".ai/kenkeep/symbols.yaml", strings.Replace(manifest, "implements: [REQ-7]", "implements: [REQ 7]", 1))
	st, _, _ = r.sync()
	if len(st.Skipped) != 1 || st.Skipped[0].Path != ".ai/kenkeep/symbols.yaml" || st.Skipped[0].Extractor != "symbols" ||
		!strings.HasPrefix(st.Skipped[0].Msg, "/symbols/0/implements/0: ") || st.Extracted.Entities != 3 {
		t.Fatalf("malformed manifest: %+v", st)
	}

	// phase: a deleted source takes its entities and edges along
	r.rm(".ai/kenkeep/symbols.yaml")
	st, ents, edges = r.sync()
	if st.Extracted != (index.ExtractStats{Sources: 4, Entities: 3, Edges: 1, Removed: 1, Unchanged: 4}) || len(st.Skipped) != 0 {
		t.Fatalf("delete stats %+v", st)
	}
	if slices.ContainsFunc(ents, func(s string) bool { return strings.HasPrefix(s, "auth-reset") }) || len(edges) != 1 {
		t.Fatalf("after the delete: %q %q", ents, edges)
	}
}

func TestSyncExtractedClashes(t *testing.T) {
	r := newRepo(t)
	leaf := ".ai/kenkeep/nodes/auth/req-login.md"
	r.put(leaf, leafDoc("req-login", "req", "Login leaf"))
	r.put("docs/requirements/login.md", "---\nid: REQ-login\ntype: req\ntitle: Login doc\nlinks: {depends_on: REQ-7}\n---\n")
	r.put("docs/requirements/b-dup.md", "---\nid: req-x\ntype: req\ntitle: X from b\n---\n")

	// phase: the tree wins over an extracted entity of the same id
	clashLeaf := index.Problem{Path: "docs/requirements/login.md", Extractor: "markdown", Msg: "id REQ-login is also the id of the leaf auth/req-login.md; the tree wins"}
	for range 2 {
		st, ents, edges := r.sync()
		if !slices.Equal(st.Skipped, []index.Problem{clashLeaf}) || st.Extracted.Entities != 1 {
			t.Fatalf("stats %+v", st)
		}
		want(t, "entities", ents, []string{"req-login req Login leaf ", "req-x req X from b docs/requirements/b-dup.md"})
		want(t, "edges", edges, nil)
	}

	// phase: without the leaf, the document's entity appears
	r.rm(leaf)
	st, ents, edges := r.sync()
	if len(st.Skipped) != 0 || st.Extracted.Entities != 2 {
		t.Fatalf("stats %+v", st)
	}
	want(t, "entities", ents, []string{"REQ-login req Login doc docs/requirements/login.md", "req-x req X from b docs/requirements/b-dup.md"})
	want(t, "edges", edges, []string{"REQ-login depends_on REQ-7 docs/requirements/login.md extractor:markdown "})

	// phase: the leaf comes back and wins again
	r.put(leaf, leafDoc("req-login", "req", "Login leaf"))
	st, ents, _ = r.sync()
	if !slices.Equal(st.Skipped, []index.Problem{clashLeaf}) {
		t.Fatalf("stats %+v", st)
	}
	want(t, "entities", ents, []string{"req-login req Login leaf ", "req-x req X from b docs/requirements/b-dup.md"})

	// phase: between two documents, the path sorting first wins, whatever
	// the order they were read in
	r.put("docs/requirements/a-dup.md", "---\nid: REQ-x\ntype: req\ntitle: X from a\n---\n")
	clashX := index.Problem{Path: "docs/requirements/b-dup.md", Extractor: "markdown", Msg: "id req-x is also declared by docs/requirements/a-dup.md, which wins (it sorts first)"}
	for range 2 {
		st, ents, _ = r.sync()
		if !slices.Equal(st.Skipped, []index.Problem{clashX, clashLeaf}) {
			t.Fatalf("stats %+v", st.Skipped)
		}
		want(t, "entities", ents, []string{"req-login req Login leaf ", "REQ-x req X from a docs/requirements/a-dup.md"})
	}
	r.rm("docs/requirements/a-dup.md")
	st, ents, _ = r.sync()
	if !slices.Equal(st.Skipped, []index.Problem{clashLeaf}) {
		t.Fatalf("stats %+v", st.Skipped)
	}
	want(t, "entities", ents, []string{"req-login req Login leaf ", "req-x req X from b docs/requirements/b-dup.md"})

	// phase: a leaf taking an id an unchanged document holds
	r.put(".ai/kenkeep/nodes/req-x.md", leafDoc("req-x", "req", "X leaf"))
	st, ents, _ = r.sync()
	if len(st.Skipped) != 2 || st.Skipped[0].Path != "docs/requirements/b-dup.md" || !strings.Contains(st.Skipped[0].Msg, "leaf req-x.md") {
		t.Fatalf("stats %+v", st.Skipped)
	}
	want(t, "entities", ents, []string{"req-login req Login leaf ", "req-x req X leaf "})
}

func TestSyncExtractedConfig(t *testing.T) {
	r := newRepo(t)
	r.put("docs/adr/1.md", "---\nid: 1\ntype: adr\n---\n")
	r.put("specs/2.md", "---\nid: 2\ntype: adr\n---\n")
	r.put("syms.json", `{"schema_version": 1, "symbols": [{"name": "main"}]}`)
	st, ents, _ := r.sync()
	want(t, "entities with the defaults", ents, []string{"1 adr 1 docs/adr/1.md"})
	if st.Extracted.Entities != 1 {
		t.Fatalf("stats with the defaults %+v; want 1 extracted entity", st.Extracted)
	}

	// phase: config names other folders and manifests
	r.put(".ai/kenkeep/config.yaml", "schema_version: 1\nextractors:\n  docs: [specs]\n  symbols: [syms.json]\n")
	st, ents, _ = r.sync()
	want(t, "entities with the config", ents, []string{"2 adr 2 specs/2.md", "symbol-main symbol main syms.json"})
	if st.Extracted.Added != 2 || st.Extracted.Removed != 1 {
		t.Fatalf("stats %+v", st.Extracted)
	}

	// phase: a folder outside the repository is reported, not fatal; an
	// empty list turns an extractor off
	r.put(".ai/kenkeep/symbols.json", `{"schema_version": 1, "symbols": [{"name": "default"}]}`)
	r.put(".ai/kenkeep/config.yaml", "schema_version: 1\nextractors:\n  docs: [../elsewhere]\n  symbols: []\n")
	st, ents, _ = r.sync()
	want(t, "entities with a bad folder", ents, nil)
	if len(st.Skipped) != 1 || st.Skipped[0].Path != ".ai/kenkeep/config.yaml" || !strings.Contains(st.Skipped[0].Msg, `docs folder "../elsewhere": climbs out`) {
		t.Fatalf("skipped %+v", st.Skipped)
	}
}
