// Package yamlvalue converts parsed YAML (go.yaml.in/yaml/v3 nodes) into
// the plain values JSON has: nil, bool, string, int64, float64, []any and
// map[string]any. Front matter, config-like documents and `kk validate`
// all decode YAML through it, so a document means the same everywhere.
//
// Timestamps such as 2026-01-02 stay the string they were written as (not
// a time), .inf and .nan stay strings, binary stays its base64 text.
// Mapping keys must be scalars and are taken as written (1: becomes "1");
// null, timestamp and collection keys are rejected, and so is a key given
// twice. Merge keys (<<) are applied. Alias expansion is bounded, so a
// "billion laughs" document fails fast.
package yamlvalue

import (
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"
)

// maxAliasExpansion bounds how many YAML nodes one document may expand to
// through aliases.
const maxAliasExpansion = 100000

// Error is a problem at a line of a YAML document.
type Error struct {
	Format string // what the document is: "YAML", "front matter", "JSON", or ""
	Line   int    // 1-based; 0 when unknown
	Msg    string
}

func (e *Error) Error() string {
	if e.Format == "" {
		return e.Msg
	}
	if e.Line > 0 {
		return fmt.Sprintf("invalid %s: line %d: %s", e.Format, e.Line, e.Msg)
	}
	return fmt.Sprintf("invalid %s: %s", e.Format, e.Msg)
}

// Decode converts n. format names the document in errors, and lineOffset
// is added to line numbers (front matter starts on its file's second line).
func Decode(n *yaml.Node, format string, lineOffset int) (any, error) {
	d := &yamlDecoder{budget: maxAliasExpansion, format: format, lineOffset: lineOffset}
	return d.value(n)
}

type yamlDecoder struct {
	budget     int
	format     string
	lineOffset int
}

func (d *yamlDecoder) fail(n *yaml.Node, format string, args ...any) error {
	return &Error{Format: d.format, Line: n.Line + d.lineOffset, Msg: fmt.Sprintf(format, args...)}
}

func (d *yamlDecoder) value(n *yaml.Node) (any, error) {
	d.budget--
	if d.budget < 0 {
		return nil, d.fail(n, "too many alias expansions (more than %d values)", maxAliasExpansion)
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
		if err := d.merge(m, out); err != nil {
			return err
		}
	}
	return nil
}

// merge applies one "<<" value: a mapping, or a sequence of mappings whose
// earlier entries win.
func (d *yamlDecoder) merge(v *yaml.Node, out map[string]any) error {
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
