package extract_test

import (
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/extract"
	_ "github.com/kk-project/kk/internal/schema" // registers the symbol manifest check
	"github.com/kk-project/kk/internal/store"
)

// Ids are kept exactly as their writer gave them (case, digits and
// punctuation), trimmed; characters outside the id alphabet are refused,
// never rewritten.
func TestNormalizeID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		typ, id, want, err string
	}{
		{"req", "REQ-7", "REQ-7", ""},
		{"req", "req-7", "req-7", ""},
		{"req", "  REQ_7 ", "REQ_7", ""},
		{"req", "login", "login", ""},
		{"req", "Login.Flow", "Login.Flow", ""},
		{"scenario", "SCN-1", "SCN-1", ""},
		{"req", "REQ-001", "REQ-001", ""},
		{"req", "7", "7", ""},
		{"req", "", "", "is empty"},
		{"req", "   ", "", "is empty"},
		{"req", "REQ 7", "", `has the character ' '`},
		{"req", "req/7", "", `has the character '/'`},
		{"req", "réq-7", "", `has the character 'é'`},
		{"req", "--", "", "must start with a letter or a digit"},
		{"req", "-x", "", "must start with a letter or a digit"},
		{"req", "REQ", "", "has nothing after its type req"},
		{"req", strings.Repeat("x", 129), "", "the limit is 128"},
		{"Req", "x", "", "not a valid type"},
		{"", "x", "", "not a valid type"},
	} {
		got, err := extract.NormalizeID(tc.typ, tc.id)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("NormalizeID(%q, %q) = %q, %v; want error containing %q", tc.typ, tc.id, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeID(%q, %q) = %q, %v; want %q", tc.typ, tc.id, got, err, tc.want)
		}
	}
}

// Edge targets are kept as given too; which type they name is checked
// against the index by kk check.
func TestNormalizeRef(t *testing.T) {
	t.Parallel()
	guards := extract.EdgeRules["guards"].To
	for _, tc := range []struct {
		types     []string
		id, want  string
		errSubstr string
	}{
		{[]string{"req"}, "REQ-7", "REQ-7", ""},
		{guards, "Event-Login", "Event-Login", ""},
		{guards, "EVT-1", "EVT-1", ""},
		{guards, "a b", "", "has the character"},
		{guards, "", "", "is empty"},
	} {
		got, err := extract.NormalizeRef(tc.types, tc.id)
		if tc.errSubstr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSubstr) {
				t.Errorf("NormalizeRef(%v, %q) = %q, %v; want error containing %q", tc.types, tc.id, got, err, tc.errSubstr)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("NormalizeRef(%v, %q) = %q, %v; want %q", tc.types, tc.id, got, err, tc.want)
		}
	}
}

func TestFromConfig(t *testing.T) {
	t.Parallel()
	exs := extract.FromConfig(store.DefaultConfig())
	if len(exs) != 2 || exs[0].Name() != "markdown" || exs[1].Name() != "symbols" {
		t.Fatalf("FromConfig = %v", exs)
	}
	if md := exs[0].(*extract.Markdown); !slices.Equal(md.Folders, store.DefaultDocsFolders) {
		t.Errorf("markdown folders = %v", md.Folders)
	}
	cfg := store.DefaultConfig()
	cfg.Extractors = &store.Extractors{Docs: []string{"spec"}, Symbols: []string{"syms.yaml"}}
	exs = extract.FromConfig(cfg)
	if md := exs[0].(*extract.Markdown); !slices.Equal(md.Folders, []string{"spec"}) {
		t.Errorf("markdown folders = %v", md.Folders)
	}
	if sy := exs[1].(*extract.Symbols); !slices.Equal(sy.Files, []string{"syms.yaml"}) {
		t.Errorf("manifests = %v", sy.Files)
	}
}

func write(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, content := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestMarkdownSources(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, map[string]string{
		"docs/adr/0001-sqlite.md":        "x",
		"docs/adr/nested/0002.md":        "x",
		"docs/adr/notes.txt":             "x",
		"docs/adr/.draft.md":             "x",
		"docs/adr/.hidden/secret.md":     "x",
		"docs/requirements/login.md":     "x",
		"docs/other/ignored.md":          "x",
		"docs/scenarios":                 "a file, not a folder",
		"specs/req.md":                   "x",
		".ai/kenkeep/nodes/leaf/leaf.md": "x",
	})
	md := &extract.Markdown{Folders: store.DefaultDocsFolders}
	got, err := md.Sources(root)
	want := []string{"docs/adr/0001-sqlite.md", "docs/adr/nested/0002.md", "docs/requirements/login.md"}
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("Sources = %v, %v; want %v", got, err, want)
	}
	md.Folders = []string{"specs", "./specs/", "missing"}
	if got, err = md.Sources(root); err != nil || !slices.Equal(got, []string{"specs/req.md"}) {
		t.Fatalf("Sources = %v, %v", got, err)
	}
	for _, bad := range []string{"../outside", "/abs", "docs/../../x", ""} {
		md.Folders = []string{bad}
		if _, err := md.Sources(root); err == nil || !strings.Contains(err.Error(), "docs folder") {
			t.Errorf("folder %q: err = %v", bad, err)
		}
	}
}

