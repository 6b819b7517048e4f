package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/frontmatter"
)

// MaxAliasExpansion bounds how many YAML nodes one document may expand to
// through aliases, so a "billion laughs" document fails fast.
var MaxAliasExpansion = 100000

// ParseError is a document that is not well-formed JSON or YAML.
type ParseError struct {
	Format string // "JSON", "YAML", "front matter", or "" for an empty document
	Line   int    // 1-based; 0 when unknown
	Msg    string
}

func (e *ParseError) Error() string {
	if e.Format == "" {
		return e.Msg
	}
	if e.Line > 0 {
		return fmt.Sprintf("invalid %s: line %d: %s", e.Format, e.Line, e.Msg)
	}
	return fmt.Sprintf("invalid %s: %s", e.Format, e.Msg)
}

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
	d := &yamlDecoder{budget: MaxAliasExpansion, format: format, lineOffset: lineOffset}
	return d.value(root.Content[0])
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

type yamlDecoder struct {
	budget     int
	format     string
	lineOffset int
}

func (d *yamlDecoder) fail(n *yaml.Node, format string, args ...any) error {
	return &ParseError{Format: d.format, Line: n.Line + d.lineOffset, Msg: fmt.Sprintf(format, args...)}
}

func (d *yamlDecoder) value(n *yaml.Node) (any, error) {
	d.budget--
	if d.budget < 0 {
		return nil, d.fail(n, "too many alias expansions (more than %d values)", MaxAliasExpansion)
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return d.scalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := d.value(c)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		if err := d.mapping(n, out, map[string]bool{}); err != nil {
			return nil, err
		}
		return out, nil
	case yaml.AliasNode:
		return d.value(n.Alias)
	}
	return nil, d.fail(n, "unsupported YAML node")
}

// mapping decodes the pairs of n into out. Keys written in n itself must be
// unique; keys brought in by merge keys (<<) never override them.
func (d *yamlDecoder) mapping(n *yaml.Node, out map[string]any, own map[string]bool) error {
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, v)
			continue
		}
		key, err := d.key(k)
		if err != nil {
			return err
		}
		if own[key] {
			return d.fail(k, "key %q appears twice", key)
		}
		own[key] = true
		val, err := d.value(v)
		if err != nil {
			return err
		}
		out[key] = val
	}
	for _, m := range merges {
		if err := d.merge(m, out, own); err != nil {
			return err
		}
	}
	return nil
}

// merge applies one "<<" value: a mapping, or a sequence of mappings whose
// earlier entries win.
func (d *yamlDecoder) merge(v *yaml.Node, out map[string]any, own map[string]bool) error {
	for v.Kind == yaml.AliasNode {
		v = v.Alias
	}
	var sources []*yaml.Node
	switch v.Kind {
	case yaml.MappingNode:
		sources = []*yaml.Node{v}
	case yaml.SequenceNode:
		sources = v.Content
	default:
		return d.fail(v, "a merge key (<<) takes a mapping or a list of mappings")
	}
	for _, s := range sources {
		for s.Kind == yaml.AliasNode {
			s = s.Alias
		}
		if s.Kind != yaml.MappingNode {
			return d.fail(s, "a merge key (<<) takes a mapping or a list of mappings")
		}
		m := map[string]any{}
		if err := d.mapping(s, m, map[string]bool{}); err != nil {
			return err
		}
		for k, val := range m {
			if _, taken := out[k]; !taken {
				out[k] = val
			}
		}
	}
	return nil
}

func (d *yamlDecoder) key(k *yaml.Node) (string, error) {
	for k.Kind == yaml.AliasNode {
		k = k.Alias
	}
	if k.Kind != yaml.ScalarNode {
		return "", d.fail(k, "keys must be strings, not a list or mapping")
	}
	switch k.ShortTag() {
	case "!!str", "!!int", "!!float", "!!bool":
		return k.Value, nil
	}
	return "", d.fail(k, "key %q must be a string (quote it)", k.Value)
}

func (d *yamlDecoder) scalar(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, d.fail(n, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return b, nil
	case "!!int":
		var i int64
		if err := n.Decode(&i); err == nil {
			return i, nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, d.fail(n, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		return f, nil
	case "!!float":
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, d.fail(n, "%s", strings.TrimPrefix(err.Error(), "yaml: "))
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return n.Value, nil
		}
		return f, nil
	}
	// Strings, timestamps (kept as written), binary (base64 text) and
	// custom tags.
	return n.Value, nil
}
