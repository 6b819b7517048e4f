package checks

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// lintKB is a knowledge base in a temporary folder for lint, status and
// doctor tests.
type lintKB struct {
	t *testing.T
	k *store.KB
}

func newLintKB(t *testing.T) *lintKB {
	t.Helper()
	k := store.New(t.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "1.0.0", Now: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Command: "test"}); err != nil {
		t.Fatal(err)
	}
	return &lintKB{t: t, k: k}
}

// lintLeaf describes a v3 leaf to write.
type lintLeaf struct {
	path    string // relative to nodes/; default <id>.md
	typ     string // default the id's prefix
	id      string
	tags    []string
	rel     []string
	dep     []string
	derived []string
	// phrasings, when set, become kk_phrasings.
	phrasings []string
}

func lintYAMLList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func (f *lintKB) leaf(l lintLeaf) {
	f.t.Helper()
	if l.typ == "" {
		l.typ, _, _ = strings.Cut(l.id, "-")
	}
	if l.path == "" {
		l.path = l.id + ".md"
	}
	phrasings := ""
	if l.phrasings != nil {
		phrasings = "kk_phrasings: " + lintYAMLList(l.phrasings) + "\n"
	}
	src := fmt.Sprintf("---\ntype: %s\ntitle: Title of %s\ndescription: About %s\ntags: %s\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: %s\nkk_relates_to: %s\nkk_depends_on: %s\nkk_confidence: high\n%s---\nBody.\n",
		l.typ, l.id, l.id, lintYAMLList(l.tags), l.id, lintYAMLList(l.derived), lintYAMLList(l.rel), lintYAMLList(l.dep), phrasings)
	f.write("nodes/"+l.path, src)
}

