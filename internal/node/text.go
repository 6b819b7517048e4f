package node

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/kk-project/kk/internal/frontmatter"
)

// IsBidiControl reports whether r is a bidirectional embedding, override
// or isolate control (U+202A–U+202E, U+2066–U+2069). Such a character
// changes the order in which the text after it is shown, so text holding
// one reads one way and is stored another (Trojan Source).
func IsBidiControl(r rune) bool {
	return r >= 0x202A && r <= 0x202E || r >= 0x2066 && r <= 0x2069
}

// tagMsg and tagReason name a tag character outside an emoji's tag
// sequence.
const (
	tagMsg    = "holds the invisible tag character %U"
	tagReason = " (shown as nothing, read by a model as the letter it shadows); give plain text"
)

// IsTagChar reports whether r is one of Unicode's tag characters
// (U+E0000–U+E007F).
func IsTagChar(r rune) bool { return r >= 0xE0000 && r <= 0xE007F }

// tagRuns finds the tag characters of a text that are stray: every one
// but those of an emoji tag sequence (a subdivision flag: U+1F3F4, tag
// letters U+E0020–U+E007E, then the cancel tag U+E007F). A tag
// character shows as nothing, in a diff as on a page, yet a model reads
// it as the ASCII character it shadows, so text holding them says to an
// agent what no reviewer sees (ASCII smuggling). Each run of them is
// read once: the cost is linear in the text.
type tagRuns struct {
	prev  rune // the character before the one stepped over
	inRun bool // prev is a tag character of a run already judged
	ok    bool // the run is an emoji's tag sequence
}

// stray reports whether r, at byte i of s, is a stray tag character. It
// is called for each character of s in order.
func (t *tagRuns) stray(s string, i int, r rune) bool {
	prev := t.prev
	t.prev = r
	if !IsTagChar(r) {
		t.inRun = false
		return false
	}
	if !t.inRun {
		t.inRun, t.ok = true, prev == 0x1F3F4 && emojiTags(s[i:])
	}
	return !t.ok
}

// emojiTags reports whether the run of tag characters s starts with is
// the tail of an emoji tag sequence as subdivision flags have it: a
// region's code in tag letters (lower-case letters and digits, two to
// seven: ISO 3166-2, gbeng, usca, fr75c), then U+E007F. Anything longer,
// or in capitals, spaces or punctuation, is a message after a black
// flag, not a flag.
func emojiTags(s string) bool {
	n := 0
	for _, r := range s {
		switch {
		case r == 0xE007F:
			return n >= 2 && n <= 7
		case 0xE0061 <= r && r <= 0xE007A, 0xE0030 <= r && r <= 0xE0039:
			n++
		default:
			return false
		}
	}
	return false
}

// LineProblem says what is wrong with one line of text a writer gives
// (a title, a description, a tag, an id): a control character other than
// a tab (an escape sequence would drive the terminal of whoever lists
// it), a bidirectional control, or a stray tag character (tagRuns). It names the code point and the
// character's position, counted from 1; "" when nothing is wrong. Every
// writer holds its one-line fields to it, at its input and again when
// the transaction writes the leaf.
func LineProblem(s string) string {
	pos := 0
	var tags tagRuns
	for i, r := range s {
		pos++
		switch {
		case tags.stray(s, i, r):
			return fmt.Sprintf(tagMsg+" at character %d"+tagReason, r, pos)
		case r == '\t':
		case r == 0:
			return "holds a NUL byte" // as badText says it, whichever check comes first
		case unicode.IsControl(r):
			return fmt.Sprintf("holds the control character %U at character %d; give plain text", r, pos)
		case IsBidiControl(r):
			return fmt.Sprintf("holds the bidirectional control character %U at character %d, which makes the text read otherwise than it is stored; give plain text", r, pos)
		}
	}
	return ""
}

// MayHaveTagChars reports whether src may hold a tag character (their
// UTF-8 encodings begin F3 A0): false lets a reader skip TagCharProblem.
func MayHaveTagChars(src []byte) bool { return bytes.Contains(src, []byte{0xF3, 0xA0}) }

// StrayTagChar returns the first stray tag character of multi-line text
// (tagRuns) and its line, counted from 1; 0 and 0 when there is none.
func StrayTagChar(s string) (r rune, line int) {
	line = 1
	var tags tagRuns
	for i, c := range s {
		if tags.stray(s, i, c) {
			return c, line
		}
		if c == '\n' {
			line++
		}
	}
	return 0, 0
}

