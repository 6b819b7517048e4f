package frontmatter

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/kk-project/kk/internal/yamlstyle"
	"github.com/kk-project/kk/internal/yamlvalue"
)

// Doc is a parsed markdown document whose front matter can be re-rendered
// key by key: keys whose value did not change keep their original bytes.
type Doc struct {
	parts Parts
	lead  []byte // front matter text before the first key (comments, blank lines)
	segs  []segment
	// segmented is false when keys cannot be cut into per-key byte ranges
	// (flow style mappings); every key is then re-emitted on render.
	segmented bool
	values    map[string]any
}

type segment struct {
	key  string
	raw  []byte // "key: value\n" lines as they were in the source
	line int    // 1-based line of the key within the front matter
	// anchors and aliases say whether the value defines a YAML anchor
	// (&name) and whether it refers to one (*name): a value whose raw
	// bytes refer to an anchor cannot be kept once the value defining it
	// is written anew.
	anchors, aliases bool
}

// FieldError is a front matter problem tied to one key.
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string {
	if e.Field == "" {
		return e.Msg
	}
	return fmt.Sprintf("field %q: %s", e.Field, e.Msg)
}

// Parse splits src and decodes its front matter. A document without front
// matter parses to a Doc with no keys.
func Parse(src []byte) (*Doc, error) {
	parts, err := Split(src)
	if err != nil {
		return nil, err
	}
	d := &Doc{parts: parts, values: map[string]any{}, segmented: true}
	if !parts.Has || len(bytes.TrimSpace(parts.YAML)) == 0 {
		d.lead = parts.YAML
		return d, nil
	}
	text := parts.YAML
	if parts.CRLF {
		text = bytes.ReplaceAll(text, []byte("\r\n"), []byte("\n"))
	}
	if segs, values, ok := parseSimple(text); ok {
		d.segs, d.values = segs, values
		return d, nil
	}
	if err := d.parseFull(parts, text); err != nil {
		return nil, err
	}
	return d, nil
}

// parseFull decodes front matter text with the general YAML parser.
func (d *Doc) parseFull(parts Parts, text []byte) error {
	var root yaml.Node
	if err := yaml.Unmarshal(text, &root); err != nil {
		return fmt.Errorf("invalid YAML in front matter: %s", cleanYAMLError(err))
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		d.lead = parts.YAML
		return nil
	}
	m := root.Content[0]
	if m.Kind != yaml.MappingNode {
		return errors.New("front matter must be a mapping of keys to values")
	}
	if m.Style&yaml.FlowStyle != 0 {
		d.segmented = false
	}
	lines := splitLinesKeep(text)
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		if k.Kind != yaml.ScalarNode || (k.Tag != "!!str" && k.Tag != "!!int" && k.Tag != "!!bool" && k.Tag != "!!float") {
			return fmt.Errorf("front matter line %d: keys must be plain strings", k.Line+fileLineOffset)
		}
		if _, dup := d.values[k.Value]; dup {
			return &FieldError{Field: k.Value, Msg: fmt.Sprintf("appears twice (line %d)", k.Line+fileLineOffset)}
		}
		val, err := yamlvalue.Decode(v, "", fileLineOffset)
		if err != nil {
			return &FieldError{Field: k.Value, Msg: fmt.Sprintf("line %d: %v", lineOf(err, k.Line+fileLineOffset), err)}
		}
		d.values[k.Value] = val
		anchors, aliases := anchorsIn(v)
		d.segs = append(d.segs, segment{key: k.Value, line: k.Line, anchors: anchors, aliases: aliases})
	}
	if d.segmented {
		d.cutSegments(m, lines)
	}
	return nil
}

// anchorsIn reports whether the YAML value n defines an anchor and
// whether it refers to one, anywhere inside it.
func anchorsIn(n *yaml.Node) (anchors, aliases bool) {
	if n.Kind == yaml.AliasNode {
		return false, true
	}
	anchors = n.Anchor != ""
	for _, c := range n.Content {
		an, al := anchorsIn(c)
		anchors, aliases = anchors || an, aliases || al
	}
	return anchors, aliases
}

