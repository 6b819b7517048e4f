package harness

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ContextLimit is the most context text a hook hands Claude Code (and
// Codex, which shares its envelope): Claude Code passes up to 10,000
// characters of additionalContext to the model as they are and spills
// longer text to a file, showing the model only a preview (harnesses.md
// §1.1). It counts JavaScript string length, that is UTF-16 code units.
// The other harnesses that print context (Copilot CLI, Cursor, Gemini
// CLI) document no limit of their own and are capped the same
// (CapContext, the one place context is cut).
const ContextLimit = 10000

// CutNote ends the context CapContext shortened.
const CutNote = "\n\n[kk: the rest was cut to fit the harness's 10,000-character context limit; the full text is under .ai/kenkeep/]"

// CapContext returns text cut to ContextLimit UTF-16 code units, at a
// line end where there is one in the last quarter, with a note saying
// so. Text within the limit is returned as it is.
func CapContext(text string) string {
	if utf16Len(text) <= ContextLimit {
		return text
	}
	budget := ContextLimit - utf16Len(CutNote)
	cut, n := 0, 0
	for cut < len(text) {
		r, size := utf8.DecodeRuneInString(text[cut:])
		if n+utf16.RuneLen(r) > budget {
			break
		}
		n += utf16.RuneLen(r)
		cut += size
	}
	head := text[:cut]
	if nl := strings.LastIndexByte(head, '\n'); nl >= len(head)*3/4 {
		head = head[:nl]
	}
	return strings.TrimRight(head, "\n") + CutNote
}

// utf16Len is the length of s in UTF-16 code units.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		n += utf16.RuneLen(r)
	}
	return n
}

// mdPath is a markdown path inside a shell command: a run of characters
// that cannot be shell syntax, ending in .md (kenkeep-v1.17.md §16).
var mdPath = regexp.MustCompile("[^\\s'\"`|&;<>(){}=,]+\\.md\\b")

// MarkdownPaths returns the markdown paths a shell command names, in
// order, repeats kept: each one is a read for the usage ledger.
func MarkdownPaths(command string) []string {
	return mdPath.FindAllString(command, -1)
}

// MaxLine bounds one line of a transcript: a longer line (a tool's
// output of many megabytes, a file with no newline at all) is skipped, in
// bounded memory, rather than held.
const MaxLine = 8 << 20

// EachLine calls fn with each line of r that is not blank, newline
// included, whether or not the last one ends in a newline (a transcript's
// last line may be cut off mid-write). Lines longer than MaxLine are
// skipped without being held in memory. fn must not keep line: its bytes
// are reused for the next one. It returns the reader's error, unwrapped.
func EachLine(r io.Reader, fn func(line []byte)) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var line []byte
	skipping := false
	for {
		chunk, err := br.ReadSlice('\n')
		switch {
		case skipping:
		case len(line)+len(chunk) > MaxLine:
			skipping, line = true, line[:0]
		default:
			line = append(line, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue // the line goes on
		}
		if !skipping && len(bytes.TrimSpace(line)) > 0 {
			fn(line)
		}
		line, skipping = line[:0], false
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// EachJSONLine calls fn with each line of r that is not blank (see
// EachLine); fn reports whether the line was JSON. Lines that are not
// (a last line cut off mid-write) are passed over, but lines none of
// which is JSON are an error: r is not what (a transcript).
func EachJSONLine(r io.Reader, what string, fn func(line []byte) (json bool)) error {
	good, bad := 0, 0
	err := EachLine(r, func(line []byte) {
		if fn(line) {
			good++
		} else {
			bad++
		}
	})
	if err != nil {
		return fmt.Errorf("reading the transcript: %w", err)
	}
	if good == 0 && bad > 0 {
		return fmt.Errorf("not %s: none of its %d lines is a JSON object", what, bad)
	}
	return nil
}

// FirstString returns the first of keys whose value in m is a non-empty
// string (tool inputs decoded as any).
func FirstString(m map[string]any, keys ...string) string {
	for _, k := range keys {
		if s, ok := m[k].(string); ok && s != "" {
			return s
		}
	}
	return ""
}
