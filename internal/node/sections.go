package node

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"slices"
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

// findBlock returns where the generated block between start and end is in
// body, with the newlines around it: the first end marker line that has a
// start marker line before it, from the nearest such start. A marker is a
// line holding only the marker, outside a fenced code block: a marker
// quoted in prose (`<!-- kk:related:start -->` in a sentence) or shown in
// a fenced example is text, and so is the prose between two such quotes,
// which a substring match would cut out and replace. A fence never closed
// is not taken for a code block (its lines would hide the block kk wrote
// at the end, and each write would append another). A marker left alone
// by a hand edit (an end line deleted) is text like any other; cutting
// from it to a later block's end would drop the text between.
func findBlock(body, start, end string) (lo, hi int, ok bool) {
	if !strings.Contains(body, end) {
		return 0, 0, false
	}
	fenced := closedFences(body)
	s := -1 // offset of the nearest start marker line not yet used
	for off, i := 0, 0; off < len(body); i++ {
		eol := strings.IndexByte(body[off:], '\n')
		if eol < 0 {
			eol = len(body)
		} else {
			eol += off
		}
		if !fenced[i] {
			switch strings.TrimSpace(body[off:eol]) {
			case start:
				s = off
			case end:
				if s >= 0 {
					lo, hi = s, eol
					for lo > 0 && body[lo-1] == '\n' {
						lo--
					}
					for hi < len(body) && body[hi] == '\n' {
						hi++
					}
					return lo, hi, true
				}
			}
		}
		off = eol + 1
	}
	return 0, 0, false
}

// closedFences reports, by line number, the lines of body inside a fenced
// code block that is closed (its opening and closing lines included).
func closedFences(body string) map[int]bool {
	lines := strings.Split(body, "\n")
	var in map[int]bool
	for i := 0; i < len(lines); i++ {
		f := isFence([]byte(lines[i]))
		if f == nil {
			continue
		}
		for j := i + 1; j < len(lines); j++ {
			c := isFence([]byte(lines[j]))
			if c != nil && c[0] == f[0] && len(c) >= len(f) && strings.TrimSpace(lines[j]) == string(c) {
				if in == nil {
					in = map[int]bool{}
				}
				for k := i; k <= j; k++ {
					in[k] = true
				}
				i = j
				break
			}
		}
	}
	return in
}

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
		href = EscapeLinkPath(href)
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
//
// A body with a "# Related" section of its own (written by hand) keeps a
// single Related section: the generated block goes at the end of that
// section, without a heading of its own, and the hand-written links stay.
func RenderSections(body string, n *Node, resolve Resolver) string {
	related := RelatedSection(n, resolve)
	if stripped, ok := withoutRelatedBlock(body); ok {
		// The Citations block first, so that where the hand-written
		// section ends (at the latest, where that block starts) is where
		// the next render finds it too.
		stripped = splice(stripped, CitationsStart, CitationsEnd, CitationsSection(n))
		return spliceRelated(stripped, related)
	}
	body = splice(body, RelatedStart, RelatedEnd, related)
	return splice(body, CitationsStart, CitationsEnd, CitationsSection(n))
}

// relatedHeading is the line that opens the generated Related block after
// its start marker, and a hand-written Related section.
const relatedHeading = "# Related"

// withoutRelatedBlock returns body without its generated Related block,
// and whether it has a "# Related" section written by hand.
func withoutRelatedBlock(body string) (string, bool) {
	stripped := body
	if _, _, ok := findBlock(body, RelatedStart, RelatedEnd); ok {
		stripped = splice(body, RelatedStart, RelatedEnd, "")
	}
	_, ok := handRelatedEnd(stripped)
	return stripped, ok
}

// spliceRelated puts the rendered Related block, without its heading, at
// the end of the hand-written "# Related" section of body (which has no
// generated Related block).
func spliceRelated(body, rendered string) string {
	at, _ := handRelatedEnd(body)
	if rendered == "" {
		return body
	}
	block := strings.Replace(rendered, RelatedStart+"\n"+relatedHeading+"\n\n", RelatedStart+"\n", 1)
	out := strings.TrimRightFunc(body[:at], isJSSpace) + "\n\n" + block
	if after := strings.TrimLeft(body[at:], "\n"); strings.TrimSpace(after) != "" {
		out += "\n\n" + after
	}
	return strings.TrimRightFunc(out, isJSSpace)
}

// handRelatedEnd finds the first "# Related" heading line of body written
// by hand (outside code fences, and not the heading of a generated block
// whose end marker was lost) and returns the offset where its section
// ends: the start of the next level-1 heading or generated block marker,
// or the end of body.
func handRelatedEnd(body string) (int, bool) {
	var fence []byte
	found := false
	prev := "" // the last non-blank line before this one
	for off := 0; off < len(body); {
		end := strings.IndexByte(body[off:], '\n')
		if end < 0 {
			end = len(body)
		} else {
			end += off
		}
		line := strings.TrimRight(body[off:end], " \t\r")
		switch {
		case found && strings.HasPrefix(strings.TrimSpace(line), "<!-- kk:"):
			// kk's markers count wherever they are, as findBlock finds
			// them (a fence left open by hand included).
			return off, true
		case fence != nil:
			if f := isFence([]byte(line)); f != nil && f[0] == fence[0] && len(f) >= len(fence) && strings.TrimSpace(line) == string(f) {
				fence = nil
			}
		case isFence([]byte(line)) != nil:
			fence = isFence([]byte(line))
		case !found && line == relatedHeading && strings.TrimSpace(prev) != RelatedStart:
			found = true
		case found && (line == "#" || strings.HasPrefix(strings.TrimLeft(line, " "), "# ")):
			return off, true
		}
		if strings.TrimSpace(line) != "" {
			prev = line
		}
		off = end + 1
	}
	return len(body), found
}

