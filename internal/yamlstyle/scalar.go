package yamlstyle

import (
	"fmt"
	"strings"
	"unicode/utf16"
)

// scalarStyle is one of the ways js-yaml can write a string.
type scalarStyle int

const (
	stylePlain   scalarStyle = iota // as is
	styleSingle                     // 'single quoted'
	styleLiteral                    // |  block
	styleFolded                     // >  block, long lines folded
	styleDouble                     // "double quoted" with escapes
)

// compatBooleans are the YAML 1.1 booleans that js-yaml always single-quotes
// so that YAML 1.1 readers keep them as strings.
var compatBooleans = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"on": true, "On": true, "ON": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"off": true, "Off": true, "OFF": true,
}

// escapes are the short escape sequences js-yaml uses in double-quoted
// strings.
var escapes = map[rune]string{
	0x00:   `\0`,
	0x07:   `\a`,
	0x08:   `\b`,
	0x09:   `\t`,
	0x0A:   `\n`,
	0x0B:   `\v`,
	0x0C:   `\f`,
	0x0D:   `\r`,
	0x1B:   `\e`,
	0x22:   `\"`,
	0x5C:   `\\`,
	0x85:   `\N`,
	0xA0:   `\_`,
	0x2028: `\L`,
	0x2029: `\P`,
}

// writeScalar renders the string s found at the given nesting level
// (writeScalar in js-yaml). Keys (isKey) are restricted to single-line
// styles. s must be valid UTF-8.
func writeScalar(s string, level int, isKey bool) string {
	if s == "" {
		return "''"
	}
	if compatBooleans[s] {
		return "'" + s + "'"
	}
	indent := indentPerLevel * max(1, level)
	// The usable width shrinks with depth but never below 40 columns.
	width := max(min(maxLineWidth, 40), maxLineWidth-indent)

	switch chooseStyle(s, isKey, width) {
	case stylePlain:
		return s
	case styleSingle:
		return "'" + strings.ReplaceAll(s, "'", "''") + "'"
	case styleLiteral:
		return "|" + blockHeader(s) + dropEndingNewline(indentLines(s, indent))
	case styleFolded:
		return ">" + blockHeader(s) + dropEndingNewline(indentLines(foldString([]rune(s), width), indent))
	default:
		return `"` + escapeString(s) + `"`
	}
}

// chooseStyle picks the style for the non-empty string str, mirroring
// js-yaml's chooseScalarStyle. JavaScript inspects strings one UTF-16 code
// unit at a time, so a character outside the BMP shows up as two
// surrogates, neither of which counts as printable, and forces double
// quotes. Line lengths are likewise counted in code units.
func chooseStyle(str string, singleLineOnly bool, width int) scalarStyle {
	s := utf16.Encode([]rune(str))
	n := len(s)
	plain := isPlainSafeFirst(s[0]) && !isWhitespace(s[n-1])
	hasLineBreak := false
	hasFoldableLine := false
	prevBreak := -1 // index of the previous '\n'

	for i, c := range s {
		if !singleLineOnly && c == '\n' {
			hasLineBreak = true
			// A line can be folded when it is too long and not more-indented.
			hasFoldableLine = hasFoldableLine || (i-prevBreak-1 > width && s[prevBreak+1] != ' ')
			prevBreak = i
		} else if !isPrintable(c) {
			return styleDouble
		}
		plain = plain && isPlainSafe(c, i > 0, prevUnit(s, i))
	}
	if !singleLineOnly {
		// The last line has no '\n' after it.
		hasFoldableLine = hasFoldableLine || (n-prevBreak-1 > width && s[prevBreak+1] != ' ')
	}

	if !hasLineBreak && !hasFoldableLine {
		if plain && !isAmbiguous(str) {
			return stylePlain
		}
		return styleSingle
	}
	// js-yaml falls back to double quotes when an indentation indicator
	// would need two digits; with an indent of 2 that never happens.
	if hasFoldableLine {
		return styleFolded
	}
	return styleLiteral
}

func prevUnit(s []uint16, i int) uint16 {
	if i == 0 {
		return 0
	}
	return s[i-1]
}

// isPrintable reports whether a UTF-16 code unit may appear unescaped.
// It is YAML's c-printable without tab, NEL, NBSP, the line and paragraph
// separators and the byte order mark. Surrogates are not printable.
func isPrintable(c uint16) bool {
	return (0x20 <= c && c <= 0x7E) ||
		(0xA1 <= c && c <= 0xD7FF && c != 0x2028 && c != 0x2029) ||
		(0xE000 <= c && c <= 0xFFFD && c != 0xFEFF)
}

func isWhitespace(c uint16) bool {
	return c == ' ' || c == '\t'
}

// isNsChar reports whether c is a printable non-space character.
func isNsChar(c uint16) bool {
	return isPrintable(c) && !isWhitespace(c) && c != 0xFEFF && c != '\r' && c != '\n'
}

// isPlainSafe reports whether c may appear after the first position of a
// plain scalar. js-yaml 3 excludes every ':' (even one not followed by a
// space) and allows '#' only right after a non-space character. prev is
// the preceding code unit when hasPrev is true.
func isPlainSafe(c uint16, hasPrev bool, prev uint16) bool {
	if !isPrintable(c) || c == 0xFEFF {
		return false
	}
	switch c {
	case ',', '[', ']', '{', '}', ':':
		return false
	case '#':
		return hasPrev && isNsChar(prev)
	}
	return true
}