// write writes a file relative to .ai/kenkeep.
func (f *lintKB) write(rel, content string) {
	f.t.Helper()
	p := filepath.Join(f.k.Dir, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

func (f *lintKB) remove(rel string) {
	f.t.Helper()
	if err := os.Remove(filepath.Join(f.k.Dir, filepath.FromSlash(rel))); err != nil {
		f.t.Fatal(err)
	}
}

func (f *lintKB) summaries(s store.Summaries) {
	f.t.Helper()
	data, err := store.RenderSummaries(s)
	if err != nil {
		f.t.Fatal(err)
	}
	f.write("FOLDER_SUMMARIES.md", string(data))
}

func (f *lintKB) rebuild() {
	f.t.Helper()
	if _, err := txn.Rebuild(context.Background(), f.k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		f.t.Fatal(err)
	}
}

func (f *lintKB) lint() *LintReport {
	f.t.Helper()
	r, err := Lint(context.Background(), f.k)
	if err != nil {
		f.t.Fatal(err)
	}
	return r
}

// items returns the items of one rule as "level file: message" lines.
func lintLines(r *LintReport, rule string) []string {
	var out []string
	for _, it := range r.Items {
		if it.Rule == rule {
			out = append(out, fmt.Sprintf("%s %s: %s", it.Level, it.File, it.Message))
		}
	}
	return out
}

func lintRules(r *LintReport) []string {
	var out []string
	for _, it := range r.Items {
		if !slices.Contains(out, it.Rule) {
			out = append(out, it.Rule)
		}
	}
	return out
}

// cleanPair writes two linked leaves in a summarised folder and rebuilds:
// a tree with nothing to report.
func (f *lintKB) cleanPair() {
	f.leaf(lintLeaf{id: "practice-a", path: "topic/practice-a.md", tags: []string{"go"}, rel: []string{"map-b"}, phrasings: []string{"how do I do a"}})
	f.leaf(lintLeaf{id: "map-b", path: "topic/map-b.md", tags: []string{"go"}, phrasings: []string{"where is b"}})
	f.summaries(store.Summaries{"topic": "everything about the topic"})
	f.rebuild()
}

func TestLintCleanTree(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	r := f.lint()
	if len(r.Items) != 0 || r.Errors != 0 || r.Findings != 0 || r.ConformanceOnly {
		t.Fatalf("clean tree: %+v", r)
	}
	if r.Items == nil {
		t.Fatal("Items must be an empty list, not nil, so --json prints []")
	}
}

func TestLintOKFConformance(t *testing.T) {
	tests := []struct {
		name  string
		setup func(f *lintKB)
		want  []string
	}{
		{"root index with another version", func(f *lintKB) {
			f.write("nodes/index.md", "---\nokf_version: '0.3'\n---\n# x\n")
		}, []string{`error .ai/kenkeep/nodes/index.md: the bundle root index has exactly one front matter key, okf_version: '0.1' or '0.2'; okf_version is "0.3"`}},
		{"root index with an unquoted version", func(f *lintKB) {
			f.write("nodes/index.md", "---\nokf_version: 0.2\n---\n# x\n")
		}, []string{`error .ai/kenkeep/nodes/index.md: the bundle root index has exactly one front matter key, okf_version: '0.1' or '0.2'; okf_version is the number 0.2`}},
		{"root index with an extra key", func(f *lintKB) {
			f.write("nodes/index.md", "---\nokf_version: '0.1'\ntitle: x\n---\n# x\n")
		}, []string{`error .ai/kenkeep/nodes/index.md: the bundle root index has exactly one front matter key, okf_version: '0.1' or '0.2'; it has okf_version, title`}},
		{"root index without front matter", func(f *lintKB) {
			f.write("nodes/index.md", "# x\n")
		}, []string{`error .ai/kenkeep/nodes/index.md: the bundle root index has exactly one front matter key, okf_version: '0.1' or '0.2'; it has none`}},
		{"folder index with front matter", func(f *lintKB) {
			f.write("nodes/topic/index.md", "---\ntitle: x\n---\n# x\n")
		}, []string{`error .ai/kenkeep/nodes/topic/index.md: a folder index has no front matter, but this one has title`}},
		{"kenkeep v2 folder index", func(f *lintKB) {
			f.write("nodes/topic/index.md", "---\nschema_version: 2\nsummary: s\n---\n# x\n")
		}, []string{`error .ai/kenkeep/nodes/topic/index.md: index is in the kenkeep v2 format (front matter has schema_version, summary)`}},
		{"document without front matter", func(f *lintKB) {
			f.write("nodes/topic/notes.md", "just notes\n")
		}, []string{`error .ai/kenkeep/nodes/topic/notes.md: has no front matter; an OKF document declares at least its type`}},
		{"document with an empty type", func(f *lintKB) {
			f.write("nodes/topic/notes.md", "---\ntype: ''\ntitle: x\n---\n")
		}, []string{`error .ai/kenkeep/nodes/topic/notes.md: type must be a non-empty string; it is ""`}},
		{"document with a list type", func(f *lintKB) {
			f.write("nodes/topic/notes.md", "---\ntype: [a]\n---\n")
		}, []string{`error .ai/kenkeep/nodes/topic/notes.md: type must be a non-empty string; it is a list`}},
		{"document whose front matter does not parse", func(f *lintKB) {
			f.write("nodes/topic/notes.md", "---\ntype: [a\n---\n")
		}, nil},
		{"unclosed front matter", func(f *lintKB) {
			f.write("nodes/topic/notes.md", "---\ntype: practice\n")
		}, []string{`error .ai/kenkeep/nodes/topic/notes.md: front matter does not parse: front matter is not closed: add a line with --- after the last key`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newLintKB(t)
			f.cleanPair()
			// A dangling edge that phase 2 would report: phase 1 errors hide it.
			f.leaf(lintLeaf{id: "practice-c", path: "topic/practice-c.md", rel: []string{"practice-gone"}})
			tc.setup(f)
			r := f.lint()
			if got := lintRules(r); !slices.Equal(got, []string{ruleOKFConformance}) {
				t.Fatalf("rules = %v, want only okf-conformance; items %+v", got, r.Items)
			}
			if !r.ConformanceOnly {
				t.Fatalf("ConformanceOnly = false, want true: phase 2 did not run")
			}
			got := lintLines(r, ruleOKFConformance)
			if tc.want == nil {
				if len(got) != 1 || !strings.Contains(got[0], "front matter does not parse") {
					t.Fatalf("got %q", got)
				}
				return
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			if r.Errors != len(tc.want) || r.Items[0].Fix == "" {
				t.Fatalf("errors = %d, fix %q", r.Errors, r.Items[0].Fix)
			}
		})
	}
}

func TestLintOKFAcceptsBothVersionsAndSkipsLogs(t *testing.T) {
	for _, v := range []string{"0.1", "0.2"} {
		f := newLintKB(t)
		f.cleanPair()
		f.write("nodes/index.md", "---\nokf_version: '"+v+"'\n---\n# x\n")
		f.write("nodes/topic/log.md", "no front matter in a log\n")
		if r := f.lint(); len(r.Items) != 0 {
			t.Fatalf("okf_version %s: %+v", v, r.Items)
		}
	}
}

// A kk_version a hand edit left as no whole number: kk reads the leaf,
// but kk read and every update by version refuse it, while kk lint said
// nothing.
func TestLintVersionThatIsNoNumber(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.write("nodes/topic/practice-v.md", "---\ntype: practice\ntitle: V\ndescription: v\ntags: []\nkk_schema_version: 3\nkk_id: practice-v\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\nkk_version: abc\n---\nBody.\n")
	want := []string{`error .ai/kenkeep/nodes/topic/practice-v.md: field "kk_version" must be a whole number of at least 1, not abc`}
	if got := lintLines(f.lint(), ruleOKFConformance); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
}

func TestLintInvalidLeaf(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	// OKF-conformant (it has a type) but not a valid kk leaf.
	f.write("nodes/topic/practice-x.md", "---\ntype: practice\ntitle: X\ndescription: x\ntags: []\nkk_schema_version: 3\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n")
	f.write("nodes/topic/practice-y.md", "---\ntype: practice\ntitle: Y\ndescription: y\ntags: []\nkk_schema_version: 3\nkk_id: practice-y\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: sure\n---\n")
	r := f.lint()
	want := []string{
		`error .ai/kenkeep/nodes/topic/practice-x.md: field "kk_id": is required`,
		`error .ai/kenkeep/nodes/topic/practice-y.md: field "kk_confidence": is "sure"; use one of low, medium, high`,
	}
	if got := lintLines(r, ruleInvalidLeaf); !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if got := lintRules(r); !slices.Equal(got, []string{ruleInvalidLeaf}) {
		t.Fatalf("rules = %v", got)
	}
}

// A leaf kk cannot read is reported with every problem in it, and the
// leaves it can read are checked as ever; an edge to the skipped leaf's
// id is not dangling (the leaf is there).
func TestLintInvalidLeafDoesNotStopTheOthers(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.write("nodes/hand/ctx.md", "---\ntype: practice\ntitle: Use context timeouts\nkk_id: practice-ctx\n---\nAlways pass a context with a timeout.\n")
	f.leaf(lintLeaf{id: "practice-c", path: "topic/practice-c.md", tags: []string{" x"}, rel: []string{"practice-ctx", "nope"}})
	r := f.lint()
	got := lintLines(r, ruleInvalidLeaf)
	for _, field := range []string{"kk_schema_version", "description", "tags", "kk_derived_from", "kk_relates_to", "kk_confidence"} {
		if !slices.ContainsFunc(got, func(l string) bool { return strings.Contains(l, "ctx.md: field \""+field+"\"") }) {
			t.Errorf("no problem names %s: %q", field, got)
		}
	}
	if got := lintLines(r, ruleDanglingEdge); len(got) != 1 || !strings.Contains(got[0], "nope") {
		t.Errorf("dangling edges %q, want only nope", got)
	}
	if got := lintLines(r, ruleTagWhitespace); len(got) != 1 {
		t.Errorf("the readable leaves were not checked: %q", got)
	}
	if got := append(lintLines(r, ruleEmptyFolder), lintLines(r, ruleMissingFolderIndex)...); len(got) != 0 {
		t.Errorf("a folder holding only a skipped leaf is neither empty nor missing its index: %q", got)
	}
}

func TestLintDuplicateIDIsInvalidLeaf(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "map-b", path: "other/map-b.md"})
	// Neither leaf can be told to be the one the id names: both are
	// skipped, each naming the other.
	got := lintLines(f.lint(), ruleInvalidLeaf)
	if len(got) != 2 || !strings.Contains(got[0], "other/map-b.md: field \"kk_id\": duplicate id map-b (also used by topic/map-b.md)") ||
		!strings.Contains(got[1], "topic/map-b.md: field \"kk_id\": duplicate id map-b (also used by other/map-b.md)") {
		t.Fatalf("got %q", got)
	}
}

// TestLintDuplicateIDFix: the fix of a leaf sharing its id with another
// (a note copied by hand) names the command that gives it an id of its
// own, kk node adopt with the file (which refused such a leaf before:
// "adoption cannot fix that"). When neither file is the original (named
// for the id), each says so if it is the copy; when one is, the copy's
// fix says it is a copy, and the original is not reported.
func TestLintDuplicateIDFix(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "map-b", path: "other/map-b.md"})
	n := 0
	for _, it := range f.lint().Items {
		if it.Rule != ruleInvalidLeaf {
			continue
		}
		n++
		if !strings.Contains(it.Fix, "if this file is a copy, run `kk node adopt "+it.File+"` to give it an id of its own") ||
			!strings.Contains(it.Fix, "give one of the leaves sharing the id map-b its own kk_id") {
			t.Errorf("%s: fix %q", it.File, it.Fix)
		}
	}
	if n != 2 {
		t.Fatalf("%d invalid-leaf items, want 2", n)
	}

	g := newLintKB(t)
	g.cleanPair()
	g.leaf(lintLeaf{id: "map-b", path: "topic/map-b copy.md"})
	n = 0
	for _, it := range g.lint().Items {
		if it.Rule != ruleInvalidLeaf {
			continue
		}
		n++
		if it.File != ".ai/kenkeep/nodes/topic/map-b copy.md" ||
			!strings.HasPrefix(it.Fix, "run `kk node adopt '.ai/kenkeep/nodes/topic/map-b copy.md'` to give this copy an id of its own") {
			t.Errorf("%s: fix %q", it.File, it.Fix)
		}
	}
	if n != 1 {
		t.Fatalf("%d invalid-leaf items, want 1 (the copy)", n)
	}
}

