// Package safetext disarms text kk writes where a terminal or a model
// reads it and where it came from anyone (a note's title, description or
// body, a session log): the control characters a terminal acts on (ESC
// sequences, C1 controls, bidirectional overrides, and the invisible tag
// characters a model reads as ASCII) and, for text a
// harness wraps in tags of its own, markup tags. Ordinary text, letters
// outside ASCII and emoji included, comes back byte for byte. It also
// quotes a word for a POSIX shell (ShellQuote), for the commands kk
// prints or writes for a person or a harness to run. It is a leaf: it
// imports nothing of kk's.
package safetext

import (
	"strings"
	"unicode/utf8"
)

// Defang returns text with every markup tag disarmed: the '<' that opens
// a tag ("<name", "</name", the name a letter followed by letters,
// digits, '_', '-' or '.', then a space, '/', '>' or the end) becomes
// '‹'. Harnesses wrap the context a hook hands the model in tags of
// their own (<system-reminder>, <hook_context>, <system_reminder>, …) and
// mark up the turns around it the same way, each release adding names;
// so a note's title or summary that holds "</system-reminder>" would
// close the harness's block and could open one that reads as the
// harness's own instructions. Whatever the tag's name, disarmed it is
// text. A '<' that opens no tag ("a < b", "<https://…>", "<!--") is kept.
// So is the escaped form, "&lt;name": Gemini CLI shows the context's '<'
// as "&lt;", so "&lt;/hook_context&gt;" would read as its block's end.
//
// Control characters become U+FFFD as well (see control): harnesses show
// hook context in their terminal UI, where a note's ESC sequence would
// set the title, clear the screen or recolour what follows, and a
// bidirectional override would show the text in another order than the
// model reads it; and tag characters, invisible there, would say to the
// model what no one sees. Tab, line feed and carriage return are kept.
func Defang(text string) string {
	if !needsDefang(text) {
		return text
	}
	var b strings.Builder
	b.Grow(len(text) + 8)
	for i := 0; i < len(text); {
		if text[i] == '<' && opensTag(text[i+1:], false) {
			b.WriteString("‹")
			i++
			continue
		}
		if text[i] == '&' && strings.HasPrefix(text[i:], "&lt;") && opensTag(text[i+4:], true) {
			b.WriteString("‹")
			i += 4
			continue
		}
		i += writeChar(&b, text[i:])
	}
	return b.String()
}

// ReplaceControls returns s with every control character (see control)
// written as U+FFFD, the rule Defang applies: for text kk keeps that a
// terminal may show or a model may read (a session log, the titles and
// descriptions of the generated index files, a resource read).
func ReplaceControls(s string) string {
	if !needsDefang(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); {
		i += writeChar(&b, s[i:])
	}
	return b.String()
}

// writeChar writes the first character of s to b, U+FFFD for a control
// character, and returns its length in bytes.
func writeChar(b *strings.Builder, s string) int {
	if c := s[0]; c < utf8.RuneSelf {
		if control(rune(c)) {
			b.WriteRune(utf8.RuneError)
		} else {
			b.WriteByte(c)
		}
		return 1
	}
	r, n := utf8.DecodeRuneInString(s)
	if control(r) {
		b.WriteRune(utf8.RuneError)
	} else {
		b.WriteString(s[:n])
	}
	return n
}

// needsDefang reports whether text may hold what Defang or
// ReplaceControls changes: a '<', an ASCII control character, or the
// first byte of a C1 control, a bidirectional control or a tag character
// (0xC2, 0xE2, 0xF3).
func needsDefang(text string) bool {
	for i := 0; i < len(text); i++ {
		switch c := text[i]; {
		case c == '<', c == '&', c == 0xC2, c == 0xE2, c == 0xF3, c == 0x7f:
			return true
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
			return true
		}
	}
	return false
}

// control reports whether r is a character hook context must not carry:
// a C0 control other than tab, line feed and carriage return, DEL, a C1
// control, a bidirectional embedding, override or isolate (U+202A to
// U+202E, U+2066 to U+2069), or a tag character (U+E0000 to U+E007F:
// shown as nothing, read by a model as the ASCII letter it shadows; a
// subdivision flag's tags go too, leaving its black flag and U+FFFDs).
func control(r rune) bool {
	switch {
	case r == '\t' || r == '\n' || r == '\r':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	case 0x80 <= r && r <= 0x9f:
		return true
	case 0x202a <= r && r <= 0x202e, 0x2066 <= r && r <= 0x2069:
		return true
	case 0xe0000 <= r && r <= 0xe007f:
		return true
	}
	return false
}

// opensTag reports whether rest, the text after a '<', starts a tag name
// ("/" optional) that ends at a space, '/', '>' or the end of the text;
// escaped, the text after a "&lt;", it may end at the '&' of "&gt;" too.
func opensTag(rest string, escaped bool) bool {
	rest = strings.TrimPrefix(rest, "/")
	if rest == "" || !isLetter(rest[0]) {
		return false
	}
	for j := 1; j < len(rest); j++ {
		c := rest[j]
		switch {
		case isLetter(c) || ('0' <= c && c <= '9') || c == '_' || c == '-' || c == '.':
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '/' || c == '>':
			return true
		case escaped && c == '&':
			return true
		default:
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return 'a' <= c|0x20 && c|0x20 <= 'z' }

// ShellQuote quotes s for a POSIX shell, when it needs it, in single
// quotes.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_@%+=:,./-") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// ShellUnquote undoes ShellQuote.
func ShellUnquote(w string) string {
	if len(w) >= 2 && w[0] == '\'' && w[len(w)-1] == '\'' {
		return strings.ReplaceAll(w[1:len(w)-1], `'\''`, "'")
	}
	return w
}