// isPlainSafeFirst reports whether c may start a plain scalar.
func isPlainSafeFirst(c uint16) bool {
	if !isPrintable(c) || c == 0xFEFF || isWhitespace(c) {
		return false
	}
	switch c {
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|',
		'=', '>', '\'', '"', '%', '@', '`':
		return false
	}
	return true
}

// blockHeader returns the indicators that follow '|' or '>' plus the line
// break ending the header: an indentation indicator when the content starts
// with a space (after any leading empty lines), and the chomping indicator
// ("-" strip, "" clip, "+" keep) matching the trailing line breaks.
func blockHeader(s string) string {
	header := ""
	if strings.HasPrefix(strings.TrimLeft(s, "\n"), " ") {
		header = fmt.Sprint(indentPerLevel)
	}
	clip := strings.HasSuffix(s, "\n")
	keep := clip && (strings.HasSuffix(s, "\n\n") || s == "\n")
	switch {
	case keep:
		header += "+"
	case !clip:
		header += "-"
	}
	return header + "\n"
}

// indentLines prefixes every line of s that has content with the given
// number of spaces. Empty lines, and the empty remainder after a final
// '\n', are left alone.
func indentLines(s string, spaces int) string {
	ind := strings.Repeat(" ", spaces)
	var b strings.Builder
	for s != "" {
		line := s
		if i := strings.IndexByte(s, '\n'); i >= 0 {
			line = s[:i+1]
		}
		s = s[len(line):]
		if line != "\n" {
			b.WriteString(ind)
		}
		b.WriteString(line)
	}
	return b.String()
}

// dropEndingNewline removes one trailing '\n'; the caller supplies the line
// break that ends the entry.
func dropEndingNewline(s string) string {
	return strings.TrimSuffix(s, "\n")
}

// foldString prepares s for the folded block style: long lines are broken
// at spaces, and an extra '\n' is inserted between two adjacent content
// lines that are not more-indented, because folding turns a single line
// break between them into a space.
//
// s is handled as runes. That matches JavaScript's UTF-16 indices because
// the folded style is only chosen for strings without surrogates, that is,
// without characters outside the BMP.
func foldString(s []rune, width int) string {
	var b strings.Builder
	first := indexRune(s, 0, '\n')
	b.WriteString(foldLine(s[:first], width))

	// Leading empty or more-indented lines get no extra line break.
	prevMoreIndented := len(s) > 0 && (s[0] == '\n' || s[0] == ' ')
	for i := first; i < len(s); {
		// Each chunk is a run of line breaks followed by one line.
		j := i
		for j < len(s) && s[j] == '\n' {
			j++
		}
		k := indexRune(s, j, '\n')
		breaks, line := s[i:j], s[j:k]
		moreIndented := len(line) > 0 && line[0] == ' '
		b.WriteString(string(breaks))
		if !prevMoreIndented && !moreIndented && len(line) > 0 {
			b.WriteByte('\n')
		}
		b.WriteString(foldLine(line, width))
		prevMoreIndented = moreIndented
		i = k
	}
	return b.String()
}

// indexRune returns the index of the first r in s at or after from, or
// len(s) when there is none.
func indexRune(s []rune, from int, r rune) int {
	for i := from; i < len(s); i++ {
		if s[i] == r {
			return i
		}
	}
	return len(s)
}

// foldLine breaks one line (without '\n') into pieces of at most width
// runes where possible, replacing the chosen spaces with '\n'. A break is
// only made at a space followed by a non-space, so no piece starts with a
// space. Each piece is the longest that fits; when none fits, the shortest
// longer one is used. Lines that are empty or start with a space
// (more-indented lines) are returned unchanged, since folding them would
// change their content.
func foldLine(line []rune, width int) string {
	if len(line) == 0 || line[0] == ' ' {
		return string(line)
	}
	var b strings.Builder
	start, curr := 0, 0 // start of the current piece; last break candidate
	for next := 0; next+1 < len(line); next++ {
		if line[next] != ' ' || line[next+1] == ' ' {
			continue
		}
		if next-start > width {
			end := next
			if curr > start {
				end = curr
			}
			b.WriteByte('\n')
			b.WriteString(string(line[start:end]))
			start = end + 1 // skip the space replaced by the break
		}
		curr = next
	}
	b.WriteByte('\n')
	if len(line)-start > width && curr > start {
		b.WriteString(string(line[start:curr]))
		b.WriteByte('\n')
		b.WriteString(string(line[curr+1:]))
	} else {
		b.WriteString(string(line[start:]))
	}
	return b.String()[1:] // drop the leading joiner
}

// escapeString renders s for a double-quoted scalar. Characters outside the
// BMP are always written as \UXXXXXXXX, as js-yaml does when it meets a
// surrogate pair.
func escapeString(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r > 0xFFFF:
			b.WriteString(encodeHex(r))
		case escapes[r] != "":
			b.WriteString(escapes[r])
		case isPrintable(uint16(r)):
			b.WriteRune(r)
		default:
			b.WriteString(encodeHex(r))
		}
	}
	return b.String()
}

// encodeHex writes a character as \xXX, \uXXXX or \UXXXXXXXX with
// upper-case hex digits.
func encodeHex(r rune) string {
	switch {
	case r <= 0xFF:
		return fmt.Sprintf(`\x%02X`, r)
	case r <= 0xFFFF:
		return fmt.Sprintf(`\u%04X`, r)
	default:
		return fmt.Sprintf(`\U%08X`, r)
	}
}
