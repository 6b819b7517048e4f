package node

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const v3Leaf = `---
type: practice
title: Wrap errors with context
description: 'Always wrap: add the operation and the path'
tags:
  - errors
  - go
kk_schema_version: 3
kk_id: practice-wrap-errors-with-context
kk_derived_from:
  - docs/errors.md
kk_relates_to:
  - map-error-types
kk_depends_on: []
kk_confidence: high
x_custom: keep me   # unknown key with a comment
---

Use fmt.Errorf with %w.

<!-- kk:related:start -->
# Related

- Related: [map-error-types](/errors/map-error-types.md)
<!-- kk:related:end -->

<!-- kk:citations:start -->
# Citations

[1] [docs/errors.md](docs/errors.md)
<!-- kk:citations:end -->
`

func resolver(m map[string]string) Resolver {
	return func(id string) (string, bool) { p, ok := m[id]; return p, ok }
}

func TestParseV3AndRenderUnchanged(t *testing.T) {
	n, err := Parse("errors/practice-wrap-errors-with-context.md", []byte(v3Leaf))
	if err != nil {
		t.Fatal(err)
	}
	if n.Format != 3 || n.ID != "practice-wrap-errors-with-context" || n.Description != "Always wrap: add the operation and the path" {
		t.Fatalf("parsed %+v", n)
	}
	if v, ok := n.Extra("x_custom"); !ok || v != "keep me" {
		t.Fatalf("unknown key lost: %v", v)
	}
	out, err := n.Render(resolver(map[string]string{"map-error-types": "errors/map-error-types.md"}))
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != v3Leaf {
		t.Fatalf("unchanged leaf did not round-trip:\n%s", out)
	}
}

func TestRenderChangedKeepsOtherKeysVerbatim(t *testing.T) {
	n, err := Parse("errors/practice-wrap-errors-with-context.md", []byte(v3Leaf))
	if err != nil {
		t.Fatal(err)
	}
	n.Tags = append(n.Tags, "style")
	n.Status = "stable"
	out, err := n.Render(resolver(map[string]string{"map-error-types": "errors/map-error-types.md"}))
	if err != nil {
		t.Fatal(err)
	}
	s := string(out)
	for _, want := range []string{
		"description: 'Always wrap: add the operation and the path'\n",
		"tags:\n  - errors\n  - go\n  - style\nstatus: stable\nkk_schema_version: 3\n",
		"x_custom: keep me   # unknown key with a comment\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("missing %q in\n%s", want, s)
		}
	}
}

func TestRenderMovesRelatedLinks(t *testing.T) {
	n, err := Parse("errors/practice-wrap-errors-with-context.md", []byte(v3Leaf))
	if err != nil {
		t.Fatal(err)
	}
	out, err := n.Render(resolver(map[string]string{"map-error-types": "reference/map-error-types.md"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), "- Related: [map-error-types](/reference/map-error-types.md)\n") {
		t.Fatalf("related link not updated:\n%s", out)
	}
	if strings.Count(string(out), RelatedStart) != 1 {
		t.Fatal("related block duplicated")
	}
}

func TestNewLeafMatchesKenkeepLayout(t *testing.T) {
	n := &Node{Path: "practice-use-x.md", Format: 3, Type: "practice", Title: "Use X", ID: "practice-use-x",
		Description: "Use the messenger service for status, warning, and error notices; use logging for backend diagnostics.",
		Tags:        []string{"a"}, Confidence: "high", Body: []byte("Body\n\n\n"), DependsOn: []string{"map-y"}}
	out, err := n.Render(nil)
	if err != nil {
		t.Fatal(err)
	}
	want := `---
type: practice
title: Use X
description: >-
  Use the messenger service for status, warning, and error notices; use logging
  for backend diagnostics.
tags:
  - a
kk_schema_version: 3
kk_id: practice-use-x
kk_derived_from: []
kk_relates_to: []
kk_depends_on:
  - map-y
kk_confidence: high
---
Body

<!-- kk:related:start -->
# Related

- Depends on: [map-y](/map-y.md)
<!-- kk:related:end -->
`
	if string(out) != want {
		t.Fatalf("got\n%s\nwant\n%s", out, want)
	}
	// Rendering the output again is stable.
	again, err := Parse(n.Path, out)
	if err != nil {
		t.Fatal(err)
	}
	out2, err := again.Render(nil)
	if err != nil || string(out2) != string(out) {
		t.Fatalf("second render differs: %v\n%s", err, out2)
	}
}

func TestParseV2(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "..", "shared", "fixtures", "kenkeep-pack-drupal", "knowledge", "presentation", "frontend-theme", "practice-use-messenger-for-user-facing-flash-notices.md"))
	if err != nil {
		t.Fatalf("the Drupal pack fixture is missing (the tests need shared/ beside the repository, as CI has it): %v", err)
	}
	n, err := Parse("x.md", src)
	if err != nil {
		t.Fatal(err)
	}
	if n.Format != 2 || n.Type != "practice" || n.ID != "practice-use-messenger-for-user-facing-flash-notices" || len(n.RelatesTo) != 3 || !strings.HasPrefix(n.Description, "Use the messenger service") {
		t.Fatalf("v2 parse: %+v", n)
	}
}