func splice(body, start, end, rendered string) string {
	if lo, hi, ok := findBlock(body, start, end); ok {
		before, after := body[:lo], body[hi:]
		// Paragraphs a person wrote around the block stay apart.
		sep := "\n"
		if before != "" && strings.TrimSpace(after) != "" {
			sep = "\n\n"
		}
		repl := sep
		if rendered != "" {
			repl = "\n\n" + rendered + sep
		}
		return strings.TrimRightFunc(before+repl+after, isJSSpace)
	}
	if rendered == "" {
		return strings.TrimRightFunc(body, isJSSpace)
	}
	return strings.TrimRightFunc(body, isJSSpace) + "\n\n" + rendered
}

// HasUnmarkedSections reports whether body has a "# Citations" heading
// outside the generated blocks; migration reports such leaves because the
// generated block would repeat the heading. (A hand-written "# Related"
// section is not reported: RenderSections puts the generated links under
// it.)
func HasUnmarkedSections(body string) []string {
	stripped := citationsBlock.ReplaceAllString(relatedBlock.ReplaceAllString(body, "\n"), "\n")
	var found []string
	for _, line := range strings.Split(stripped, "\n") {
		switch strings.TrimRight(line, " \t\r") {
		case "# Citations":
			found = append(found, "# Citations")
		}
	}
	return found
}

// WithoutGeneratedBlocks returns body without its generated Related and
// Citations blocks, found as RenderSections finds them (whole marker
// lines outside fenced code blocks), each replaced by a blank line: the
// text a person wrote, markers quoted in it included.
func WithoutGeneratedBlocks(body string) string {
	for _, m := range [][2]string{{RelatedStart, RelatedEnd}, {CitationsStart, CitationsEnd}} {
		for {
			lo, hi, ok := findBlock(body, m[0], m[1])
			if !ok {
				break
			}
			body = body[:lo] + "\n\n" + body[hi:]
		}
	}
	return body
}

// LoneMarker is a marker line of a generated block (Related, Citations)
// that has no partner: a start marker with no end marker after it, or an
// end marker with no start marker before it, paired as findBlock pairs
// them (whole lines outside closed fenced code blocks; a start is paired
// with the first end after it, the nearest start before that end). kk
// reads it as text of the note's (a hand edit deleted the other line), and
// writes its own block beside it.
type LoneMarker struct {
	Line   int    // 1-based, in the body
	Marker string // the marker the line holds
	Start  bool   // a start marker (else an end marker)
	// Partner is the marker that is missing.
	Partner string
}

// MayHaveLoneMarkers reports whether a leaf's file, src, may hold a
// marker LoneMarkers reports, cheaply: false when it has no marker, or
// one of each kind at most, the start before the end, and no code fence
// (which could hide one of them from LoneMarkers; a marker quoted inside
// a line of text counts here as one). A file kk wrote is
// one of those; only the rest needs LoneMarkers.
func MayHaveLoneMarkers(src []byte) bool {
	if !bytes.Contains(src, []byte("<!-- kk:")) {
		return false
	}
	if bytes.Contains(src, []byte("```")) || bytes.Contains(src, []byte("~~~")) {
		return true
	}
	for _, m := range [][2][]byte{{relatedStartB, relatedEndB}, {citationsStartB, citationsEndB}} {
		starts, ends := bytes.Count(src, m[0]), bytes.Count(src, m[1])
		if starts != ends || starts > 1 || starts == 1 && bytes.Index(src, m[0]) > bytes.Index(src, m[1]) {
			return true
		}
	}
	return false
}

// LoneMarkers returns the marker lines of body's generated blocks that
// have no partner, in the order of their lines.
func LoneMarkers(body string) []LoneMarker {
	if !strings.Contains(body, "<!-- kk:") {
		return nil
	}
	fenced := closedFences(body)
	kinds := [][2]string{{RelatedStart, RelatedEnd}, {CitationsStart, CitationsEnd}}
	open := make([]int, len(kinds)) // the line of each kind's start not yet paired, 0 when none
	var out []LoneMarker
	for i, line := range strings.Split(body, "\n") {
		if fenced[i] {
			continue
		}
		t := strings.TrimSpace(line)
		for k, m := range kinds {
			switch t {
			case m[0]:
				if open[k] > 0 {
					out = append(out, LoneMarker{Line: open[k], Marker: m[0], Start: true, Partner: m[1]})
				}
				open[k] = i + 1
			case m[1]:
				if open[k] > 0 {
					open[k] = 0
				} else {
					out = append(out, LoneMarker{Line: i + 1, Marker: m[1], Partner: m[0]})
				}
			}
		}
	}
	for k, m := range kinds {
		if open[k] > 0 {
			out = append(out, LoneMarker{Line: open[k], Marker: m[0], Start: true, Partner: m[1]})
		}
	}
	slices.SortFunc(out, func(a, b LoneMarker) int { return a.Line - b.Line })
	return out
}
