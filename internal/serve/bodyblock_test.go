package serve

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/httpapi"
)

// A write whose content, once kk has dropped the front matter it came
// with and the line ends it starts with, still opens with a front matter
// block is refused at once (400, naming the content and the block's
// keys), and nothing is queued: such a body would give the leaf a second
// block, which the note format refuses. Found by the serve10 red team: a
// post of "\n\n---\nkk_version: 99\n---\n…" (blank lines before the
// block, so it is not the content's front matter) was accepted with 202
// and its job failed later, as did a post of two blocks in a row and an
// edit of such content.
func TestContentOpeningWithASecondFrontMatterBlockIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "Target", Content: "The text.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, c := range []struct{ method, body string }{
		{"POST", `{"title":"Blank lines first","content":"\n\n---\nkk_version: 99\n---\n\nbody\n"}`},
		{"POST", `{"title":"CRLF first","content":"\r\n---\r\nkk_id: x\r\n---\r\nbody\r\n"}`},
		{"POST", `{"title":"Two blocks","content":"---\ntitle: dropped\n---\n---\nkk_id: planted\n---\nbody\n"}`},
		{"PUT", `{"path":"` + j.Path + `","content":"\n---\nkk_version: 99\n---\nbody\n"}`},
		{"PUT", `{"path":"` + j.Path + `","content":"---\ntitle: dropped\n---\n\n---\ntype: x\n---\nbody\n"}`},
	} {
		code, msg := postRaw(t, c.method, s.URL, c.body)
		if code != http.StatusBadRequest || !strings.Contains(msg, "content: ") || !strings.Contains(msg, "front matter block of its own") {
			t.Errorf("%s %s: %d %q", c.method, c.body, code, msg)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	// A thematic break (---) with no keys after it is text, and so is a
	// block further down the body.
	for i, content := range []string{"\n\n---\n\nAfter a rule.\n", "Text first.\n\n---\nkey: v\n---\n"} {
		j := s.post(t, httpapi.PostRequest{Title: fmt.Sprintf("Kept %d", i), Content: content})
		if j.Status != "done" {
			t.Errorf("post of %q: %+v", content, j)
		}
	}
}

// An edit whose content is front matter alone is refused (400), as a
// post of it is, and nothing is queued: kk drops the front matter a
// write's content starts with, so the edit emptied the note's body.
// Found by the serve10 red team: PUT {"path":…,"content":"---\ntitle:
// x\n---\n"} was done, leaving the note with no text (a client that meant
// to change the title lost the body). A metadata-only edit gives no
// content.
func TestEditOfFrontMatterOnlyIs400(t *testing.T) {
	k := newRepo(t, 0)
	s := start(t, k, nil)
	j := s.post(t, httpapi.PostRequest{Title: "Target", Content: "The text.\n"})
	if j.Status != "done" {
		t.Fatalf("post: %+v", j)
	}
	queueDir := filepath.Join(k.StateDir(), "queue")
	before := listDir(t, queueDir)
	for _, content := range []string{"---\\ntitle: x\\n---\\n", "---\\ntitle: x\\n---\\n\\n  \\n"} {
		body := `{"path":"` + j.Path + `","content":"` + content + `"}`
		code, msg := postRaw(t, "PUT", s.URL, body)
		if code != http.StatusBadRequest || !strings.Contains(msg, "content must not be empty: it holds only front matter") {
			t.Errorf("PUT %s: %d %q", body, code, msg)
		}
	}
	if after := listDir(t, queueDir); !slices.Equal(after, before) {
		t.Errorf("the queue's folder was %v before, %v after", before, after)
	}
	// The title as a field, with no content, keeps the text.
	e := s.edit(t, httpapi.EditRequest{Path: j.Path, Title: "Retitled"})
	if e.Status != "done" {
		t.Fatalf("edit: %+v", e)
	}
	got, err := s.Client.Get(context.Background(), j.Path)
	if err != nil || !strings.HasSuffix(got.Content, "\n---\nThe text.\n") {
		t.Errorf("the note after a metadata-only edit: %q %v", got.Content, err)
	}
}
