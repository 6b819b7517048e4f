package node

import (
	"errors"
	"path"
	"slices"
	"strings"
	"testing"
)

func TestAdopt(t *testing.T) {
	for _, c := range []struct {
		name, rel, src string
		wantPath       string
		wantFilled     []string // field:from
		wantIn         []string // in the rendered leaf
	}{
		{
			name: "the note of the issue", rel: "go/ctx.md",
			src:        "---\ntype: practice\ntitle: Use context timeouts\n---\nAlways pass a context with a timeout. It bounds the call.\n",
			wantPath:   "go/practice-use-context-timeouts.md",
			wantFilled: []string{"description:first sentence", "tags:default", "kk_derived_from:default", "kk_relates_to:default", "kk_depends_on:default", "kk_schema_version:default", "kk_confidence:default", "kk_id:title"},
			wantIn:     []string{"type: practice\ntitle: Use context timeouts\ndescription: Always pass a context with a timeout.\ntags: []\nkk_schema_version: 3\nkk_id: practice-use-context-timeouts\n", "\nAlways pass a context with a timeout. It bounds the call.\n"},
		},
		{
			name: "no front matter, a heading", rel: "map-billing.md",
			src:        "# Billing\n\n```\n# not a title\n```\nThe billing service lives in svc/billing.\n",
			wantPath:   "practice-billing.md",
			wantFilled: []string{"type:default", "title:title heading", "description:first sentence", "tags:default", "kk_derived_from:default", "kk_relates_to:default", "kk_depends_on:default", "kk_schema_version:default", "kk_confidence:default", "kk_id:title"},
			wantIn:     []string{"type: practice\ntitle: Billing\n", "kk_id: practice-billing\n", "# Billing\n\n```\n# not a title\n```\n"},
		},
		{
			name: "the file name is an id", rel: "x/map-billing.md",
			src:        "---\ntype: map\ntitle: The billing service\ntags: billing, payments\nowner: ana\n---\nbody\n",
			wantPath:   "x/map-billing.md",
			wantFilled: []string{"description:first sentence", "tags:comma list", "kk_derived_from:default", "kk_relates_to:default", "kk_depends_on:default", "kk_schema_version:default", "kk_confidence:default", "kk_id:file name"},
			wantIn:     []string{"tags:\n  - billing\n  - payments\n", "owner: ana\n"},
		},
	} {
		n, filled, err := Adopt(c.rel, []byte(c.src))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if n.Path != c.wantPath {
			t.Errorf("%s: path %s, want %s", c.name, n.Path, c.wantPath)
		}
		var got []string
		for _, f := range filled {
			got = append(got, f.Field+":"+f.From)
		}
		if !slices.Equal(got, c.wantFilled) {
			t.Errorf("%s: filled %v\nwant %v", c.name, got, c.wantFilled)
		}
		out, err := n.Render(nil)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		for _, w := range c.wantIn {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: the leaf lacks %q:\n%s", c.name, w, out)
			}
		}
		back, err := Parse(n.Path, out)
		if err != nil {
			t.Fatalf("%s: the adopted leaf does not read: %v\n%s", c.name, err, out)
		}
		if back.ID != n.ID || back.Title != n.Title {
			t.Errorf("%s: read back %s %q", c.name, back.ID, back.Title)
		}
	}
	for name, c := range map[string]struct{ src, want string }{
		"no title":    {"just some text\n", "no title"},
		"bad yaml":    {"---\ntitle: [\n---\n", "does not parse"},
		"conflict":    {"---\ntitle: A\n<<<<<<< HEAD\ntype: map\n=======\ntype: practice\n>>>>>>> b\n---\n", ConflictMarkersMsg},
		"valid":       {"---\ntype: practice\ntitle: X\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-x\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\n---\n", "valid leaf already"},
		"v2":          {"---\nschema_version: 2\nid: practice-x\ntitle: X\nkind: practice\n---\n", "v1 or v2"},
		"confidence":  {"---\ntitle: X\nkk_confidence: sure\n---\n", `"kk_confidence" is "sure"`},
		"list of map": {"---\ntitle: X\ntags:\n  - a: b\n---\n", `"tags": item 1 must be a string`},
		// A version in quotes said 'is 3; kk writes version 3', which
		// did not say what was wrong.
		"quoted version": {"---\ntitle: X\nkk_schema_version: \"3\"\n---\n", `field "kk_schema_version" is the string "3"; write the number 3, without quotes`},
		"old version":    {"---\ntitle: X\nkk_schema_version: 2\n---\n", `field "kk_schema_version" is 2; kk writes version 3`},
	} {
		_, _, err := Adopt("practice-x.md", []byte(c.src))
		var ae *AdoptError
		if !errors.As(err, &ae) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an AdoptError with %q", name, err, c.want)
		}
	}
}

func TestFirstSentence(t *testing.T) {
	for body, want := range map[string]string{
		"# H\n\nFirst one. Second.\n":               "First one.",
		"- a list\n\nProse\ncontinues here\n\nnext": "Prose continues here",
		"":                          "",
		"v1.2 is out. Then more":    "v1.2 is out.",
		strings.Repeat("word ", 40): strings.TrimSpace(strings.Repeat("word ", 28)) + "…",
	} {
		if got := firstSentence([]byte(body), 140); got != want {
			t.Errorf("%q: %q, want %q", body, got, want)
		}
	}
}

// A copy's id: its file name when that is a valid id for its type that is
// not taken, else from its type and title; it keeps its other keys.
func TestAdoptCopy(t *testing.T) {
	src := "---\ntype: practice\ntitle: Timeout policy\ndescription: d\ntags: []\nkk_schema_version: 3\nkk_id: practice-retry\nkk_derived_from: []\nkk_relates_to: []\nkk_confidence: high\nowner: ana\n---\nbody\n"
	taken := func(id string) bool { return id == "practice-retry" || id == "practice-held" }
	for rel, want := range map[string]string{
		"p/practice-timeout.md": "p/practice-timeout.md:file name",
		"p/practice-held.md":    "p/practice-timeout-policy.md:title",
		"p/practice-retry.md":   "p/practice-timeout-policy.md:title",
		"p/Copy of retry.md":    "p/practice-timeout-policy.md:title",
		"practice-Not-Canon.md": "practice-timeout-policy.md:title",
		"practice-timeout-x.md": "practice-timeout-x.md:file name",
	} {
		n, err := Parse(rel, []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		filled, err := AdoptCopy(n, taken)
		if err != nil {
			t.Fatalf("%s: %v", rel, err)
		}
		if got := n.Path + ":" + filled[0].From; got != want || filled[0].Was != "practice-retry" || filled[0].Field != KeyID || n.ID+".md" != path.Base(n.Path) {
			t.Errorf("%s: %s %+v, want %s", rel, got, filled, want)
		}
		out, err := n.Render(nil)
		if err != nil || !strings.Contains(string(out), "owner: ana\n") || !strings.Contains(string(out), "kk_id: "+n.ID+"\n") {
			t.Errorf("%s: %v\n%s", rel, err, out)
		}
	}
	n, _ := Parse("p/copy.md", []byte(strings.Replace(src, "title: Timeout policy", "title: '日本語'", 1)))
	if _, err := AdoptCopy(n, taken); err == nil || !strings.Contains(err.Error(), "no id can be made from the title") {
		t.Errorf("a title no id is made from: %v", err)
	}
}
