package node

import (
	"strings"
	"testing"
)

// One-line text (a title, a description, a tag, an id) holds no control
// character but a tab and no bidirectional embedding, override or isolate
// (U+202A–U+202E, U+2066–U+2069: Trojan Source, text that reads one way
// and is stored another); multi-line text (a body) no control character
// but a tab, a line feed and a carriage return. Neither holds a tag
// character (U+E0000–U+E007F: invisible, read by a model as ASCII) but
// in an emoji's tag sequence. The problem names the code point and where
// it is.
func TestTextProblems(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		s, want string
	}{
		{"plain title", ""},
		{"tab\tseparated", ""},
		{"العربية and English", ""}, // right-to-left letters are text, not controls
		{"a\u202Eb", "holds the bidirectional control character U+202E at character 2"},
		{"abc\u2066d", "holds the bidirectional control character U+2066 at character 4"},
		{"é\u2069", "U+2069 at character 2"},
		{"\u202A", "U+202A at character 1"},
		{"x\x1b[2J", "holds the control character U+001B at character 2"},
		{"two\nlines", "U+000A at character 4"},
		{"nel\u0085", "U+0085 at character 4"},
		{"n\x00l", "holds a NUL byte"},
		// Tag characters (ASCII smuggling) but an emoji's tag sequence.
		{"hi\U000E0049\U000E0047", "holds the invisible tag character U+E0049 at character 3"},
		{"\U000E0001x", "U+E0001 at character 1"},
		{"England \U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F flag", ""},
		{"\U0001F3F4\U000E0067\U000E0062", "U+E0067 at character 2"},                      // no cancel tag
		{"\U0001F3F4\U000E007F", "U+E007F at character 2"},                                // no tag letter
		{"\U0001F3F4\U000E0067\U000E007F\U000E0041", "U+E0067 at character 2"},            // a letter after the cancel tag
		{"x\U000E0067\U000E0062\U000E007F", "U+E0067 at character 2"},                     // no flag before
		{"\U0001F3F4\U000E0067\U000E0062\U000E007F \U000E0041", "U+E0041 at character 6"}, // a second run, stray
		// A black flag before a message in tag letters is no subdivision
		// flag: its tags are a region's code, lower-case letters and
		// digits, at most seven (ISO 3166-2: gbeng, usca, fr75c).
		{"\U0001F3F4\U000E0049\U000E0047\U000E004E\U000E007F", "U+E0049 at character 2"},                                                             // capitals
		{"\U0001F3F4\U000E0072\U000E006D\U000E0020\U000E0061\U000E007F", "U+E0072 at character 2"},                                                   // a space
		{"\U0001F3F4\U000E0069\U000E0067\U000E006E\U000E006F\U000E0072\U000E0065\U000E0061\U000E006C\U000E006C\U000E007F", "U+E0069 at character 2"}, // nine letters
		{"\U0001F3F4\U000E0066\U000E0072\U000E0037\U000E0035\U000E0063\U000E007F", ""},                                                               // fr75c
	} {
		got := LineProblem(c.s)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("LineProblem(%q) = %q, want %q", c.s, got, c.want)
		}
	}
	for _, c := range []struct {
		s, want string
	}{
		{"# Title\n\nText\twith a tab.\r\nAnd CRLF.\n", ""},
		{"a\u202Eb\n", ""}, // a body may quote such text (in code, say); kk lint does not read bodies for it
		{"line 1\nline 2\nbell \a here\n", "holds the control character U+0007 on line 3"},
		{"\x00", "holds a NUL byte"},
		{"form\ffeed", "U+000C on line 1"},
		{"a\n\n\x1b", "U+001B on line 3"},
		{"a\nhidden \U000E0049\U000E0047 text\n", "holds the invisible tag character U+E0049 on line 2"},
		{"\U0001F3F4\U000E0067\U000E0062\U000E0073\U000E0063\U000E0074\U000E007F\n", ""},
	} {
		got := TextProblem(c.s)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("TextProblem(%q) = %q, want %q", c.s, got, c.want)
		}
	}
}

// A folder or file name kk creates must check out on Windows, and its
// generated index links to it must work: no device name (CON, PRN, AUX,
// NUL, COM1–9, LPT1–9, in any case, with or without an extension), no
// trailing dot or space, no space.
func TestNameProblem(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, want string }{
		{"payments", ""},
		{"http-api", ""},
		{"v1.2", ""},
		{"console", ""},
		{"com10", ""},
		{"nullable", ""},
		{"CON", "is a device name on Windows"},
		{"con", "is a device name on Windows"},
		{"Nul", "is a device name on Windows"},
		{"aux.md", "is a device name on Windows"},
		{"com1", "is a device name on Windows"},
		{"LPT9.txt", "is a device name on Windows"},
		{"prn.tar.gz", "is a device name on Windows"},
		{"nul .txt", "is a device name on Windows"},
		{"com\u00b9", "is a device name on Windows"},
		{"CONIN$", "is a device name on Windows"},
		{"trail.", "ends with a dot"},
		{"trail ", "ends with a space"},
		{"a b", "holds a space"},
		{"caf\xe9", "is not valid UTF-8"},
		{"café", ""},
		{"tab\there", "holds a control character"},
		{"a:b", "Windows refuses in a name"},
		{"what?", "Windows refuses in a name"},
	} {
		got := NameProblem(c.name)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("NameProblem(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

// A body that opens with a front matter block of its own is named with its
// keys; a body opening with a thematic break, or with dashes and no keys,
// is text.
func TestBodyFrontMatter(t *testing.T) {
	for _, c := range []struct{ body, want string }{
		{"---\ntitle: Copied\ntype: practice\n---\nText.\n", "starts with a front matter block of its own (keys title, type)"},
		{"---\r\nid: x\r\n---\r\nText.\r\n", "(keys id)"},
		{"---\na: 1\nb: 2\nc: 3\nd: 4\ne: 5\nf: 6\n---\n", "(keys a, b, c, d, e, …)"},
		{"---\n\nA paragraph after a rule.\n\n---\n", ""},
		{"---\n---\nText.\n", ""},
		{"Text.\n---\ntitle: x\n---\n", ""},
		{"----\ntitle: x\n----\n", ""},
		{"", ""},
	} {
		got := BodyFrontMatter(c.body)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, c.want) {
			t.Errorf("BodyFrontMatter(%q) = %q, want %q", c.body, got, c.want)
		}
	}
}

func TestStrayTagChar(t *testing.T) {
	for _, c := range []struct {
		text string
		r    rune
		line int
	}{
		{"plain\ntext\n", 0, 0},
		{"England \U0001F3F4\U000E0067\U000E0062\U000E0065\U000E006E\U000E0067\U000E007F\nflag", 0, 0},
		{"one\ntwo \U000E0049\U000E0047\nthree", 0xE0049, 2},
		{"\U0001F3F4\U000E0049\U000E0047\U000E004E\U000E007F\n", 0xE0049, 1},
	} {
		r, line := StrayTagChar(c.text)
		if r != c.r || line != c.line {
			t.Errorf("StrayTagChar(%q) = %U, %d; want %U, %d", c.text, r, line, c.r, c.line)
		}
		if got := MayHaveTagChars([]byte(c.text)); c.r != 0 && !got {
			t.Errorf("MayHaveTagChars(%q) = false", c.text)
		}
	}
	if MayHaveTagChars([]byte("plain ascii and é and 🚀")) {
		t.Error("MayHaveTagChars of text without tag characters")
	}
}
