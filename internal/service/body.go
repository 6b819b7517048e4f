package service

import (
	"strings"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
)

// NoteBody is the body a write's content gives its note: any front
// matter the content came with is dropped (the note gets kk's), and the
// line ends it starts with too. The HTTP face checks this body before it
// queues the write, and the worker writes it, so that a write accepted
// never fails later for what its body opens with.
func NoteBody(content string) string {
	if doc, err := frontmatter.Parse([]byte(content)); err == nil && doc.HasFrontMatter() {
		content = string(doc.Body())
	}
	return strings.TrimLeft(content, "\r\n")
}

// BodyProblem says what the note format refuses in the body content
// gives (NoteBody): one that still opens with a front matter block (one
// after blank lines, or a second after the dropped one) would give the
// leaf two. "" when nothing.
func BodyProblem(content string) string {
	return node.BodyFrontMatter(NoteBody(content))
}
