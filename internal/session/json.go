package session

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/op"
)

// ParseJSON decodes data as exactly one JSON document, keeping numbers
// exact (as json.Number), for schema.Validate. Syntax errors name the line
// and column; name names the input in errors. The capture and curation
// primitives read their JSON plans through it.
func ParseJSON(name string, data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, fmt.Errorf("%s: is empty; expected a JSON document", name)
	}
	if !utf8.Valid(data) {
		return nil, fmt.Errorf("%s: %s", name, op.ErrorOf(op.CheckDocument(data)).Message)
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			line, col := position(data, int64(len(data)))
			col++ // the column after the last character
			return nil, fmt.Errorf("%s: invalid JSON at line %d, column %d: the document ends too early", name, line, col)
		}
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := position(data, se.Offset)
			return nil, fmt.Errorf("%s: invalid JSON at line %d, column %d: %v", name, line, col, err)
		}
		return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if end := dec.InputOffset(); len(bytes.TrimSpace(data[end:])) > 0 {
		at := end + int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n")))
		line, col := position(data, at+1)
		return nil, fmt.Errorf("%s: invalid JSON at line %d, column %d: unexpected data after the document", name, line, col)
	}
	// Strict JSON: no key twice (the last would win silently), no NUL.
	if err := op.CheckDocument(data); err != nil {
		return nil, fmt.Errorf("%s: %s", name, op.ErrorOf(err).Message)
	}
	return v, nil
}

// position returns the line of data[offset-1] and its 1-based column, that
// is, where a decoder that has read offset bytes stopped.
func position(data []byte, offset int64) (line, col int) {
	offset = min(offset, int64(len(data)))
	before := data[:offset]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(offset) - (bytes.LastIndexByte(before, '\n') + 1)
	return line, col
}