// TestLintOversizeLeafFix: the fix of a leaf over the size limit says to
// shorten or split it; it said to run kk node adopt, which refuses it too.
func TestLintOversizeLeafFix(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.write("nodes/practice-big.md", "---\ntype: practice\ntitle: Big\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-big\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n"+strings.Repeat("word ", node.MaxSize/5+1)+"\n")
	n := 0
	for _, it := range f.lint().Items {
		if it.Rule != ruleInvalidLeaf {
			continue
		}
		n++
		if strings.Contains(it.Fix, "kk node adopt") || !strings.Contains(it.Fix, "shorten the leaf, or split it into several notes") {
			t.Errorf("%s: %s: fix %q", it.File, it.Message, it.Fix)
		}
	}
	if n != 1 {
		t.Fatalf("%d invalid-leaf items, want 1", n)
	}
}

func TestLintNeedsMigration(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	v2 := "---\nschema_version: 2\nid: map-old\ntitle: Old\nkind: map\nsummary: s\ntags: []\nrelates_to: [practice-a]\nconfidence: high\n---\nBody.\n"
	f.write("nodes/topic/map-old.md", v2)
	r := f.lint()
	want := []string{"error .ai/kenkeep/nodes/topic/map-old.md: leaf is in the kenkeep v2 format (schema_version: 2, kind)"}
	if got := lintLines(r, ruleNeedsMigration); !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
	if lintLines(r, ruleOKFConformance) != nil || !strings.Contains(r.Items[0].Fix+r.Items[1].Fix, "kk migrate okf-v3") {
		t.Fatalf("a v2 leaf is OKF-conformant and points to kk migrate okf-v3: %+v", r.Items)
	}

	// A v2 leaf the reader rejects is still reported as needing migration.
	f.write("nodes/topic/map-bad.md", strings.Replace(strings.Replace(v2, "map-old", "map-bad", 1), "confidence: high", "confidence: sure", 1))
	r = f.lint()
	if got := lintLines(r, ruleNeedsMigration); !slices.Contains(got, "error .ai/kenkeep/nodes/topic/map-bad.md: leaf is in the kenkeep v2 format (schema_version: 2, kind)") {
		t.Fatalf("got %q", got)
	}
	if got := lintLines(r, ruleInvalidLeaf); len(got) != 1 || !strings.Contains(got[0], `"confidence"`) {
		t.Fatalf("invalid-leaf: %q", got)
	}
}

