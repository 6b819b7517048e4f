package node

import (
	"bytes"
	"net/url"
	"regexp"
	"strings"
)

// Link is a markdown link in a leaf body whose target is a local markdown
// file: a path relative to the leaf's folder, or one starting with "/"
// (bundle-absolute, relative to nodes/, as the generated Related block
// writes them).
type Link struct {
	Line int // 1-based line of the body the link is on
	// Start and End are the byte offsets in the body of the target's path
	// part as written (without a #fragment, a ?query or a title).
	Start, End int
	Path       string // the path part, percent-decoded
	Label      string // the link text ([label](…)), or the reference label
	Angle      bool   // the target is written in angle brackets (<…>)
	// Generated is a link of the generated Related block, which a write
	// of the leaf renders again from its edges.
	Generated bool
}

var (
	schemeRE = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
	refDefRE = regexp.MustCompile(`^ {0,3}\[((?:[^\]\\]|\\.)+)\]:[ \t]*`)
)

// MarkdownLinks returns the links of body to local .md files: inline links
// [text](target) and reference definitions [label]: target. Links in
// fenced code blocks, inline code spans, HTML comments and the generated
// Citations block (whose references are the leaf's kk_derived_from,
// relative to the repository root) are not links between leaves and are
// left out; so are URLs and fragment-only targets.
func MarkdownLinks(body []byte) []Link {
	if !bytes.Contains(body, []byte("](")) && !bytes.Contains(body, []byte("]:")) {
		return nil
	}
	var out []Link
	var fence []byte // the open code fence ("```" or "~~~", with its length)
	inComment, related, citations := false, false, false
	line := 0
	for off := 0; off < len(body); {
		end := bytes.IndexByte(body[off:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += off
		}
		raw := bytes.TrimSuffix(body[off:end], []byte("\r"))
		line++
		switch {
		case fence != nil:
			if t := bytes.TrimSpace(raw); bytes.HasPrefix(t, fence) && len(bytes.Trim(t, string(fence[:1]))) == 0 {
				fence = nil
			}
		case !inComment && isFence(raw) != nil:
			fence = isFence(raw)
		// A marker is a line holding only the marker (findBlock's rule):
		// one quoted in a sentence is text.
		case citations:
			citations = !bytes.Equal(bytes.TrimSpace(raw), citationsEndB)
		case !inComment && bytes.Equal(bytes.TrimSpace(raw), citationsStartB):
			citations = true
		case !inComment && bytes.Equal(bytes.TrimSpace(raw), relatedStartB):
			related = true
		case !inComment && bytes.Equal(bytes.TrimSpace(raw), relatedEndB):
			related = false
		case inComment || bytes.Contains(raw, []byte("<!--")) || bytes.Contains(raw, []byte("](")) || bytes.Contains(raw, []byte("]:")):
			masked := maskLine(raw, &inComment)
			out = append(out, lineLinks(masked, raw, off, line, related)...)
		}
		off = end + 1
	}
	return out
}

var (
	relatedStartB   = []byte(RelatedStart)
	relatedEndB     = []byte(RelatedEnd)
	citationsStartB = []byte(CitationsStart)
	citationsEndB   = []byte(CitationsEnd)
)

// isFence returns the fence a line opens (``` or ~~~ of its length, at
// most three spaces in), or nil.
func isFence(line []byte) []byte {
	s := bytes.TrimLeft(line, " ")
	if len(line)-len(s) > 3 || len(s) < 3 || (s[0] != '`' && s[0] != '~') {
		return nil
	}
	n := 0
	for n < len(s) && s[n] == s[0] {
		n++
	}
	if n < 3 {
		return nil
	}
	return s[:n]
}

// maskLine returns a copy of line with what cannot hold a link blanked
// out: inline code spans and HTML comments (which may span lines:
// inComment carries the state). Offsets are kept.
func maskLine(line []byte, inComment *bool) []byte {
	b := bytes.Clone(line)
	for i := 0; i < len(b); {
		if *inComment {
			j := bytes.Index(b[i:], []byte("-->"))
			if j < 0 {
				blank(b[i:])
				return b
			}
			blank(b[i : i+j+3])
			i += j + 3
			*inComment = false
			continue
		}
		switch {
		case bytes.HasPrefix(b[i:], []byte("<!--")):
			*inComment = true
		case b[i] == '`':
			n := 0
			for i+n < len(b) && b[i+n] == '`' {
				n++
			}
			j := bytes.Index(b[i+n:], bytes.Repeat([]byte("`"), n))
			if j < 0 {
				i += n
				continue
			}
			blank(b[i : i+n+j+n])
			i += n + j + n
		default:
			i++
		}
	}
	return b
}

func blank(b []byte) {
	for i := range b {
		b[i] = ' '
	}
}

// lineLinks finds the links on one line: masked is the line with code and
// comments blanked, raw the line as written, off its offset in the body.
func lineLinks(maskedB, rawB []byte, off, line int, generated bool) []Link {
	masked, raw := string(maskedB), string(rawB)
	var out []Link
	if t := strings.TrimLeft(masked, " "); strings.HasPrefix(t, "[") && strings.Contains(t, "]:") {
		m := refDefRE.FindStringSubmatchIndex(masked)
		if m == nil {
			return lineInline(masked, raw, off, line, generated)
		}
		if l, ok := target(raw, m[1], off, false); ok {
			l.Line, l.Label, l.Generated = line, raw[m[2]:m[3]], generated
			out = append(out, l)
		}
		return out
	}
	return lineInline(masked, raw, off, line, generated)
}

// lineInline finds the inline links [text](target) on one line.
func lineInline(masked, raw string, off, line int, generated bool) []Link {
	var out []Link
	for i := 0; ; {
		j := strings.Index(masked[i:], "](")
		if j < 0 {
			return out
		}
		j += i
		i = j + 2
		if j > 0 && masked[j-1] == '\\' {
			continue
		}
		l, ok := target(raw, j+2, off, true)
		if !ok {
			continue
		}
		l.Line, l.Label, l.Generated = line, linkLabel(masked, raw, j), generated
		out = append(out, l)
	}
}

// linkLabel returns the text of the link whose "]" is at close.
func linkLabel(masked, raw string, close int) string {
	depth := 0
	for i := close - 1; i >= 0; i-- {
		switch {
		case i > 0 && masked[i-1] == '\\':
		case masked[i] == ']':
			depth++
		case masked[i] == '[':
			if depth == 0 {
				return raw[i+1 : close]
			}
			depth--
		}
	}
	return ""
}

// target reads the link destination starting at i of line (after "](",
// or after a reference definition's colon) and returns it when it is a
// local .md path. inline says whether a ")" ends it.
func target(line string, i, off int, inline bool) (Link, bool) {
	for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
		i++
	}
	var start, end int
	angle := false
	if i < len(line) && line[i] == '<' {
		angle = true
		start = i + 1
		j := strings.IndexByte(line[start:], '>')
		if j < 0 {
			return Link{}, false
		}
		end = start + j
	} else {
		start = i
		depth := 0
	scan:
		for end = start; end < len(line); end++ {
			switch c := line[end]; {
			case c == ' ' || c == '\t':
				break scan
			case c == '\\' && end+1 < len(line):
				end++
			case c == '(':
				depth++
			case c == ')' && inline:
				if depth == 0 {
					break scan
				}
				depth--
			}
		}
	}
	dest := line[start:end]
	if k := strings.IndexAny(dest, "#?"); k >= 0 {
		dest = dest[:k]
		end = start + k
	}
	if dest == "" || strings.HasPrefix(dest, "//") || schemeRE.MatchString(dest) {
		return Link{}, false
	}
	p := dest
	if strings.Contains(p, `\`) {
		p = unescapePunct(p)
	}
	if strings.Contains(p, "%") {
		if u, err := url.PathUnescape(p); err == nil {
			p = u
		}
	}
	if !strings.HasSuffix(p, ".md") {
		return Link{}, false
	}
	return Link{Start: off + start, End: off + end, Path: p, Angle: angle}, true
}

// LinkTarget writes path p (relative to nodes/) as the target of a link
// from a leaf in folder dir (relative to nodes/), in the form the link had:
// bundle-absolute ("/…") when it was, else relative to dir. A target in
// angle brackets may hold spaces; one without has them escaped.
func LinkTarget(l Link, dir, p string) string {
	var s string
	if strings.HasPrefix(l.Path, "/") {
		s = "/" + p
	} else {
		s = relPath(dir, p)
	}
	if !l.Angle {
		s = EscapeLinkPath(s)
	}
	return s
}

// EscapeLinkPath writes path p as a CommonMark link destination without
// angle brackets, which may hold no space nor control character: those are
// percent-encoded, and so are what would end it or change its meaning
// (parentheses, angle brackets, a backslash) or be read as more than a
// path ("#" a fragment, "?" a query, "%" an escape). A folder a person made
// by hand ("Meeting Notes/") is then linked to as GitHub's renderer and
// kk's link reader (MarkdownLinks, which decodes it) both read it.
func EscapeLinkPath(p string) string {
	const special = " %()<>#?\\"
	i := 0
	for i < len(p) && p[i] > 0x20 && p[i] != 0x7f && strings.IndexByte(special, p[i]) < 0 {
		i++
	}
	if i == len(p) {
		return p
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(p)+8)
	b = append(b, p[:i]...)
	for ; i < len(p); i++ {
		c := p[i]
		if c <= 0x20 || c == 0x7f || strings.IndexByte(special, c) >= 0 {
			b = append(b, '%', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return string(b)
}

// relPath returns target (relative to nodes/) relative to folder dir.
func relPath(dir, target string) string {
	var from []string
	if dir != "" {
		from = strings.Split(dir, "/")
	}
	to := strings.Split(target, "/")
	i := 0
	for i < len(from) && i < len(to)-1 && from[i] == to[i] {
		i++
	}
	return strings.Repeat("../", len(from)-i) + strings.Join(to[i:], "/")
}

// unescapePunct drops the backslash before escaped ASCII punctuation, as
// markdown reads a link destination.
func unescapePunct(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", s[i+1]) >= 0 {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
