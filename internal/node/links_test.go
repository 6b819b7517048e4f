package node

import (
	"fmt"
	"slices"
	"testing"
)

func TestMarkdownLinks(t *testing.T) {
	body := "See [a](../a/x.md#usage \"title\") and [b](<b c/y.md>), [web](https://example.com/x.md),\n" +
		"[frag](#top), [pic](p.png), [esc](x\\).md) and [p](a(1).md).\n" +
		"```go\n[code](in/fence.md)\n```\n" +
		"~~~~\n[code](tilde.md)\n~~~\nstill code [x](still.md)\n~~~~\n" +
		"Inline `[x](span.md)` and ``[y](span2.md)`` and <!-- [c](comment.md)\n[d](comment2.md) --> [after](after.md)\n" +
		"   [ref]: /abs/ref.md \"t\"\n" +
		"[mail](mailto:x@y.md) [enc](my%20note.md)\n" +
		"<!-- kk:related:start -->\n# Related\n\n- Related: [map-y](/c/map-y.md)\n<!-- kk:related:end -->\n\n" +
		"<!-- kk:citations:start -->\n# Citations\n\n[1] [docs/x.md](docs/x.md)\n<!-- kk:citations:end -->\n"
	got := MarkdownLinks([]byte(body))
	type want struct {
		line      int
		path      string
		label     string
		generated bool
	}
	wants := []want{
		{1, "../a/x.md", "a", false},
		{1, "b c/y.md", "b", false},
		{2, "x).md", "esc", false},
		{2, "a(1).md", "p", false},
		{12, "after.md", "after", false},
		{13, "/abs/ref.md", "ref", false},
		{14, "my note.md", "enc", false},
		{18, "/c/map-y.md", "map-y", true},
	}
	if len(got) != len(wants) {
		t.Fatalf("got %d links, want %d: %+v", len(got), len(wants), got)
	}
	for i, w := range wants {
		g := got[i]
		if g.Line != w.line || g.Path != w.path || g.Label != w.label || g.Generated != w.generated {
			t.Errorf("link %d: got %+v, want %+v", i, g, w)
		}
	}
	// The span is the path as written: what a relink replaces.
	if s := body[got[0].Start:got[0].End]; s != "../a/x.md" {
		t.Errorf("span of the first link is %q", s)
	}
	if s := body[got[1].Start:got[1].End]; s != "b c/y.md" || !got[1].Angle {
		t.Errorf("span of the angle link is %q (angle %v)", s, got[1].Angle)
	}
	if s := body[got[6].Start:got[6].End]; s != "my%20note.md" {
		t.Errorf("span of the encoded link is %q", s)
	}
}

func TestMarkdownLinksCRLF(t *testing.T) {
	body := "[a](x.md)\r\n[ref]: y.md\r\n```\r\n[c](z.md)\r\n```\r\n"
	got := MarkdownLinks([]byte(body))
	if len(got) != 2 || got[0].Path != "x.md" || got[1].Path != "y.md" || got[1].Line != 2 {
		t.Fatalf("%+v", got)
	}
	if s := body[got[1].Start:got[1].End]; s != "y.md" {
		t.Errorf("span %q", s)
	}
}

func TestMarkdownLinksNone(t *testing.T) {
	for _, body := range []string{"", "no links here\n", "[x] [y]\n", "](x.md) alone\n"} {
		if got := MarkdownLinks([]byte(body)); len(got) > 1 {
			t.Errorf("%q: %+v", body, got)
		}
	}
}

func TestLinkTarget(t *testing.T) {
	cases := []struct {
		written, dir, to, want string
		angle                  bool
	}{
		{"../a/x.md", "c", "b/x.md", "../b/x.md", false},
		{"x.md", "a", "a/sub/x.md", "sub/x.md", false},
		{"x.md", "a/b", "x.md", "../../x.md", false},
		{"../x.md", "a", "a/x.md", "x.md", false},
		{"/a/x.md", "c/d", "b/x.md", "/b/x.md", false},
		{"x.md", "", "my dir/x.md", "my%20dir/x.md", false},
		{"x.md", "", "my dir/x.md", "my dir/x.md", true},
	}
	for _, c := range cases {
		if got := LinkTarget(Link{Path: c.written, Angle: c.angle}, c.dir, c.to); got != c.want {
			t.Errorf("LinkTarget(%q from %q to %q) = %q, want %q", c.written, c.dir, c.to, got, c.want)
		}
	}
}

// TestMarkdownLinksQuotedMarkers: a generated-block marker quoted in a
// sentence is text, as RenderSections takes it (TestRenderSectionsQuotedMarkers):
// a quoted Citations start marker hid every link after it from kk lint,
// and a quoted Related start marker made the links after it count as
// generated ones (a finding, not an error).
func TestMarkdownLinksQuotedMarkers(t *testing.T) {
	body := []byte("The block opens with `" + CitationsStart + "`.\nSee [a](a.md).\n" +
		"And `" + RelatedStart + "` opens the other.\nSee [b](b.md).\n\n" +
		RelatedStart + "\n# Related\n\n- Related: [c](/c.md)\n" + RelatedEnd + "\n\n" +
		CitationsStart + "\n# Citations\n\n[1] [docs/x.md](docs/x.md)\n" + CitationsEnd)
	var got []string
	for _, l := range MarkdownLinks(body) {
		got = append(got, fmt.Sprintf("%s:%v", l.Path, l.Generated))
	}
	if want := []string{"a.md:false", "b.md:false", "/c.md:true"}; !slices.Equal(got, want) {
		t.Fatalf("links: %v, want %v", got, want)
	}
}
