package serve

import (
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/httpapi"
	"github.com/kk-project/kk/internal/node"
)

// body returns the body of a note as GET /content answers it.
func body(t *testing.T, s *server, p string) string {
	t.Helper()
	doc, err := s.Client.Get(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	parts, err := frontmatter.Split([]byte(doc.Content))
	if err != nil || !parts.Has {
		t.Fatalf("GET %s: %v\n%s", p, err, doc.Content)
	}
	return string(parts.Body)
}

// TestBodyAsPosted: GET /content gives back a body exactly as it was
// posted or edited, whatever it ends with, while the leaf on disk stays
// in the format (its body ends with one line end) and reads and renders
// back to the same bytes.
func TestBodyAsPosted(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	for i, posted := range []string{
		"No final newline.",
		"One final newline.\n",
		"Two final newlines.\n\n",
		"Spaces at the end.  ",
		"CRLF lines.\r\nSecond.\r\n",
		"A tab\tat the end\t",
		"Unicode space at the end.\u00a0",
	} {
		title := strings.Fields(posted)[0] + " " + string(rune('a'+i))
		j := s.post(t, httpapi.PostRequest{Title: title, Content: posted})
		if j.Status != "done" {
			t.Fatalf("post %q: %+v", posted, j)
		}
		if got := body(t, s, j.Path); got != posted {
			t.Errorf("posted %q, got back %q", posted, got)
		}
		data, err := os.ReadFile(k.NodePath(j.Path))
		if err != nil {
			t.Fatal(err)
		}
		file := string(data)
		if !strings.HasSuffix(file, "\n") || strings.HasSuffix(file, "\n\n") || node.BodyEnd(strings.TrimSuffix(file, "\n")) != "" {
			t.Errorf("the leaf of %q does not end as the format has it: %q", posted, file[max(0, len(file)-30):])
		}
		n, err := node.Parse(j.Path, data)
		if err != nil {
			t.Fatalf("%s: %v", j.Path, err)
		}
		if out, err := n.Render(nil); err != nil || string(out) != file {
			t.Errorf("%s does not render back to its bytes: %v\n%q\n%q", j.Path, err, out, file)
		}
		if strings.Contains(file, keyBodyEnd) != (posted != strings.TrimRight(posted, " \t\r\n\u00a0")+"\n") {
			t.Errorf("%s: %s recorded for %q:\n%s", j.Path, keyBodyEnd, posted, file)
		}
	}

	// Edits: a new body is given back as sent; a metadata-only edit keeps
	// the body and how it ends.
	j := s.post(t, httpapi.PostRequest{Title: "Edited", Content: "First.\n"})
	for _, tc := range []struct {
		edit httpapi.EditRequest
		want string
	}{
		{httpapi.EditRequest{Content: "Second, no newline."}, "Second, no newline."},
		{httpapi.EditRequest{Description: "New description"}, "Second, no newline."},
		{httpapi.EditRequest{Content: "Third.\n"}, "Third.\n"},
		{httpapi.EditRequest{Content: "Fourth.\n\n\n"}, "Fourth.\n\n\n"},
	} {
		tc.edit.Path = j.Path
		if e := s.edit(t, tc.edit); e.Status != "done" {
			t.Fatalf("edit %+v: %+v", tc.edit, e)
		}
		if got := body(t, s, j.Path); got != tc.want {
			t.Errorf("after %+v: got back %q, want %q", tc.edit, got, tc.want)
		}
	}
	// Search answers give bodies back the same way.
	docs, err := s.Client.Search(ctx, "newline", 10)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if strings.Contains(d.Content, "No final newline.") && !strings.HasSuffix(d.Content, "\nNo final newline.") {
			t.Errorf("search answers %s ending %q", d.Path, d.Content[max(0, len(d.Content)-20):])
		}
	}
	clean(t, k)
}

func TestAsPosted(t *testing.T) {
	for _, tc := range []struct{ file, want string }{
		{"---\ntitle: x\n---\nX\n", "---\ntitle: x\n---\nX\n"},
		{"---\ntitle: x\nkk_body_end: ''\n---\nX\n", "---\ntitle: x\nkk_body_end: ''\n---\nX"},
		{"---\nkk_body_end: '\\n\\n'\ntitle: x\n---\nX\n", "---\nkk_body_end: '\\n\\n'\ntitle: x\n---\nX\n\n"},
		{"---\nkk_body_end: \"\\\\t\"\n---\nX\n", "---\nkk_body_end: \"\\\\t\"\n---\nX\t"},
		// Not what kk writes: the file is left as it is.
		{"---\nkk_body_end: 'text'\n---\nX\n", "---\nkk_body_end: 'text'\n---\nX\n"},
		{"---\nkk_body_end: '\\q'\n---\nX\n", "---\nkk_body_end: '\\q'\n---\nX\n"},
		{"---\nkk_body_end: [1]\n---\nX\n", "---\nkk_body_end: [1]\n---\nX\n"},
		{"no front matter, kk_body_end: ''\n", "no front matter, kk_body_end: ''\n"},
		{"---\ntitle: x\n---\nbody says kk_body_end: ''\n", "---\ntitle: x\n---\nbody says kk_body_end: ''\n"},
	} {
		if got := asPosted(tc.file); got != tc.want {
			t.Errorf("asPosted(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
}