func TestLintEdges(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-a", rel: []string{"map-live", "map-gone", "map-old"}, dep: []string{"map-split", "map-loop"}})
	f.leaf(lintLeaf{id: "map-live", rel: []string{"practice-a"}})
	f.leaf(lintLeaf{id: "map-new"})
	f.leaf(lintLeaf{id: "map-half"})
	// map-old -> map-mid -> map-new (transitive); map-split -> [map-half, map-nowhere];
	// map-loop -> map-loop2 -> map-loop (a cycle with no live id).
	f.write("nodes/.redirects.json", `{"map-old": ["map-mid"], "map-mid": ["map-new"], "map-split": ["map-half", "map-nowhere"], "map-loop": ["map-loop2"], "map-loop2": ["map-loop"]}`)
	f.rebuild()
	r := f.lint()
	wantDangling := []string{
		"error .ai/kenkeep/nodes/practice-a.md: kk_depends_on: map-loop is not the id of any leaf",
		"error .ai/kenkeep/nodes/practice-a.md: kk_relates_to: map-gone is not the id of any leaf",
	}
	if got := lintLines(r, ruleDanglingEdge); !slices.Equal(got, wantDangling) {
		t.Fatalf("dangling:\n got  %q\n want %q", got, wantDangling)
	}
	wantRedirected := []string{
		"finding .ai/kenkeep/nodes/practice-a.md: kk_depends_on: map-split was retired and now redirects to map-half",
		"finding .ai/kenkeep/nodes/practice-a.md: kk_relates_to: map-old was retired and now redirects to map-new",
	}
	if got := lintLines(r, ruleRedirectedEdge); !slices.Equal(got, wantRedirected) {
		t.Fatalf("redirected:\n got  %q\n want %q", got, wantRedirected)
	}
	// Redirected edges count as incoming edges: map-new and map-half are not orphans.
	if got := lintLines(r, ruleOrphan); got != nil {
		t.Fatalf("orphans: %q", got)
	}
}

