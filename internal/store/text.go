package store

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
)

// Line endings. git with core.autocrlf (Git for Windows' default) checks
// a text file out with CRLF line endings and commits it back with LF, and
// a leaf may be written with CRLF bytes (an editor, a client that posts
// them). Everything generation derives from a file's bytes therefore reads
// "\r\n" as "\n": the same knowledge base gives byte-identical generated
// files whether its files are checked out with LF or with CRLF. A lone
// "\r" is kept: git converts no file that holds one.

var crlf = []byte("\r\n")

// LeafSum is the sha256 (hex) of a leaf file's bytes as NodesHash takes
// them: of its text with every "\r\n" read as "\n". A file without CRLF
// hashes as its bytes.
func LeafSum(src []byte) string {
	if !bytes.Contains(src, crlf) {
		sum := sha256.Sum256(src)
		return hex.EncodeToString(sum[:])
	}
	h := sha256.New()
	for {
		i := bytes.Index(src, crlf)
		if i < 0 {
			h.Write(src)
			break
		}
		h.Write(src[:i])
		src = src[i+1:] // from the "\n"
	}
	return hex.EncodeToString(h.Sum(nil))
}

// BOM is the UTF-8 byte order mark some editors (Notepad, Visual Studio
// with its default encoding) put in front of a file they save.
var BOM = []byte("\xef\xbb\xbf")

// SameText reports whether a and b hold the same text when every "\r\n"
// is read as "\n" and a leading UTF-8 byte order mark is passed over (a
// generated file checked out with CRLF, or saved by an editor that adds a
// BOM, is the file kk generated with LF and none).
func SameText(a, b []byte) bool {
	if bytes.Equal(a, b) {
		return true
	}
	a, b = bytes.TrimPrefix(a, BOM), bytes.TrimPrefix(b, BOM)
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		ca, cb := a[i], b[j]
		if ca == '\r' && i+1 < len(a) && a[i+1] == '\n' {
			i++
			ca = '\n'
		}
		if cb == '\r' && j+1 < len(b) && b[j+1] == '\n' {
			j++
			cb = '\n'
		}
		if ca != cb {
			return false
		}
		i++
		j++
	}
	return i == len(a) && j == len(b)
}

// MaxCRLFSize is the largest size a file checked out with CRLF can have
// when its text with LF endings is data: data with every "\n" a "\r\n".
func MaxCRLFSize(data []byte) int64 {
	return int64(len(data) + bytes.Count(data, []byte("\n")))
}

// MaxSameTextSize is the largest size a file can have that holds data's
// text by SameText: with CRLF line endings and a byte order mark.
func MaxSameTextSize(data []byte) int64 {
	return int64(len(BOM)) + MaxCRLFSize(data)
}
