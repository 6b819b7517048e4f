package store

import (
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/node"
)

func TestResolveRedirect(t *testing.T) {
	r := Redirects{
		"a":     {"b"},
		"b":     {"c", "z-live", "gone"},
		"c":     {"y-live"},
		"loop1": {"loop2"},
		"loop2": {"loop1", "x-live"},
		"dead":  {"nowhere"},
		"self":  {"self"},
	}
	live := func(id string) bool { return strings.HasSuffix(id, "-live") }
	for _, c := range []struct {
		id   string
		want []string
	}{
		{"a", []string{"y-live", "z-live"}}, // two hops, sorted, dead ends dropped
		{"loop1", []string{"x-live"}},       // a cycle is followed once
		{"dead", nil},
		{"self", nil},
		{"unknown", nil},
		{"x-live", []string{"x-live"}}, // a live id stands for itself
	} {
		if got := ResolveRedirect(r, c.id, live); !slices.Equal(got, c.want) {
			t.Errorf("ResolveRedirect(%q) = %q, want %q", c.id, got, c.want)
		}
	}
}

func TestParseRedirects(t *testing.T) {
	r, err := ParseRedirects("ledger", []byte(`{"b": ["x", "y"], "a": []}`+"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(r) != 2 || !slices.Equal(r["b"], []string{"x", "y"}) || r["a"] == nil {
		t.Fatalf("parsed %#v", r)
	}
	for _, bad := range []string{`[]`, `null`, `{"a": "b"}`, `{"a": [1]}`, `{"a": [""]}`, `{`, `{} {}`} {
		if _, err := ParseRedirects("ledger", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "ledger: ") {
			t.Errorf("%s: err = %v", bad, err)
		}
	}
}

func TestRedirectsRender(t *testing.T) {
	r := Redirects{"practice-b": {"practice-b-2", "practice-b-1"}, "map-a": {"map-a-x"}, "e": {}, "q<\"": {"&"}}
	want := "{\n  \"e\": [],\n  \"map-a\": [\n    \"map-a-x\"\n  ],\n  \"practice-b\": [\n    \"practice-b-2\",\n    \"practice-b-1\"\n  ],\n  \"q<\\\"\": [\n    \"&\"\n  ]\n}\n"
	if got := string(r.Render()); got != want {
		t.Fatalf("render:\n%s\nwant\n%s", got, want)
	}
	if got := string(Redirects{}.Render()); got != "{}\n" {
		t.Fatalf("empty ledger renders %q", got)
	}
	back, err := ParseRedirects("x", r.Render())
	if err != nil || len(back) != len(r) {
		t.Fatalf("round trip: %v %v", back, err)
	}
}

func TestReadRedirectsMissingFile(t *testing.T) {
	k := New(t.TempDir())
	r, err := k.ReadRedirects()
	if err != nil || r == nil || len(r) != 0 {
		t.Fatalf("missing ledger: %v, %v", r, err)
	}
	if err := os.MkdirAll(k.NodesDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.RedirectsPath(), []byte(`{"a": 1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := k.ReadRedirects(); err == nil || !strings.Contains(err.Error(), ".ai/kenkeep/nodes/.redirects.json") {
		t.Fatalf("bad ledger: %v", err)
	}
}

func TestLinkResolver(t *testing.T) {
	tr := &Tree{byID: map[string]*node.Node{
		"map-b": {ID: "map-b", Path: "x/map-b.md"},
		"map-c": {ID: "map-c", Path: "map-c.md"},
	}}
	resolve := tr.LinkResolver(Redirects{"map-old": {"map-mid"}, "map-mid": {"map-c", "map-b"}})
	for _, c := range []struct {
		id, want string
		ok       bool
	}{
		{"map-b", "x/map-b.md", true},
		{"map-old", "x/map-b.md", true}, // the first live successor in id order
		{"map-gone", "", false},
	} {
		if got, ok := resolve(c.id); got != c.want || ok != c.ok {
			t.Errorf("resolve(%q) = %q, %v; want %q, %v", c.id, got, ok, c.want, c.ok)
		}
	}
}

// A ledger an editor saved with a UTF-8 byte order mark (Notepad, Visual
// Studio) is read as the JSON it holds: kk lint and kk doctor stopped on
// "invalid character 'ï' looking for beginning of value", which named
// nothing a person could see in the file.
func TestParseRedirectsWithByteOrderMark(t *testing.T) {
	r, err := ParseRedirects("nodes/.redirects.json", []byte("\xef\xbb\xbf{\n  \"a\": [\"b\"]\n}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r["a"], []string{"b"}) || len(r) != 1 {
		t.Errorf("ledger %v", r)
	}
	// Only one, in front: another is not JSON.
	if _, err := ParseRedirects("nodes/.redirects.json", []byte("{\"a\": [\"b\"]}\xef\xbb\xbf")); err == nil {
		t.Error("a BOM after the ledger was taken")
	}
}

// Ids are compared without regard to case (IDKey), the ledger's retired
// ids too: an edge typed PRACTICE-OLD to the id kk node rename retired as
// practice-old was dangling, since the ledger was looked up by the id as
// written; and Tree.IsLive missed a live leaf whose id has a capital
// (its index is by IDKey), so a ledger leading to practice-Retry led
// nowhere in kk lint.
func TestResolveRedirectIgnoresCase(t *testing.T) {
	r := Redirects{
		"practice-old": {"Practice-Mid"},
		"practice-mid": {"practice-Retry"},
	}
	tr := &Tree{byID: map[string]*node.Node{
		IDKey("practice-Retry"): {ID: "practice-Retry", Path: "f/practice-Retry.md"},
	}}
	for _, id := range []string{"practice-old", "PRACTICE-OLD", "Practice-Mid"} {
		if got := ResolveRedirect(r, id, tr.IsLive); !slices.Equal(got, []string{"practice-Retry"}) {
			t.Errorf("ResolveRedirect(%q) = %q, want [practice-Retry]", id, got)
		}
	}
	if !tr.IsLive("practice-retry") || !tr.IsLive("practice-Retry") {
		t.Errorf("IsLive misses practice-Retry")
	}
	if got, ok := tr.LinkResolver(r)("PRACTICE-OLD"); !ok || got != "f/practice-Retry.md" {
		t.Errorf("resolve(PRACTICE-OLD) = %q, %v", got, ok)
	}
}
