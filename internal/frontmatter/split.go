// Package frontmatter splits markdown documents into their YAML front matter
// and body, and edits front matter key by key so that untouched keys keep
// their exact bytes.
package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
)

// ErrUnclosed reports a document that opens a front matter block with "---"
// but never closes it.
var ErrUnclosed = errors.New("front matter opened with --- but never closed")

// Parts is a document cut at its front matter delimiters. Every byte of the
// source is in exactly one field, so Join(Split(src)) == src.
type Parts struct {
	BOM   bool   // the source started with a UTF-8 byte order mark
	Has   bool   // the source has a front matter block
	Open  []byte // the opening delimiter line, with its line ending
	YAML  []byte // the front matter text between the delimiters
	Close []byte // the closing delimiter line, with its line ending (may lack one at EOF)
	Body  []byte // everything after the closing delimiter, verbatim
	CRLF  bool   // the opening delimiter ended in \r\n
}

var bom = []byte{0xEF, 0xBB, 0xBF}

// Split cuts src into front matter and body. A document without a leading
// "---" line has no front matter and its whole content is the body. The
// front matter ends at the first line that is exactly "---" (or "..."),
// optionally followed by spaces and \r.
func Split(src []byte) (Parts, error) {
	var p Parts
	if UTF16(src) {
		return p, &NULError{Line: 1, UTF16: true}
	}
	if i := bytes.IndexByte(src, 0); i >= 0 {
		// A NUL makes the file binary to git and to YAML; say so, rather
		// than what it breaks (an unclosed front matter, a missing one).
		return p, &NULError{Line: bytes.Count(src[:i], []byte("\n")) + 1}
	}
	if bytes.HasPrefix(src, bom) {
		p.BOM = true
		src = src[len(bom):]
	}
	first, rest, ok := cutLine(src)
	if !ok && len(first) == 0 {
		p.Body = src
		return p, nil
	}
	if !isDelim(first, false) {
		p.Body = src
		return p, nil
	}
	if !ok {
		// "---" with nothing after it at all.
		return p, ErrUnclosed
	}
	p.Has = true
	p.Open = src[:len(first)+1]
	p.CRLF = bytes.HasSuffix(first, []byte("\r"))
	off := 0
	for {
		line, _, nl := cutLine(rest[off:])
		if isDelim(line, true) {
			p.YAML = rest[:off]
			end := off + len(line)
			if nl {
				end++
			}
			p.Close = rest[off:end]
			p.Body = rest[end:]
			return p, nil
		}
		if !nl {
			return Parts{}, ErrUnclosed
		}
		off += len(line) + 1
	}
}

// NULError is a document holding a NUL byte; UTF16 when it starts with a
// UTF-16 byte order mark (a file saved as UTF-16 holds NUL bytes all
// along), which is said instead.
type NULError struct {
	Line  int
	UTF16 bool
}

func (e *NULError) Error() string {
	if e.UTF16 {
		return UTF16Msg
	}
	return fmt.Sprintf("holds a NUL byte on line %d; a knowledge file is text: remove it", e.Line)
}

// UTF16Msg says what is wrong with a document saved as UTF-16.
const UTF16Msg = "is saved as UTF-16 (it starts with a UTF-16 byte order mark); kk reads UTF-8 only: save it as UTF-8"

// UTF16 reports whether src starts with a UTF-16 byte order mark: a file
// saved as "Unicode" by Windows Notepad, or as UTF-16 by another editor.
func UTF16(src []byte) bool {
	return bytes.HasPrefix(src, []byte{0xFF, 0xFE}) || bytes.HasPrefix(src, []byte{0xFE, 0xFF})
}

// Join reassembles the parts into a document.
func (p Parts) Join() []byte {
	var b bytes.Buffer
	if p.BOM {
		b.Write(bom)
	}
	b.Write(p.Open)
	b.Write(p.YAML)
	b.Write(p.Close)
	b.Write(p.Body)
	return b.Bytes()
}

// cutLine returns the first line of b without its "\n", the remainder, and
// whether a "\n" was found.
func cutLine(b []byte) (line, rest []byte, found bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return b, nil, false
	}
	return b[:i], b[i+1:], true
}

func isDelim(line []byte, closing bool) bool {
	line = bytes.TrimRight(line, " \t\r")
	if bytes.Equal(line, []byte("---")) {
		return true
	}
	return closing && bytes.Equal(line, []byte("..."))
}

// Describe returns a short description of err for messages that already
// name the file.
func Describe(err error) string {
	if errors.Is(err, ErrUnclosed) {
		return "front matter is not closed: add a line with --- after the last key"
	}
	return fmt.Sprint(err)
}