func TestParseErrors(t *testing.T) {
	base := "---\ntype: practice\ntitle: T\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-t\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n"
	tests := []struct {
		name, src, field, msg string
	}{
		{"missing title", strings.Replace(base, "title: T\n", "", 1), "title", "is required"},
		{"tags not a list", strings.Replace(base, "tags: []", "tags: x", 1), "tags", "must be a list"},
		{"bad confidence", strings.Replace(base, "kk_confidence: high", "kk_confidence: sure", 1), "kk_confidence", "use one of"},
		{"wrong version", strings.Replace(base, "kk_schema_version: 3", "kk_schema_version: 4", 1), "kk_schema_version", "is 4"},
		{"malformed yaml", strings.Replace(base, "title: T", "title: [T", 1), "", "invalid YAML"},
		{"no front matter", "just text\n", "", "no front matter"},
		{"v1 leaf", "---\nschema_version: 1\nid: practice-x\n---\n", "schema_version", "kk-migrate"},
		{"bad status", strings.Replace(base, "tags: []", "tags: []\nstatus: done", 1), "status", "use one of"},
		{"bad stale_after", strings.Replace(base, "tags: []", "tags: []\nstale_after: soon", 1), "stale_after", "date"},
		{"bad type", strings.Replace(base, "type: practice", "type: Practice!", 1), "type", "not a valid type"},
		{"non utf8", base + "\xff\xfe", "", "UTF-8"},
		{"too big", base + strings.Repeat("x", MaxSize), "", "limit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f/practice-t.md", []byte(tt.src))
			var ne *Error
			if !errors.As(err, &ne) {
				t.Fatalf("err = %v, want *node.Error", err)
			}
			if ne.Path != "f/practice-t.md" || ne.Field != tt.field || !strings.Contains(ne.Msg, tt.msg) {
				t.Fatalf("got path=%q field=%q msg=%q", ne.Path, ne.Field, ne.Msg)
			}
		})
	}
}