func ptr(f float64) *float64 { return &f }

func TestMarkdownExtract(t *testing.T) {
	t.Parallel()
	md := &extract.Markdown{}
	valid := []struct {
		name, src string
		want      []extract.Entity
	}{
		{"mapping links", `---
id: REQ-7
type: req
title: Users can reset their password
status: accepted
priority: must
severity: high
owner: team-auth
description: Reset by e-mail link.
tags: [auth, email, auth]
links:
  verified_by: TEST-reset
  specified_by: [SCN-reset, scenario-reset-expired, SCN-reset]
  depends_on: [req-login]
---
# Reset

Body.
`, []extract.Entity{{ID: "REQ-7", Type: "req", Title: "Users can reset their password", Status: "accepted", Priority: "must",
			Severity: "high", Owner: "team-auth", Description: "Reset by e-mail link.", Tags: []string{"auth", "email"},
			Body: "# Reset\n\nBody.\n", Source: "docs/requirements/reset.md",
			Edges: []extract.Edge{{Type: "depends_on", To: "req-login"}, {Type: "specified_by", To: "SCN-reset"},
				{Type: "specified_by", To: "scenario-reset-expired"}, {Type: "verified_by", To: "TEST-reset"}}}}},
		{"list links with confidence", `---
id: flag-new-checkout
type: flag
links:
  - {type: guards, to: EVENT-checkout-started, confidence: 0.5}
  - type: guards
    to: req-7
    confidence: 1
---
Text.
`, []extract.Entity{{ID: "flag-new-checkout", Type: "flag", Title: "flag-new-checkout", Body: "Text.\n", Source: "docs/requirements/reset.md",
			Edges: []extract.Edge{{Type: "guards", To: "EVENT-checkout-started", Confidence: ptr(0.5)}, {Type: "guards", To: "req-7", Confidence: ptr(1)}}}}},
		{"title from the first heading outside code", "---\nid: 3\ntype: adr\nlinks:\n---\n```\n# not this\n```\n\n## Use SQLite ##\n# later\n",
			[]extract.Entity{{ID: "3", Type: "adr", Title: "Use SQLite", Body: "```\n# not this\n```\n\n## Use SQLite ##\n# later\n", Source: "docs/requirements/reset.md"}}},
		{"no front matter", "# Just a document\n", nil},
		{"id without type", "---\nid: x\n---\n", nil},
		{"type without id", "---\ntype: req\n---\n", nil},
		{"other front matter", "---\ntitle: Notes\nsidebar: 2\n---\n", nil},
	}
	for _, tc := range valid {
		t.Run(tc.name, func(t *testing.T) {
			got, err := md.Extract("/repo", "docs/requirements/reset.md", []byte(tc.src))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got  %+v\nwant %+v", got, tc.want)
			}
		})
	}

	malformed := []struct {
		name, front, field, msg string
	}{
		{"bad yaml", "id: [unclosed\ntype: req", "", "front matter:"},
		{"type not a string", "id: x\ntype: [req]", "type", "is not an entity type"},
		{"unknown type", "id: x\ntype: practice", "type", `"practice" is not an entity type; use one of req, scenario, test, adr, flag, event, symbol`},
		{"id a list", "id: [x]\ntype: req", "id", "must be a string, not a list"},
		{"id bad character", "id: REQ 7\ntype: req", "id", `has the character ' '`},
		{"id only the type", "id: REQ\ntype: req", "id", "has nothing after its type"},
		{"title not a string", "id: x\ntype: req\ntitle: 5", "title", "must be a string, not the number 5"},
		{"title two lines", "id: x\ntype: req\ntitle: \"a\\nb\"", "title", "must be one line"},
		{"title too long", "id: x\ntype: req\ntitle: " + strings.Repeat("t", 256), "title", "at most 255"},
		{"status not a string", "id: x\ntype: req\nstatus: true", "status", "must be a string, not a boolean"},
		{"priority too long", "id: x\ntype: req\npriority: " + strings.Repeat("p", 65), "priority", "at most 64"},
		{"tags not a list", "id: x\ntype: req\ntags: auth", "tags", "must be a list of strings"},
		{"tag with a space", "id: x\ntype: req\ntags: [a b]", "tags", "item 0 (\"a b\") must be one word"},
		{"too many tags", "id: x\ntype: req\ntags: [" + strings.Repeat("t,", 50) + "t]", "tags", "at most 50"},
		{"links a string", "id: x\ntype: req\nlinks: REQ-1", "links", "must be a mapping of edge type to ids, or a list"},
		{"links value a mapping", "id: x\ntype: req\nlinks:\n  verified_by: {to: t}", "links.verified_by", "must be an id or a list of ids"},
		{"links unknown edge type", "id: x\ntype: req\nlinks:\n  tested_by: [t]", "links.tested_by[0]", `"tested_by" is not an edge type a req can declare; use one of depends_on, specified_by, verified_by`},
		{"links edge from the wrong type", "id: x\ntype: symbol\nlinks:\n  verified_by: t", "links.verified_by", "a verified_by edge starts at a req, not a symbol; a symbol can declare constrained_by, consumes, covered_by, implements, publishes"},
		{"links from a type without edges", "id: x\ntype: test\nlinks:\n  verified_by: t", "links.verified_by", "a test declares no edges"},
		{"links relates_to", "id: x\ntype: req\nlinks:\n  relates_to: [y]", "links.relates_to[0]", "relates_to needs a kind"},
		{"links bad target", "id: x\ntype: req\nlinks:\n  depends_on: [ok, 'no/pe']", "links.depends_on[1]", `has the character '/'`},
		{"links target not an id", "id: x\ntype: req\nlinks:\n  depends_on: [[a]]", "links.depends_on[0]", "must be an id, not a list"},
		{"links target that is not an id", "id: x\ntype: flag\nlinks:\n  guards: EVT 1", "links.guards", "has the character ' '"},
		{"list item not a mapping", "id: x\ntype: req\nlinks: [req-1]", "links[0]", "must be a mapping {type, to, confidence?}"},
		{"list item unknown key", "id: x\ntype: req\nlinks:\n  - {type: depends_on, to: r, why: no}", "links[0].why", "is not a link key"},
		{"list item without type", "id: x\ntype: req\nlinks:\n  - {to: r}", "links[0].type", "is required"},
		{"list item without to", "id: x\ntype: req\nlinks:\n  - {type: depends_on}", "links[0].to", "is required"},
		{"list item bad confidence", "id: x\ntype: req\nlinks:\n  - {type: depends_on, to: r, confidence: 2}", "links[0].confidence", "2 is outside 0..1"},
		{"list item confidence a string", "id: x\ntype: req\nlinks:\n  - {type: depends_on, to: r, confidence: high}", "links[0].confidence", "must be a number"},
		{"list item bad type", "id: x\ntype: req\nlinks:\n  - {type: implements, to: r}", "links[0].type", "an implements edge starts at a symbol"},
	}
	for _, tc := range malformed {
		t.Run(tc.name, func(t *testing.T) {
			got, err := md.Extract("/repo", "docs/adr/x.md", []byte("---\n"+tc.front+"\n---\nbody\n"))
			ee, ok := err.(*extract.Error)
			if !ok {
				t.Fatalf("got %v, %v; want an *extract.Error", got, err)
			}
			if ee.Source != "docs/adr/x.md" || ee.Field != tc.field || !strings.Contains(ee.Msg, tc.msg) {
				t.Fatalf("error %+v; want field %q, message containing %q", ee, tc.field, tc.msg)
			}
			if !strings.HasPrefix(err.Error(), "docs/adr/x.md: ") {
				t.Errorf("error text %q does not start with the file", err)
			}
		})
	}
}