// TagCharMsg says what is wrong with text holding the stray tag
// character r.
func TagCharMsg(r rune) string { return fmt.Sprintf(tagMsg+tagReason, r) }

// TextProblem says what is wrong with multi-line text a writer gives (a
// body, an atom's knowledge): a control character other than a tab, a
// line feed and a carriage return, or a stray tag character (tagRuns), naming the code point and its line,
// counted from 1; "" when nothing is wrong.
func TextProblem(s string) string {
	line := 1
	var tags tagRuns
	for i, r := range s {
		switch {
		case r == '\n':
			line++
		case tags.stray(s, i, r):
			return fmt.Sprintf(tagMsg+" on line %d"+tagReason, r, line)
		case r == '\t' || r == '\r':
		case r == 0:
			return "holds a NUL byte"
		case unicode.IsControl(r):
			return fmt.Sprintf("holds the control character %U on line %d; give plain text", r, line)
		}
	}
	return ""
}

// CheckText holds the leaf's text to LineProblem (every one-line field)
// and TextProblem (the body), naming the field. A value orig, the leaf as
// the tree had it, already holds is let through: a leaf a person wrote
// stays writable by changes to its other fields (kk lint reports it).
// orig is nil for a new leaf.
func (n *Node) CheckText(orig *Node) error {
	fail := func(field, msg string) error { return &Error{Path: n.Path, Field: field, Msg: msg} }
	for _, f := range []struct {
		field, v string
		was      func(*Node) string
	}{
		{KeyType, n.Type, func(o *Node) string { return o.Type }},
		{KeyID, n.ID, func(o *Node) string { return o.ID }},
		{KeyTitle, n.Title, func(o *Node) string { return o.Title }},
		{KeyDescription, n.Description, func(o *Node) string { return o.Description }},
		{KeyStatus, n.Status, func(o *Node) string { return o.Status }},
	} {
		if orig != nil && f.was(orig) == f.v {
			continue
		}
		if msg := LineProblem(f.v); msg != "" {
			return fail(f.field, msg)
		}
	}
	for _, l := range []struct {
		field string
		v     []string
		was   func(*Node) []string
	}{
		{KeyTags, n.Tags, func(o *Node) []string { return o.Tags }},
		{KeyRelatesTo, n.RelatesTo, func(o *Node) []string { return o.RelatesTo }},
		{KeyDependsOn, n.DependsOn, func(o *Node) []string { return o.DependsOn }},
		{KeyDerivedFrom, n.DerivedFrom, func(o *Node) []string { return o.DerivedFrom }},
		{KeyPhrasings, n.Phrasings, func(o *Node) []string { return o.Phrasings }},
	} {
		for _, s := range l.v {
			if orig != nil && slices.Contains(l.was(orig), s) {
				continue
			}
			if msg := LineProblem(s); msg != "" {
				return fail(l.field, fmt.Sprintf("value %q %s", s, msg))
			}
		}
	}
	if orig == nil || string(orig.Body) != string(n.Body) {
		if msg := TextProblem(string(n.Body)); msg != "" && (orig == nil || TextProblem(string(orig.Body)) != msg) {
			return fail("body", msg)
		}
	}
	return nil
}

// BodyFrontMatter says what is wrong with a body that starts with a front
// matter block of its own (a "---" line, keys, a "---" line), as a whole
// leaf file piped in as a body does: written, the leaf would carry two
// blocks, the second read as text and its fields lost. It names the
// block's first keys; "" when the body has no such block. A body opening
// with a thematic break (---) and no keys after it is text, not a block.
func BodyFrontMatter(body string) string {
	if !strings.HasPrefix(body, "---") {
		return ""
	}
	doc, err := frontmatter.Parse([]byte(body))
	if err != nil || !doc.HasFrontMatter() || len(doc.Keys()) == 0 {
		return ""
	}
	keys := doc.Keys()
	if len(keys) > 5 {
		keys = append(keys[:5:5], "…")
	}
	return fmt.Sprintf("starts with a front matter block of its own (keys %s); a leaf has one: give those fields as fields, and the body without the block", strings.Join(keys, ", "))
}
