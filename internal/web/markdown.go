package web

import (
	"bytes"
	"html/template"
	"net/url"
	"path"
	"strings"
	"sync"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// A leaf's body is rendered with goldmark (CommonMark and the GitHub
// tables, strikethrough, autolinks and task lists) in its safe mode, which
// leaves out raw HTML, plus a link policy: a link is kept only when it is
// http or https, a fragment, or a relative link to another leaf or folder
// index of the tree (rewritten to this page's routes); any other link
// (javascript:, data:, mailto:, a file outside nodes/) keeps its text and
// loses its target. Images are never loaded (the page works offline and
// fetches nothing a leaf names): an image becomes a link to its source,
// under the same policy, with its alternative text.

// linkBase tells the link policy where the leaf being rendered lives.
type linkBase struct {
	prefix string // the handler's mount prefix
	dir    string // the leaf's folder, relative to nodes/ ("" for nodes/)
}

var linkBaseKey = parser.NewContextKey()

// markdown is built on the first page, not at start-up: every kk process
// links this package, and kk hook session-start has a 15 ms budget.
var markdown = sync.OnceValue(func() goldmark.Markdown {
	return goldmark.New(
		goldmark.WithExtensions(extension.Table, extension.Strikethrough, extension.Linkify, extension.TaskList),
		goldmark.WithParserOptions(parser.WithASTTransformers(util.Prioritized(linkPolicy{}, 1000))),
	)
})

// renderMarkdown renders a leaf body (the leaf in folder dir of nodes/)
// as HTML that is safe to put in a page.
func renderMarkdown(body, prefix, dir string) (template.HTML, error) {
	ctx := parser.NewContext()
	ctx.Set(linkBaseKey, linkBase{prefix: prefix, dir: dir})
	var buf bytes.Buffer
	if err := markdown().Convert([]byte(body), &buf, parser.WithContext(ctx)); err != nil {
		return "", err
	}
	// goldmark in its safe mode escapes every text and attribute and
	// leaves out raw HTML; the link policy below vets every target.
	return template.HTML(buf.String()), nil
}

type linkPolicy struct{}

// Transform applies the link policy to every link, autolink and image of
// the document.
func (linkPolicy) Transform(doc *ast.Document, reader text.Reader, pc parser.Context) {
	base, _ := pc.Get(linkBaseKey).(linkBase)
	source := reader.Source()
	var found []ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n.(type) {
			case *ast.Link, *ast.AutoLink, *ast.Image:
				found = append(found, n)
			}
		}
		return ast.WalkContinue, nil
	})
	for _, n := range found {
		parent := n.Parent()
		if parent == nil {
			continue
		}
		switch n := n.(type) {
		case *ast.Link:
			if dest, ok := base.target(n.Destination); ok {
				n.Destination = []byte(dest)
			} else {
				unwrap(n)
			}
		case *ast.Image:
			dest, ok := base.target(n.Destination)
			if !ok {
				unwrap(n)
				continue
			}
			link := ast.NewLink()
			link.Destination = []byte(dest)
			link.Title = n.Title
			for c := n.FirstChild(); c != nil; {
				next := c.NextSibling()
				link.AppendChild(link, c)
				c = next
			}
			if !link.HasChildren() {
				link.AppendChild(link, ast.NewString([]byte(path.Base(dest))))
			}
			parent.ReplaceChild(parent, n, link)
		case *ast.AutoLink:
			label := n.Label(source)
			if n.AutoLinkType == ast.AutoLinkURL {
				if dest, ok := base.target(n.URL(source)); ok && isWeb(dest) {
					link := ast.NewLink()
					link.Destination = []byte(dest)
					link.AppendChild(link, ast.NewString(append([]byte(nil), label...)))
					parent.ReplaceChild(parent, n, link)
					continue
				}
			}
			parent.ReplaceChild(parent, n, ast.NewString(append([]byte(nil), label...)))
		}
	}
}

// unwrap replaces n by its children.
func unwrap(n ast.Node) {
	parent := n.Parent()
	for c := n.FirstChild(); c != nil; {
		next := c.NextSibling()
		parent.InsertBefore(parent, n, c)
		c = next
	}
	parent.RemoveChild(parent, n)
}

func isWeb(dest string) bool {
	return strings.HasPrefix(dest, "http://") || strings.HasPrefix(dest, "https://")
}

// target decides where a link of a leaf in b.dir may go: an http or https
// URL as it is, a fragment as it is, a relative link to a leaf (.md) or a
// folder's index.md inside nodes/ as the page of that leaf or folder.
// Anything else is refused.
func (b linkBase) target(raw []byte) (string, bool) {
	// The renderer resolves entities and backslash escapes in a target;
	// decide on the text it would write.
	s := string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(raw))))
	s = strings.TrimSpace(s)
	if s == "" || strings.ContainsAny(s, "\\\x00") {
		return "", false
	}
	u, err := url.Parse(s)
	if err != nil {
		return "", false
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" || u.User != nil {
			return "", false
		}
		return u.String(), true
	case "":
	default:
		return "", false
	}
	if u.Host != "" || u.User != nil || strings.HasPrefix(s, "//") || u.RawQuery != "" || u.ForceQuery {
		return "", false
	}
	frag := ""
	if u.Fragment != "" {
		frag = "#" + url.PathEscape(u.Fragment)
	}
	if u.Path == "" {
		if frag == "" {
			return "", false
		}
		return frag, true
	}
	if strings.HasPrefix(u.Path, "/") {
		return "", false
	}
	p := path.Join(b.dir, u.Path)
	if p == ".." || strings.HasPrefix(p, "../") || !strings.HasSuffix(p, ".md") {
		return "", false
	}
	if path.Base(p) == "index.md" {
		return folderURL(b.prefix, path.Dir(p)), true
	}
	return leafURL(b.prefix, p) + frag, true
}