// TestLintGraphLinksAreEdges: kk_molecule, kk_related and kk_edges link
// leaves as kk_relates_to does, so the graph's leaves are not orphans.
func TestLintGraphLinksAreEdges(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "molecule-auth"})
	f.leaf(lintLeaf{id: "req-7"})
	f.leaf(lintLeaf{id: "test-login"})
	f.leaf(lintLeaf{id: "map-alone"})
	f.write("nodes/map-tokens.md", "---\ntype: map\ntitle: Tokens\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: map-tokens\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n"+
		"kk_paths:\n  - src/**\nkk_molecule: molecule-auth\n---\nBody.\n")
	f.write("nodes/req-8.md", "---\ntype: req\ntitle: R8\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: req-8\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n"+
		"kk_edges:\n  - type: verified_by\n    to: test-login\nkk_related:\n  - id: req-7\n    reason: same flow\n---\nBody.\n")
	f.rebuild()
	want := []string{"finding .ai/kenkeep/nodes/map-alone.md: no edges lead to or from this leaf"}
	if got := lintLines(f.lint(), ruleOrphan); !slices.Equal(got, want) {
		t.Fatalf("orphans:\n got  %q\n want %q", got, want)
	}
}

func TestLintRedirectsMustBeValid(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	for _, bad := range []string{`["a"]`, `{"a": "b"}`, `{"a": [1]}`, `{`} {
		f.write("nodes/.redirects.json", bad)
		_, err := Lint(context.Background(), f.k)
		if err == nil || !strings.Contains(err.Error(), ".ai/kenkeep/nodes/.redirects.json") {
			t.Fatalf("%s: err = %v", bad, err)
		}
	}
}

func TestLintSlugIDMismatch(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "practice-c", path: "topic/practice-other.md", rel: []string{"map-b"}})
	f.leaf(lintLeaf{id: "practice-Bad_Slug", path: "topic/practice-Bad_Slug.md", rel: []string{"map-b"}})
	f.leaf(lintLeaf{id: "map-wrong-kind", typ: "practice", path: "topic/map-wrong-kind.md", rel: []string{"map-b"}})
	f.rebuild()
	want := []string{
		"error .ai/kenkeep/nodes/topic/map-wrong-kind.md: id map-wrong-kind does not start with its type prefix practice-",
		"error .ai/kenkeep/nodes/topic/practice-Bad_Slug.md: id practice-Bad_Slug is not canonical; expected practice-bad-slug",
		"error .ai/kenkeep/nodes/topic/practice-other.md: file name practice-other.md does not match the id; expected practice-c.md",
	}
	r := f.lint()
	if got := lintLines(r, ruleSlugIDMismatch); !slices.Equal(got, want) {
		t.Fatalf("got  %q\nwant %q", got, want)
	}
	if r.Errors != 3 {
		t.Fatalf("errors = %d; items %+v", r.Errors, r.Items)
	}
}

