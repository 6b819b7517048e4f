package web

import (
	"regexp"
	"strings"

	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/kk-project/kk/internal/index"
)

// A search hit's snippet is a window of the leaf's markdown body, with
// the words that matched the query between index.SnippetOpen and
// index.SnippetClose. The page shows it as text: the markdown is read
// (so "**bold**", "`code`" and "[a link](x.md)" show as bold, code and
// a link would read, without their marks) and the matched words are
// highlighted, with no marker left in the text.

// snippetPart is a run of a snippet's text, matched (highlighted) or not.
type snippetPart struct {
	Text string `json:"text"`
	Mark bool   `json:"mark,omitempty"`
}

// Private-use runes stand for the markers while the markdown is read:
// they cannot be markdown syntax, and a leaf holding them is cleaned of
// them first.
const (
	markOpen  = '\uE000'
	markClose = '\uE001'
)

// snippetMark is a matched word as the index marks it: the markers around
// a run of letters, digits and underscores (the index's words) of two or
// more characters (its one-letter words are never terms, so "[x]" of a
// task list is never a mark).
var snippetMark = regexp.MustCompile(regexp.QuoteMeta(index.SnippetOpen) + `([_\pL\pN]{2,})` + regexp.QuoteMeta(index.SnippetClose))

// linkTarget is what follows "](" in a markdown link: a URL or a path
// (no space, and a character that makes it one) and the closing ")".
// "[Errorf](x)" where Errorf matched in "Errorf(x)" is a call, not a link.
var linkTarget = regexp.MustCompile(`^\(([^\s()]*[/.#:][^\s()]*|)\)`)

// snippetParts turns a hit's snippet into text runs, the matched words
// marked.
func snippetParts(s string) []snippetPart {
	s = strings.Map(func(r rune) rune {
		if r == markOpen || r == markClose {
			return -1
		}
		return r
	}, s)
	// Markers become the private runes, except where the brackets are a
	// markdown link around one word: "[word](x.md)".
	var b strings.Builder
	last := 0
	for _, m := range snippetMark.FindAllStringSubmatchIndex(s, -1) {
		if linkTarget.MatchString(s[m[1]:]) {
			continue
		}
		b.WriteString(s[last:m[0]])
		b.WriteRune(markOpen)
		b.WriteString(s[m[2]:m[3]])
		b.WriteRune(markClose)
		last = m[1]
	}
	b.WriteString(s[last:])
	plain := markdownText(dropUnclosed(b.String()))
	var parts []snippetPart
	add := func(t string, mark bool) {
		if t == "" {
			return
		}
		if n := len(parts); n > 0 && parts[n-1].Mark == mark {
			parts[n-1].Text += t
			return
		}
		parts = append(parts, snippetPart{Text: t, Mark: mark})
	}
	for {
		i := strings.IndexRune(plain, markOpen)
		if i < 0 {
			add(plain, false)
			return parts
		}
		add(plain[:i], false)
		plain = plain[i+len(string(markOpen)):]
		j := strings.IndexRune(plain, markClose)
		if j < 0 {
			add(plain, true)
			return parts
		}
		add(plain[:j], true)
		plain = plain[j+len(string(markClose)):]
	}
}

// dropUnclosed drops each "[" that no "]" closes: the index keeps a
// link's text and drops its "](target)", which leaves the "[" alone.
func dropUnclosed(s string) string {
	var open []int // byte offsets of the "[" not closed yet
	drop := map[int]bool{}
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			open = append(open, i)
		case ']':
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		}
	}
	if len(open) == 0 {
		return s
	}
	for _, i := range open {
		drop[i] = true
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if !drop[i] {
			b.WriteByte(s[i])
		}
	}
	return b.String()
}

// snippetText is a snippet as plain text, without markers or markdown.
func snippetText(parts []snippetPart) string {
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

// markdownText reads s as markdown and returns the text a reader sees:
// the text of paragraphs, headings, list items, emphasis, code spans and
// links (not their targets), raw HTML as the text it is, blocks joined by
// spaces. A heading mark inside the text (a window cut mid-document,
// with its line breaks folded) is dropped too.
func markdownText(s string) string {
	src := []byte(s)
	doc := markdown().Parser().Parse(text.NewReader(src))
	var b strings.Builder
	space := func() {
		if b.Len() > 0 && !strings.HasSuffix(b.String(), " ") {
			b.WriteByte(' ')
		}
	}
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if n.Type() == ast.TypeBlock {
			space()
		}
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Text:
			b.Write(n.Segment.Value(src))
			if n.SoftLineBreak() || n.HardLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(n.Value)
		case *ast.CodeSpan:
			for c := n.FirstChild(); c != nil; c = c.NextSibling() {
				if t, ok := c.(*ast.Text); ok {
					b.Write(t.Segment.Value(src))
				}
			}
			return ast.WalkSkipChildren, nil
		case *ast.AutoLink:
			b.Write(n.Label(src))
			return ast.WalkSkipChildren, nil
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				seg := n.Segments.At(i)
				b.Write(seg.Value(src))
			}
			return ast.WalkSkipChildren, nil
		case *ast.CodeBlock, *ast.FencedCodeBlock, *ast.HTMLBlock:
			lines := n.Lines()
			for i := 0; i < lines.Len(); i++ {
				seg := lines.At(i)
				b.Write(seg.Value(src))
			}
			if h, ok := n.(*ast.HTMLBlock); ok && h.HasClosure() {
				b.Write(h.ClosureLine.Value(src))
			}
			return ast.WalkSkipChildren, nil
		}
		return ast.WalkContinue, nil
	})
	words := strings.Fields(b.String())
	out := words[:0]
	for _, w := range words {
		if strings.Trim(w, "#") == "" && len(w) <= 6 {
			continue // a heading's mark
		}
		out = append(out, w)
	}
	return strings.Join(out, " ")
}
