package node

import (
	"fmt"
	"path"
	"regexp"
	"strings"
)

// Markers around the generated sections of a leaf body.
const (
	RelatedStart   = "<!-- kk:related:start -->"
	RelatedEnd     = "<!-- kk:related:end -->"
	CitationsStart = "<!-- kk:citations:start -->"
	CitationsEnd   = "<!-- kk:citations:end -->"
)

var (
	relatedBlock   = regexp.MustCompile(`\n*` + regexp.QuoteMeta(RelatedStart) + `[\s\S]*?` + regexp.QuoteMeta(RelatedEnd) + `\n*`)
	citationsBlock = regexp.MustCompile(`\n*` + regexp.QuoteMeta(CitationsStart) + `[\s\S]*?` + regexp.QuoteMeta(CitationsEnd) + `\n*`)
)

// EscapeLabel makes text safe inside a markdown link label: whitespace runs
// collapse to one space, the ends are trimmed, and \ ` [ ] are escaped.
func EscapeLabel(text string) string {
	clean := true
	for i := 0; i < len(text); i++ {
		c := text[i]
		if c >= 0x80 || c == '\\' || c == '`' || c == '[' || c == ']' || c < 0x21 && (c != ' ' || i == 0 || i == len(text)-1 || text[i+1] == ' ') {
			clean = false
			break
		}
	}
	if clean {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	space := false
	for _, r := range text {
		if isJSSpace(r) {
			space = b.Len() > 0
			continue
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if r == '\\' || r == '`' || r == '[' || r == ']' {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// RelatedSection renders the Related block for n's edges, or "" when it
// has none. Links point at the target's current path under nodes/.
func RelatedSection(n *Node, resolve Resolver) string {
	var lines []string
	add := func(label, id string) {
		href := "/" + id + ".md"
		if resolve != nil {
			if p, ok := resolve(id); ok {
				href = "/" + strings.TrimLeft(path.Clean(p), "/")
			}
		}
		lines = append(lines, fmt.Sprintf("- %s: [%s](%s)", label, EscapeLabel(id), href))
	}
	for _, id := range n.RelatesTo {
		add("Related", id)
	}
	for _, id := range n.DependsOn {
		add("Depends on", id)
	}
	if len(lines) == 0 {
		return ""
	}
	return RelatedStart + "\n# Related\n\n" + strings.Join(lines, "\n") + "\n" + RelatedEnd
}

// CitationsSection renders the Citations block for n's provenance, or "".
func CitationsSection(n *Node) string {
	if len(n.DerivedFrom) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(CitationsStart + "\n# Citations\n\n")
	for i, ref := range n.DerivedFrom {
		fmt.Fprintf(&b, "[%d] [%s](%s)\n", i+1, EscapeLabel(ref), ref)
	}
	b.WriteString(CitationsEnd)
	return b.String()
}

// RenderSections returns body with its Related and Citations blocks
// replaced (or appended) to match n. The result has no trailing whitespace.
func RenderSections(body string, n *Node, resolve Resolver) string {
	body = splice(body, relatedBlock, RelatedSection(n, resolve))
	return splice(body, citationsBlock, CitationsSection(n))
}

func splice(body string, block *regexp.Regexp, rendered string) string {
	if loc := block.FindStringIndex(body); loc != nil {
		repl := "\n"
		if rendered != "" {
			repl = "\n\n" + rendered + "\n"
		}
		return strings.TrimRightFunc(body[:loc[0]]+repl+body[loc[1]:], isJSSpace)
	}
	if rendered == "" {
		return strings.TrimRightFunc(body, isJSSpace)
	}
	return strings.TrimRightFunc(body, isJSSpace) + "\n\n" + rendered
}

// HasUnmarkedSections reports whether body has a "# Related" or
// "# Citations" heading outside the generated blocks; migration reports
// such leaves because the generated block would repeat the heading.
func HasUnmarkedSections(body string) []string {
	stripped := citationsBlock.ReplaceAllString(relatedBlock.ReplaceAllString(body, "\n"), "\n")
	var found []string
	for _, line := range strings.Split(stripped, "\n") {
		switch strings.TrimRight(line, " \t\r") {
		case "# Related":
			found = append(found, "# Related")
		case "# Citations":
			found = append(found, "# Citations")
		}
	}
	return found
}