// cutSegments assigns each key the source lines from its key line up to the
// next key's line. Keys sharing a line (flow style) disable segmentation.
func (d *Doc) cutSegments(m *yaml.Node, lines [][]byte) {
	starts := make([]int, 0, len(d.segs))
	for i := 0; i < len(m.Content); i += 2 {
		starts = append(starts, m.Content[i].Line-1)
	}
	for i := 1; i < len(starts); i++ {
		if starts[i] <= starts[i-1] {
			d.segmented = false
			return
		}
	}
	if len(starts) == 0 || starts[0] > len(lines) {
		d.segmented = false
		return
	}
	d.lead = bytes.Join(lines[:starts[0]], nil)
	for i := range d.segs {
		end := len(lines)
		if i+1 < len(starts) {
			end = starts[i+1]
		}
		raw := bytes.Join(lines[starts[i]:end], nil)
		if len(raw) > 0 && raw[len(raw)-1] != '\n' {
			raw = append(raw, '\n')
		}
		d.segs[i].raw = raw
	}
}

func splitLinesKeep(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			out = append(out, b)
			break
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// HasFrontMatter reports whether the document had a front matter block.
func (d *Doc) HasFrontMatter() bool { return d.parts.Has }

// Body returns the document body, verbatim.
func (d *Doc) Body() []byte { return d.parts.Body }

// Keys returns the front matter keys in source order.
func (d *Doc) Keys() []string {
	keys := make([]string, len(d.segs))
	for i, s := range d.segs {
		keys[i] = s.key
	}
	return keys
}

// Value returns the decoded value of key: string, bool, int64, float64, nil,
// []any or map[string]any. Timestamps stay strings, exactly as written.
func (d *Doc) Value(key string) (any, bool) {
	v, ok := d.values[key]
	return v, ok
}

// Values returns every decoded key/value pair. The map is never nil.
func (d *Doc) Values() map[string]any { return d.values }

// Line returns the 1-based line of key in the front matter, or 0.
func (d *Doc) Line(key string) int {
	for _, s := range d.segs {
		if s.key == key {
			return s.line
		}
	}
	return 0
}

// Item is one key/value pair to render.
type Item struct {
	Key   string
	Value any
}

// Emitter renders one front matter key and its value as YAML lines
// ("key: value", or "key:" followed by indented block lines).
type Emitter func(key string, v any) (string, error)

// Render builds the document with front matter items in the given order and
// the given body. Items whose value equals the value parsed from the source
// keep their source bytes; others are rendered by emit. If nothing differs
// from the source (same keys, same order, same values, same body), the
// source bytes are returned unchanged.
func (d *Doc) Render(items []Item, body []byte, emit Emitter) ([]byte, error) {
	if d.unchanged(items, body) {
		return d.parts.Join(), nil
	}
	var fm bytes.Buffer
	if d.segmented {
		fm.Write(d.lead)
	}
	// A value written anew loses the anchor it defined (title: &t Old);
	// a kept value referring to it (description: *t) is then written
	// anew too, as the value it stood for, or the front matter would
	// name an anchor that no longer exists.
	lost := false
	for _, s := range d.segs {
		if s.anchors && !slices.ContainsFunc(items, func(it Item) bool { _, ok := d.rawFor(it); return ok && it.Key == s.key }) {
			lost = true
		}
	}
	for _, it := range items {
		if raw, ok := d.rawFor(it); ok && !(lost && d.aliases(it.Key)) {
			fm.Write(raw)
			continue
		}
		text, err := emit(it.Key, it.Value)
		if err != nil {
			return nil, err
		}
		fm.WriteString(strings.TrimRight(text, "\n"))
		fm.WriteString("\n")
	}
	yamlText := fm.Bytes()
	nl := "\n"
	if d.parts.CRLF {
		nl = "\r\n"
		yamlText = bytes.ReplaceAll(yamlText, []byte("\n"), []byte("\r\n"))
		// The body takes the file's line ends too: a kept body comes back
		// with its last one trimmed to LF, a new one is often all LF, and
		// either would leave a file of mixed line ends.
		body = bytes.ReplaceAll(bytes.ReplaceAll(body, []byte("\r\n"), []byte("\n")), []byte("\n"), []byte("\r\n"))
	}
	var out bytes.Buffer
	if d.parts.BOM {
		out.Write(bom)
	}
	out.WriteString("---" + nl)
	out.Write(yamlText)
	out.WriteString("---" + nl)
	out.Write(body)
	return out.Bytes(), nil
}

func (d *Doc) unchanged(items []Item, body []byte) bool {
	if !d.parts.Has || !bytes.Equal(body, d.parts.Body) || len(items) != len(d.segs) {
		return false
	}
	for i, it := range items {
		if d.segs[i].key != it.Key || !Equal(d.values[it.Key], it.Value) {
			return false
		}
	}
	return true
}

// aliases reports whether the source value of key refers to an anchor.
func (d *Doc) aliases(key string) bool {
	for _, s := range d.segs {
		if s.key == key {
			return s.aliases
		}
	}
	return false
}

func (d *Doc) rawFor(it Item) ([]byte, bool) {
	if !d.segmented {
		return nil, false
	}
	for _, s := range d.segs {
		if s.key == it.Key {
			if s.raw != nil && Equal(d.values[it.Key], it.Value) {
				return s.raw, true
			}
			return nil, false
		}
	}
	return nil, false
}

// Equal reports whether two front matter values are the same after
// normalising Go types ([]string and []any, int and int64, ...).
func Equal(a, b any) bool {
	return reflect.DeepEqual(Normalize(a), Normalize(b))
}

// Normalize converts a Go value into the shapes Value returns.
func Normalize(v any) any {
	switch x := v.(type) {
	case nil:
		return nil
	case string, bool, int64, float64:
		return x
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case uint:
		return int64(x)
	case float32:
		return float64(x)
	case []string:
		out := make([]any, len(x))
		for i, s := range x {
			out[i] = s
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = Normalize(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = Normalize(e)
		}
		return out
	case []Item:
		out := make(map[string]any, len(x))
		for _, it := range x {
			out[it.Key] = Normalize(it.Value)
		}
		return out
	case yamlstyle.Map:
		out := make(map[string]any, len(x))
		for _, it := range x {
			out[it.Key] = Normalize(it.Value)
		}
		return out
	}
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice:
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = Normalize(rv.Index(i).Interface())
		}
		return out
	case reflect.String:
		return rv.String()
	}
	return v
}

// lineOf returns the line a yamlvalue error points at, or fallback.
func lineOf(err error, fallback int) int {
	var ye *yamlvalue.Error
	if errors.As(err, &ye) && ye.Line > 0 {
		return ye.Line
	}
	return fallback
}

// fileLineOffset turns a line of the front matter text into a line of
// its file: the opening --- is the file's first line (a byte order mark
// adds none). Messages name file lines, as an editor and kk validate
// number them.
const fileLineOffset = 1

// yamlLine matches the line numbers of the YAML parser's messages.
var yamlLine = regexp.MustCompile(`(^|\n\s*)line (\d+):`)

// cleanYAMLError words a YAML parser error for a message that names the
// file: its line numbers become the file's lines.
func cleanYAMLError(err error) string {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	return yamlLine.ReplaceAllStringFunc(msg, func(m string) string {
		sub := yamlLine.FindStringSubmatch(m)
		n, convErr := strconv.Atoi(sub[2])
		if convErr != nil {
			return m
		}
		return fmt.Sprintf("%sline %d:", sub[1], n+fileLineOffset)
	})
}