func TestIDs(t *testing.T) {
	for in, want := range map[string]string{
		"Héllo, Wörld!!": "h-llo-w-rld", "": "untitled", "---": "untitled", "Use HTTP/2 retries": "use-http-2-retries",
	} {
		if got := Slugify(in); got != want {
			t.Errorf("Slugify(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range [][3]string{
		{"practice", "foo", "practice-foo"},
		{"practice", "practice-foo", "practice-foo"},
		{"practice", "Practice Foo", "practice-foo"},
		{"map", "practice-foo", "map-practice-foo"},
		{"practice", "practice", "practice-practice"},
		{"practice", "Café au lait", "practice-cafe-au-lait"},
		{"map", "Ærø Straße Øst", "map-aero-strasse-ost"},
		{"practice", "ﬁle ２", "practice-file-2"}, // compatibility forms
		{"practice", "untitled", "practice-untitled"},
	} {
		if got, err := DeriveID(c[0], c[1]); err != nil || got != c[2] {
			t.Errorf("DeriveID(%q, %q) = %q, %v; want %q", c[0], c[1], got, err, c[2])
		}
	}
	// No letter is ever dropped: a title whose letters have no ASCII
	// spelling is refused, not turned into "untitled" or into the id of
	// another title.
	for _, title := range []string{"日本語", "API 日本", "Ελλάδα", "!!!", ""} {
		if got, err := DeriveID("practice", title); err == nil {
			t.Errorf("DeriveID(practice, %q) = %q, want an error", title, got)
		}
	}
	taken := map[string]bool{"a": true, "a-2": true}
	if id, err := UniqueID(func(s string) bool { return taken[s] }, "a"); err != nil || id != "a-3" {
		t.Errorf("UniqueID = %q, %v", id, err)
	}
	taken["a-3"], taken["a-4"] = true, true
	if _, err := UniqueID(func(s string) bool { return taken[s] }, "a"); err == nil {
		t.Error("UniqueID with all variants taken succeeded")
	}
	if msg := CheckNaming("practice", "practice-x", "d/practice-x.md"); msg != "" {
		t.Error(msg)
	}
	for _, c := range [][3]string{{"practice", "map-x", "x.md"}, {"practice", "practice-X", "practice-X.md"}, {"practice", "practice-x", "practice-y.md"}} {
		if CheckNaming(c[0], c[1], c[2]) == "" {
			t.Errorf("CheckNaming%v passed", c)
		}
	}
}

// TestCheckNamingSuggestsSlug: the id lint expects for a hand-written
// non-canonical id is the one kk node write derives (Slug), accents
// taken off, never one with letters dropped.
func TestCheckNamingSuggestsSlug(t *testing.T) {
	for id, want := range map[string]string{
		"practice-café":     "expected practice-cafe",
		"practice-Straße_X": "expected practice-strasse-x",
		"practice-日本":       "no ASCII spelling",
		"map-Foo Bar":       "expected map-foo-bar",
	} {
		msg := CheckNaming(strings.SplitN(id, "-", 2)[0], id, id+".md")
		if !strings.Contains(msg, want) {
			t.Errorf("CheckNaming(%q) = %q; want it to hold %q", id, msg, want)
		}
	}
}

func TestCleanFolder(t *testing.T) {
	ok := map[string]string{"": "", ".": "", "a/b": "a/b", "a//b/": "a/b", "./a": "a", `a\b`: "a/b"}
	for in, want := range ok {
		if got, err := CleanFolder(in); err != nil || got != want {
			t.Errorf("CleanFolder(%q) = %q, %v", in, got, err)
		}
	}
	for _, bad := range []string{"../x", "a/../../x", "a/..", "/abs", "C:/x", ".hidden", "a/.git", "caf\xe9", "ok/caf\xe9"} {
		if _, err := CleanFolder(bad); err == nil {
			t.Errorf("CleanFolder(%q) accepted", bad)
		}
	}
	// A folder name longer than a file system takes failed later, as
	// "lstat …: file name too long".
	long := "a/" + strings.Repeat("b", 256)
	if _, err := CleanFolder(long); err == nil || !strings.Contains(err.Error(), "256 bytes") {
		t.Errorf("CleanFolder(%q) = %v", long, err)
	}
	if got, err := CleanFolder(strings.Repeat("ü", 127)); err != nil || got != strings.Repeat("ü", 127) {
		t.Errorf("a 254-byte name: %q, %v", got, err)
	}
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(v3Leaf))
	f.Add([]byte("---\nschema_version: 2\nid: map-x\ntitle: X\nkind: map\nsummary: s\nconfidence: low\n---\nbody"))
	f.Add([]byte("---\ntype: practice\n---\n"))
	f.Add([]byte("---\nkk_schema_version: 3\ntags: {a: 1}\n---\n"))
	f.Fuzz(func(t *testing.T, src []byte) {
		n, err := Parse("f.md", src)
		if err != nil {
			var ne *Error
			if !errors.As(err, &ne) {
				t.Fatalf("error is not a *node.Error: %v", err)
			}
			return
		}
		if n.Format != 2 && n.Format != 3 {
			t.Fatalf("format %d", n.Format)
		}
	})
}

func TestEscapeLabel(t *testing.T) {
	for in, want := range map[string]string{
		"plain text":            "plain text",
		"  padded\t\ntext  ":    "padded text",
		"a [b] `c` \\d":         `a \[b\] \` + "`c\\` \\\\d",
		"tab\there":             "tab here",
		"nbsp\u00a0\u2003space": "nbsp space",
		"":                      "",
		"   ":                   "",
	} {
		if got := EscapeLabel(in); got != want {
			t.Errorf("EscapeLabel(%q) = %q, want %q", in, got, want)
		}
	}
}

// A note written by hand with only a type and a title is not a leaf yet;
// one read names every key it lacks, not the first one only.
func TestParseNamesEveryProblemAtOnce(t *testing.T) {
	_, err := Parse("go/ctx.md", []byte("---\ntype: practice\ntitle: Use context timeouts\n---\nAlways pass a context with a timeout.\n"))
	var ne *Error
	if !errors.As(err, &ne) {
		t.Fatalf("want a *node.Error, got %v", err)
	}
	var fields []string
	for _, p := range ne.Problems() {
		fields = append(fields, p.Field)
	}
	want := []string{KeySchemaVersion, KeyDescription, KeyTags, KeyID, KeyDerivedFrom, KeyRelatesTo, KeyConfidence}
	if strings.Join(fields, " ") != strings.Join(want, " ") {
		t.Fatalf("problems of fields %v, want %v (%v)", fields, want, err)
	}
	for _, f := range want {
		if !strings.Contains(err.Error(), `"`+f+`"`) {
			t.Errorf("the message does not name %s: %v", f, err)
		}
	}
	if !strings.HasPrefix(err.Error(), "go/ctx.md: ") {
		t.Errorf("the message does not start with the path: %v", err)
	}
	// A leaf that names its id claims it even when it cannot be read.
	_, err = Parse("x.md", []byte("---\ntype: practice\ntitle: X\nkk_id: practice-x\n---\n"))
	if !errors.As(err, &ne) || ne.ID != "practice-x" {
		t.Fatalf("want the claimed id practice-x, got %+v", err)
	}
}

func TestConflictMarkers(t *testing.T) {
	conflicted := "---\ntype: practice\n<<<<<<< HEAD\ntitle: A\n=======\ntitle: B\n>>>>>>> other\n---\nbody\n"
	_, err := Parse("x.md", []byte(conflicted))
	var ne *Error
	if !errors.As(err, &ne) || !strings.HasPrefix(ne.Msg, ConflictMarkersMsg+" (lines 3 to 7)") {
		t.Fatalf("got %v", err)
	}
	for name, src := range map[string]string{
		"fenced": "```\n<<<<<<< HEAD\na\n=======\nb\n>>>>>>> x\n```\n",
		"tilde":  "~~~text\n<<<<<<< HEAD\n>>>>>>> x\n~~~\n",
		"inline": "a line with <<<<<<< in it\n>>>>>>>> eight\n",
		"alone":  "<<<<<<< HEAD\nno end\n",
	} {
		if from, to := ConflictMarkers([]byte(src)); from != 0 {
			t.Errorf("%s: markers found at %d-%d", name, from, to)
		}
	}
	if from, to := ConflictMarkers([]byte("x\r\n<<<<<<<\r\n=======\r\n>>>>>>> b\r\n")); from != 2 || to != 4 {
		t.Errorf("CRLF: %d-%d", from, to)
	}
	// git writes longer markers for a conflict inside a conflict (a note
	// renamed on both sides): eight here, in the body.
	renamed := "---\ntype: practice\ntitle: A\n---\n<<<<<<<< HEAD:nodes/practice-charlie.md\ncharlie body\n========\nbravo body\n>>>>>>>> b1:nodes/practice-bravo.md\n"
	if from, to := ConflictMarkers([]byte(renamed)); from != 5 || to != 9 {
		t.Errorf("eight-character markers: %d-%d, want 5-9", from, to)
	}
	if _, err := Parse("x.md", []byte(renamed)); !errors.As(err, &ne) || !strings.HasPrefix(ne.Msg, ConflictMarkersMsg) {
		t.Errorf("a body with eight-character markers parses: %v", err)
	}
}

// A leaf checked out with CRLF line endings (git's core.autocrlf) reads
// as the same leaf: its fields and its body's size are the LF leaf's.
func TestParseCRLFLeafMeasuresAsLF(t *testing.T) {
	lf, err := Parse("p.md", []byte(v3Leaf))
	if err != nil {
		t.Fatal(err)
	}
	crlf, err := Parse("p.md", []byte(strings.ReplaceAll(v3Leaf, "\n", "\r\n")))
	if err != nil {
		t.Fatal(err)
	}
	if lf.BodySize == 0 || crlf.BodySize != lf.BodySize {
		t.Errorf("BodySize: CRLF %d, LF %d", crlf.BodySize, lf.BodySize)
	}
	if crlf.Title != lf.Title || crlf.Description != lf.Description || strings.Join(crlf.Tags, ",") != strings.Join(lf.Tags, ",") || crlf.ID != lf.ID {
		t.Errorf("CRLF leaf reads as %q %q %v %q, LF as %q %q %v %q", crlf.Title, crlf.Description, crlf.Tags, crlf.ID, lf.Title, lf.Description, lf.Tags, lf.ID)
	}
}

// An entity id is its file name: "index" (in any case) would be the
// folder's generated index.md, which kk does not overwrite (the write
// failed as an INTERNAL_ERROR) and which a case-insensitive checkout
// (macOS, Windows) cannot hold beside INDEX.md.
func TestCheckIDRefusesIndex(t *testing.T) {
	for _, id := range []string{"index", "INDEX", "Index"} {
		if err := CheckID(id); err == nil || !strings.Contains(err.Error(), "index.md") {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
	for _, id := range []string{"REQ-1", "index-2", "reindex", "indexes"} {
		if err := CheckID(id); err != nil {
			t.Errorf("CheckID(%q) = %v", id, err)
		}
	}
}

func TestMakeableFolder(t *testing.T) {
	for in, want := range map[string]string{
		"":                   "",
		"ok/fine":            "ok/fine",
		"Meeting Notes":      "Meeting-Notes",
		"a/with  two spaces": "a/with-two-spaces",
		"con":                "con-notes",
		"x/AUX.d":            "x/AUX-notes.d",
		"old.":               "old",
		"über café/x":        "über-café/x",
		"caf\xe9/x":          "caf-/x",
		"a:b/what?":          "a-b/what-",
	} {
		got := MakeableFolder(in)
		if got != want {
			t.Errorf("MakeableFolder(%q) = %q, want %q", in, got, want)
		}
		for _, seg := range strings.Split(got, "/") {
			if got != "" && NameProblem(seg) != "" {
				t.Errorf("MakeableFolder(%q) = %q: %s", in, got, NameProblem(seg))
			}
		}
	}
}

// An id with white space or a quote mark at its start or end (a hand edit
// inside YAML's quotes) is a problem of the leaf, and the error claims the
// id it was meant to be; white space inside YAML's plain style is YAML's.
func TestParsePaddedID(t *testing.T) {
	const rel = "errors/practice-wrap-errors-with-context.md"
	for _, id := range []string{`"practice-wrap-errors-with-context "`, `" practice-wrap-errors-with-context"`,
		`practice-wrap-errors-with-context"`, `"'practice-wrap-errors-with-context'"`, "\"practice-wrap-errors-with-context\\t\""} {
		src := strings.Replace(v3Leaf, "kk_id: practice-wrap-errors-with-context\n", "kk_id: "+id+"\n", 1)
		_, err := Parse(rel, []byte(src))
		var ne *Error
		if !errors.As(err, &ne) || ne.Field != KeyID || ne.ID != "practice-wrap-errors-with-context" ||
			!strings.Contains(ne.Msg, "white space or a quote mark at its start or end; write practice-wrap-errors-with-context") {
			t.Errorf("kk_id: %s: got %v (%#v)", id, err, ne)
		}
	}
	src := strings.Replace(v3Leaf, "kk_id: practice-wrap-errors-with-context\n", "kk_id: practice-wrap-errors-with-context   \n", 1)
	if n, err := Parse(rel, []byte(src)); err != nil || n.ID != "practice-wrap-errors-with-context" {
		t.Fatalf("plain id with trailing blanks: %v", err)
	}
}