func TestSymbolsSources(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, map[string]string{".ai/kenkeep/symbols.yaml": "x", "dir/symbols.json/x": "a folder named like a manifest"})
	s := &extract.Symbols{Files: append(slices.Clone(store.DefaultSymbolManifests), "dir/symbols.json", ".ai/kenkeep/symbols.yaml")}
	got, err := s.Sources(root)
	if err != nil || !slices.Equal(got, []string{".ai/kenkeep/symbols.yaml"}) {
		t.Fatalf("Sources = %v, %v", got, err)
	}
	s.Files = []string{"../up.json"}
	if _, err := s.Sources(root); err == nil || !strings.Contains(err.Error(), `symbol manifest "../up.json": climbs out`) {
		t.Fatalf("err = %v", err)
	}
}

func TestSymbolsExtract(t *testing.T) {
	t.Parallel()
	s := &extract.Symbols{}
	const yamlManifest = `schema_version: 1
symbols:
  - id: SYM-login
    name: auth.Login
    kind: function
    file: internal/auth/login.go
    description: Checks a password.
    status: stable
    owner: team-auth
    tags: [auth, auth, hot]
    implements: [REQ-7, req-7, REQ-8]
    covered_by: [TEST-login]
    constrained_by: [ADR-3]
    publishes: [EVT-logged-in]
    consumes: [event-user-created]
  - name: billing/Invoice.Total
`
	want := []extract.Entity{
		{ID: "SYM-login", Type: "symbol", Title: "auth.Login", Description: "Checks a password.", Status: "stable", Owner: "team-auth",
			Tags: []string{"auth", "hot"}, Source: "symbols.yaml",
			Body: "Symbol `auth.Login` (function) in `internal/auth/login.go`.\n\nChecks a password.\n",
			Edges: []extract.Edge{{Type: "implements", To: "REQ-7"}, {Type: "implements", To: "REQ-8"}, {Type: "covered_by", To: "TEST-login"},
				{Type: "constrained_by", To: "ADR-3"}, {Type: "publishes", To: "EVT-logged-in"}, {Type: "consumes", To: "event-user-created"}}},
		{ID: "symbol-billing-invoice-total", Type: "symbol", Title: "billing/Invoice.Total", Source: "symbols.yaml", Body: "Symbol `billing/Invoice.Total`.\n"},
	}
	got, err := s.Extract("/repo", "symbols.yaml", []byte(yamlManifest))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, %v\nwant %+v", got, err, want)
	}
	const jsonManifest = `{"schema_version": 1, "symbols": [{"id": "auth.Login", "name": "auth.Login", "implements": ["REQ-7"]}]}`
	got, err = s.Extract("/repo", "symbols.json", []byte(jsonManifest))
	if err != nil || len(got) != 1 || got[0].ID != "auth.Login" || got[0].Edges[0].To != "REQ-7" {
		t.Fatalf("got %+v, %v", got, err)
	}
	if got, err := s.Extract("/repo", "s.json", []byte(`{"schema_version": 1, "symbols": []}`)); err != nil || len(got) != 0 {
		t.Fatalf("empty manifest: %v, %v", got, err)
	}

	for _, tc := range []struct {
		name, src, field, msg string
	}{
		{"not JSON", `{"schema_version": 1,`, "", "JSON"},
		{"bad YAML", "symbols: [\n", "", "YAML"},
		{"missing version", `{"symbols": []}`, "/schema_version", "is required"},
		{"wrong version", `{"schema_version": 2, "symbols": []}`, "/schema_version", "value must be 1"},
		{"unknown key", `{"schema_version": 1, "symbols": [], "extra": 1}`, "/extra", "unknown property"},
		{"symbol unknown key", `{"schema_version": 1, "symbols": [{"name": "a", "line": 3}]}`, "/symbols/0/line", "unknown property"},
		{"symbol without name", `{"schema_version": 1, "symbols": [{"id": "a"}]}`, "/symbols/0/name", "is required"},
		{"several failures", `{"schema_version": 1, "symbols": [{"id": "a"}, {"name": "b", "kind": 3}]}`, "/symbols/0/name", "(also /symbols/1/kind:"},
		{"bad id", `{"schema_version": 1, "symbols": [{"id": "a b", "name": "a"}]}`, "/symbols/0/id", "does not match pattern"},
		{"bad target", `{"schema_version": 1, "symbols": [{"name": "a", "implements": ["REQ 7"]}]}`, "/symbols/0/implements/0", "does not match pattern"},
		{"tag with a space", `{"schema_version": 1, "symbols": [{"name": "a", "tags": ["a b"]}]}`, "/symbols/0/tags/0", "does not match pattern"},
		{"target that is not an id", `{"schema_version": 1, "symbols": [{"name": "a", "covered_by": ["-test"]}]}`, "/symbols/0/covered_by/0", "does not match pattern"},
		{"name without letters", `{"schema_version": 1, "symbols": [{"name": "::"}]}`, "/symbols/0/name", "give the symbol an id"},
		{"duplicate id", `{"schema_version": 1, "symbols": [{"id": "SYMBOL-a", "name": "a"}, {"name": "A"}]}`, "/symbols/1/name", "gives the id symbol-a, which /symbols/0 already has"},
		{"duplicate explicit id", `{"schema_version": 1, "symbols": [{"id": "x", "name": "a"}, {"id": "X", "name": "b"}]}`, "/symbols/1/id", "gives the id X, which /symbols/0 already has"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := s.Extract("/repo", "syms.json", []byte(tc.src))
			ee, ok := err.(*extract.Error)
			if !ok {
				t.Fatalf("got %v, %v; want an *extract.Error", got, err)
			}
			if ee.Source != "syms.json" || ee.Field != tc.field || !strings.Contains(ee.Msg, tc.msg) {
				t.Fatalf("error %+v; want field %q, message containing %q", ee, tc.field, tc.msg)
			}
		})
	}
}