func TestLintFolders(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "map-deep", path: "topic/sub/map-deep.md", rel: []string{"map-b"}})
	f.summaries(store.Summaries{"topic": "t", "topic/sub": "s"})
	f.rebuild()
	f.remove("nodes/topic/sub/index.md")
	for _, d := range []string{"nodes/empty/inner/innermost", "nodes/topic/hollow"} {
		if err := os.MkdirAll(filepath.Join(f.k.Dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	f.write("nodes/leftover/index.md", "# leftover\n")
	r := f.lint()
	wantIndex := []string{"error .ai/kenkeep/nodes/topic/sub/index.md: folder holds leaves but has no index.md"}
	if got := lintLines(r, ruleMissingFolderIndex); !slices.Equal(got, wantIndex) {
		t.Fatalf("missing-folder-index: %q", got)
	}
	wantEmpty := []string{
		"finding .ai/kenkeep/nodes/empty: folder holds no leaves",
		"finding .ai/kenkeep/nodes/leftover: folder holds no leaves, only a leftover index.md",
		"finding .ai/kenkeep/nodes/topic/hollow: folder holds no leaves",
	}
	if got := lintLines(r, ruleEmptyFolder); !slices.Equal(got, wantEmpty) {
		t.Fatalf("empty-folder:\n got  %q\n want %q", got, wantEmpty)
	}

	// Without the root index, the root is reported too, even with no leaves.
	g := newLintKB(t)
	g.remove("nodes/index.md")
	if got := lintLines(g.lint(), ruleMissingFolderIndex); !slices.Equal(got, []string{"error .ai/kenkeep/nodes/index.md: folder holds leaves but has no index.md"}) {
		t.Fatalf("root: %q", got)
	}
}

func TestLintTags(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-a", tags: []string{"api", "go"}, rel: []string{"practice-b"}})
	f.leaf(lintLeaf{id: "practice-b", tags: []string{"api", "Go-Lang"}, rel: []string{"practice-c"}})
	f.leaf(lintLeaf{id: "practice-c", tags: []string{"APIs", " api ", "golang", "two  words"}, rel: []string{"practice-a"}})
	f.rebuild()
	r := f.lint()
	wantDup := []string{
		`finding .ai/kenkeep/nodes/practice-b.md: tag "Go-Lang" nearly duplicates "golang", which 1 leaf(s) use`,
		`finding .ai/kenkeep/nodes/practice-c.md: tag " api " nearly duplicates "api", which 2 leaf(s) use`,
		`finding .ai/kenkeep/nodes/practice-c.md: tag "APIs" nearly duplicates "api", which 2 leaf(s) use`,
	}
	if got := lintLines(r, ruleTagNearDuplicate); !slices.Equal(got, wantDup) {
		t.Fatalf("tag-near-duplicate:\n got  %q\n want %q", got, wantDup)
	}
	wantWS := []string{
		`finding .ai/kenkeep/nodes/practice-c.md: tag " api " has leading, trailing or repeated whitespace`,
		`finding .ai/kenkeep/nodes/practice-c.md: tag "two  words" has leading, trailing or repeated whitespace`,
	}
	if got := lintLines(r, ruleTagWhitespace); !slices.Equal(got, wantWS) {
		t.Fatalf("tag-whitespace:\n got  %q\n want %q", got, wantWS)
	}
	if r.Errors != 0 || r.Findings != 5 {
		t.Fatalf("errors %d findings %d", r.Errors, r.Findings)
	}
}

func TestNormalizeTag(t *testing.T) {
	for in, want := range map[string]string{"APIs": "api", "api": "api", " a-p_i ": "api", "class": "clas", "s": "", "Straße": "straße", "ss": "s"} {
		if got := normalizeTag(in); got != want {
			t.Errorf("normalizeTag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLintSummaries(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "map-c", path: "other/map-c.md", rel: []string{"map-b"}})
	f.leaf(lintLeaf{id: "map-d", path: "third/map-d.md", rel: []string{"map-b"}})
	f.write("FOLDER_SUMMARIES.md", "---\nschema_version: 1\nsummaries:\n  topic: the topic\n  third: '  '\n---\n")
	f.rebuild()
	r := f.lint()
	if got := lintLines(r, ruleEmptySummary); !slices.Equal(got, []string{`finding .ai/kenkeep/FOLDER_SUMMARIES.md: folder "third" has a blank summary`}) {
		t.Fatalf("empty-summary: %q", got)
	}
	if got := lintLines(r, ruleMissingFolderSummary); !slices.Equal(got, []string{"finding .ai/kenkeep/nodes/other: folder has no summary in FOLDER_SUMMARIES.md"}) {
		t.Fatalf("missing-folder-summary: %q", got)
	}
	if r.Errors != 0 {
		t.Fatalf("summaries are findings: %+v", r.Items)
	}
}

func TestLintOrphan(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-a", rel: []string{"practice-b"}})
	f.leaf(lintLeaf{id: "practice-b"})                                    // incoming only
	f.leaf(lintLeaf{id: "practice-self", rel: []string{"practice-self"}}) // only itself
	f.leaf(lintLeaf{id: "practice-alone"})
	f.rebuild()
	want := []string{
		"finding .ai/kenkeep/nodes/practice-alone.md: no edges lead to or from this leaf",
		"finding .ai/kenkeep/nodes/practice-self.md: no edges lead to or from this leaf",
	}
	if got := lintLines(f.lint(), ruleOrphan); !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestLintStaleIndex(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "map-b", path: "topic/map-b.md", tags: []string{"go"}, rel: []string{"practice-a"}})
	r := f.lint()
	// A finding, not an error: a hand edit, a --no-index batch or
	// kenkeep's own node write leave ENTRY.md behind the leaves, and
	// kenkeep's lint has no such rule.
	want := []string{"finding .ai/kenkeep/ENTRY.md: ENTRY.md was generated from different leaves (nodes_hash differs)"}
	if got := lintLines(r, ruleStaleIndex); !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
	f.remove("ENTRY.md")
	want = []string{"finding .ai/kenkeep/ENTRY.md: ENTRY.md is missing or records no nodes_hash"}
	if got := lintLines(f.lint(), ruleStaleIndex); !slices.Equal(got, want) {
		t.Fatalf("got %q", got)
	}
}

// TestLintMissingGraph: GRAPH.md deleted by hand is a stale-index finding,
// as a missing ENTRY.md is (and a missing index.md an error); lint and
// doctor said nothing, and only kk index rebuild --check named it.
func TestLintMissingGraph(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	if got := lintLines(f.lint(), ruleStaleIndex); len(got) != 0 {
		t.Fatalf("a clean tree: %q", got)
	}
	f.remove("GRAPH.md")
	want := []string{"finding .ai/kenkeep/GRAPH.md: GRAPH.md is missing"}
	if got := lintLines(f.lint(), ruleStaleIndex); !slices.Equal(got, want) {
		t.Fatalf("got %q, want %q", got, want)
	}
	f.rebuild()
	if got := lintLines(f.lint(), ruleStaleIndex); len(got) != 0 {
		t.Fatalf("after a rebuild: %q", got)
	}
}

func TestLintSortsAndCounts(t *testing.T) {
	f := newLintKB(t)
	f.leaf(lintLeaf{id: "practice-z", rel: []string{"nope-2", "nope-1"}})
	f.leaf(lintLeaf{id: "practice-a", rel: []string{"nope-3"}, tags: []string{" x"}})
	r := f.lint()
	if !slices.IsSortedFunc(r.Items, func(a, b LintItem) int {
		return strings.Compare(a.Rule+"\x00"+a.File+"\x00"+a.Message, b.Rule+"\x00"+b.File+"\x00"+b.Message)
	}) {
		t.Fatalf("items not sorted: %+v", r.Items)
	}
	var errs, finds int
	for _, it := range r.Items {
		if it.Fix == "" || it.File == "" || it.Message == "" {
			t.Errorf("incomplete item %+v", it)
		}
		switch it.Level {
		case LintError:
			errs++
		case LintFinding:
			finds++
		default:
			t.Errorf("level %q", it.Level)
		}
	}
	if errs != r.Errors || finds != r.Findings || errs != 3 || finds != 2 {
		t.Fatalf("errors %d/%d findings %d/%d: %+v", errs, r.Errors, finds, r.Findings, r.Items)
	}
}

// TestLintWritesNothing checks that lint leaves every tracked file alone.
func TestLintWritesNothing(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	f.leaf(lintLeaf{id: "practice-c", rel: []string{"gone"}})
	before := lintSnapshot(t, f.k.Root)
	f.lint()
	if after := lintSnapshot(t, f.k.Root); !maps.Equal(before, after) {
		t.Fatalf("lint changed the tree:\nbefore %v\nafter  %v", before, after)
	}
}

// lintSnapshot maps every file under root, except kk's own state, to its
// content.
func lintSnapshot(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == ".state" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			out[store.RelTo(root, p)] = string(data)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestLintNotAKB(t *testing.T) {
	k := store.New(t.TempDir())
	r, err := Lint(context.Background(), k)
	// No nodes/ at all: the root index is missing and ENTRY.md too.
	if err != nil {
		t.Fatal(err)
	}
	if got := lintRules(r); !slices.Equal(got, []string{ruleMissingFolderIndex, ruleStaleIndex}) {
		t.Fatalf("rules %v", got)
	}
}

func TestLintCancelled(t *testing.T) {
	f := newLintKB(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Lint(ctx, f.k); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// BenchmarkLint10k lints a tree of 10,000 leaves in 200 folders with a
// warm leaf cache: the case `kk lint` meets in a large repository.
func BenchmarkLint10k(b *testing.B) {
	k := store.New(b.TempDir())
	if _, err := txn.Init(context.Background(), k, store.InitOptions{Version: "1", Now: time.Now(), Command: "bench"}); err != nil {
		b.Fatal(err)
	}
	const n = 10000
	old := time.Now().Add(-time.Hour)
	for i := range n {
		id := fmt.Sprintf("practice-item-%d", i)
		dir := filepath.Join(k.NodesDir(), fmt.Sprintf("f%d", i%20), fmt.Sprintf("g%d", i%200))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			b.Fatal(err)
		}
		src := fmt.Sprintf("---\ntype: practice\ntitle: Item %d\ndescription: About item %d\ntags: [t%d, t%d]\nkk_schema_version: 3\nkk_id: %s\nkk_derived_from: []\nkk_relates_to: [practice-item-%d]\nkk_depends_on: []\nkk_confidence: high\n---\n%s",
			i, i, i%300, i%7, id, (i*7+1)%n, strings.Repeat("Body text.\n", 30))
		p := filepath.Join(dir, id+".md")
		if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
			b.Fatal(err)
		}
		if err := os.Chtimes(p, old, old); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := txn.Rebuild(context.Background(), k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		b.Fatal(err)
	}
	if _, err := Lint(context.Background(), k); err != nil { // warms the leaf cache
		b.Fatal(err)
	}
	b.ResetTimer()
	for b.Loop() {
		r, err := Lint(context.Background(), k)
		if err != nil {
			b.Fatal(err)
		}
		if r.Errors != 0 {
			b.Fatalf("%d errors: %+v", r.Errors, r.Items[:1])
		}
	}
}

// A note saved as UTF-16 (Windows Notepad's "Unicode", some editors'
// default) is named so, with what to do, in kk lint and in the tree
// read's problem (kk check, kk index rebuild --check); it was "holds a NUL
// byte on line 1" or "not valid UTF-8", with a fix about YAML quoting.
func TestLintUTF16Leaf(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	text := "---\ntype: practice\ntitle: Wide\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-wide\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\nBody.\n"
	wide := []byte{0xFF, 0xFE}
	for _, r := range text {
		wide = append(wide, byte(r), 0)
	}
	f.write("nodes/practice-wide.md", string(wide))
	found := false
	for _, it := range f.lint().Items {
		if it.File != "nodes/practice-wide.md" && !strings.HasSuffix(it.File, "/practice-wide.md") {
			continue
		}
		found = true
		if !strings.Contains(it.Message, "saved as UTF-16") || !strings.Contains(it.Fix, "save it as UTF-8") || strings.Contains(it.Fix, "quotes") {
			t.Errorf("%s %s: %s (fix: %s)", it.Rule, it.File, it.Message, it.Fix)
		}
	}
	if !found {
		t.Fatal("no lint item for the UTF-16 leaf")
	}
	tree, err := f.k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tree.Problems) != 1 || !strings.Contains(tree.Problems[0].Error(), "saved as UTF-16") {
		t.Fatalf("tree problems = %v", tree.Problems)
	}
}

// A note that is a symbolic link out of the knowledge tree, or to nothing,
// is told to become the note itself or go; the fix said to edit its front
// matter or run kk node adopt, which cannot read it either.
func TestLintSymlinkLeafFix(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	outside := filepath.Join(t.TempDir(), "practice-out.md")
	if err := os.WriteFile(outside, []byte("---\ntype: practice\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, f.k.NodePath("practice-out.md")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(t.TempDir(), "gone.md"), f.k.NodePath("practice-gone.md")); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, it := range f.lint().Items {
		if !strings.HasSuffix(it.File, "/practice-out.md") && !strings.HasSuffix(it.File, "/practice-gone.md") {
			continue
		}
		n++
		if strings.Contains(it.Fix, "kk node adopt") || strings.Contains(it.Fix, "front matter") || !strings.Contains(it.Fix, "replace the link with the note itself") {
			t.Errorf("%s %s: %s (fix: %s)", it.Rule, it.File, it.Message, it.Fix)
		}
	}
	if n != 2 {
		t.Fatalf("%d items for the two links, want 2", n)
	}
}

// A file under nodes/ whose name does not end in .md is read by no
// command: lint names it as a stray-file finding, with what to do. kk's
// own files, dotfiles and dot folders, editors' and file managers'
// leftovers are not named, and a note saved as .MD is an invalid leaf
// only (people16_wrong_extension).
func TestLintStrayFile(t *testing.T) {
	f := newLintKB(t)
	f.cleanPair()
	for _, rel := range []string{"nodes/topic/practice-c.txt", "nodes/topic/notes", "nodes/topic/.gitkeep", "nodes/.redirects.json",
		"nodes/topic/4913", "nodes/topic/practice-a.md~", "nodes/topic/Thumbs.db", "nodes/topic/desktop.ini", "nodes/.hidden/x.txt", "nodes/topic/practice-d.MD"} {
		f.write(rel, "{}\n")
	}
	r := f.lint()
	got := lintLines(r, ruleStrayFile)
	want := []string{
		"finding .ai/kenkeep/nodes/topic/notes: " + StrayFileMsg,
		"finding .ai/kenkeep/nodes/topic/practice-c.txt: " + StrayFileMsg,
	}
	if !slices.Equal(got, want) {
		t.Errorf("stray-file items:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	for _, it := range r.Items {
		if it.Rule == ruleStrayFile && strings.HasSuffix(it.File, ".txt") && it.Fix != "if it is a note, rename it to practice-c.md (git mv when it is committed); if not, move it out of .ai/kenkeep/nodes/ or remove it" {
			t.Errorf("fix: %s", it.Fix)
		}
	}
	if r.Errors != 1 || len(lintLines(r, ruleInvalidLeaf)) != 1 {
		t.Errorf("errors %d, invalid-leaf %v; want the .MD note only", r.Errors, lintLines(r, ruleInvalidLeaf))
	}
}
