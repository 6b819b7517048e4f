package typeschema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/yamlvalue"
)

// ParseError is a document that is not well-formed JSON or YAML.
type ParseError = yamlvalue.Error

// ParseDocument turns a file's bytes into the JSON-shaped value Validate
// takes. It reads, in this order:
//
//   - JSON (numbers stay exact, as json.Number);
//   - a markdown document whose first line is "---" and whose front matter
//     is closed by a later "---" line: its front matter is the document,
//     the body is ignored (so `kk validate node leaf.md` checks the leaf's
//     front matter; an empty block is an empty object);
//   - YAML, a single document.
//
// YAML is decoded to the same shapes as JSON: timestamps such as
// 2026-01-02 stay the string they were written as (not a time), integers
// are int64, floats float64 (.inf and .nan stay strings), and binary stays
// its base64 text. Mapping keys must be scalars and are taken as written
// (1: becomes "1"); null, timestamp and collection keys are rejected, and
// so is a key given twice. Merge keys (<<) are applied.
func ParseDocument(data []byte) (any, error) {
	data = bytes.TrimPrefix(data, []byte("\xEF\xBB\xBF"))
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, &ParseError{Msg: "the document is empty"}
	}
	v, jsonErr := parseJSON(data)
	if jsonErr == nil {
		// JSON must also be strict: no key twice (the last would win
		// silently), no NUL in a string.
		if err := op.CheckDocument(data); err != nil {
			return nil, &ParseError{Format: "JSON", Msg: op.ErrorOf(err).Message}
		}
		return v, nil
	}
	if parts, err := frontmatter.Split(data); err == nil && parts.Has {
		text := parts.YAML
		if parts.CRLF {
			text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
		}
		v, err := parseYAML(text, "front matter", 1)
		if err != nil {
			return nil, err
		}
		if v == nil {
			return map[string]any{}, nil
		}
		if _, ok := v.(map[string]any); !ok {
			return nil, &ParseError{Format: "front matter", Msg: "front matter must be a mapping of keys to values"}
		}
		return v, nil
	}
	v, err := parseYAML(data, "YAML", 0)
	if err == nil {
		return v, nil
	}
	if first := bytes.TrimLeft(data, " \t\r\n"); first[0] == '{' || first[0] == '[' {
		// It was meant to be JSON: its error is the useful one.
		return nil, jsonErr
	}
	return nil, err
}

func parseJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, jsonError(data, err, dec.InputOffset())
	}
	if tok, err := dec.Token(); err != io.EOF {
		off := dec.InputOffset()
		if err == nil {
			err = fmt.Errorf("unexpected %v after the document", tok)
		}
		return nil, jsonError(data, err, off)
	}
	return v, nil
}

func jsonError(data []byte, err error, offset int64) error {
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syn):
		offset = syn.Offset
	case errors.As(err, &typ):
		offset = typ.Offset
	case errors.Is(err, io.ErrUnexpectedEOF):
		offset = int64(len(data))
		err = errors.New("unexpected end of input")
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	return &ParseError{Format: "JSON", Line: 1 + bytes.Count(data[:offset], []byte("\n")), Msg: err.Error()}
}

// parseYAML decodes one YAML document. lineOffset is added to line numbers
// (front matter starts on the second line of its file). An empty document
// is nil.
func parseYAML(data []byte, format string, lineOffset int) (any, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var root yaml.Node
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return nil, nil
		}
		return nil, yamlError(err, format, lineOffset)
	}
	var next yaml.Node
	if err := dec.Decode(&next); err != io.EOF {
		if err != nil {
			return nil, yamlError(err, format, lineOffset)
		}
		return nil, &ParseError{Format: format, Line: next.Line + lineOffset, Msg: "a second YAML document starts here; give one document"}
	}
	if len(root.Content) == 0 {
		return nil, nil
	}
	return yamlvalue.Decode(root.Content[0], format, lineOffset)
}

// yamlError turns a yaml.v3 error ("yaml: line 3: …") into a ParseError.
func yamlError(err error, format string, lineOffset int) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	line := 0
	if rest, ok := strings.CutPrefix(msg, "line "); ok {
		if n, tail, ok := strings.Cut(rest, ": "); ok {
			if v, err := strconv.Atoi(n); err == nil {
				line, msg = v+lineOffset, tail
			}
		}
	}
	return &ParseError{Format: format, Line: line, Msg: msg}
}
