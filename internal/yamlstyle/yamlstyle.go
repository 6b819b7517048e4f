// Package yamlstyle renders YAML exactly as js-yaml 3.14 safeDump does with
// its default options (indent 2, lineWidth 80, no flow level, no key
// sorting).
//
// gray-matter 4.0.3 stringify uses that dumper for frontmatter, so kk uses
// this package whenever it writes frontmatter that must be byte-identical to
// what the JS tooling produces. Only the value shapes frontmatter needs are
// supported:
//
//   - string, bool, nil (written as null)
//   - signed and unsigned Go integers (written in decimal)
//   - float64, formatted like JavaScript's Number.prototype.toString with
//     js-yaml's adjustments (.nan, .inf, -0.0, "5.e-7")
//   - time.Time, written like JavaScript's Date.prototype.toISOString
//     (UTC, millisecond precision), which is how js-yaml writes a Date
//   - Map (or []MapItem) for ordered mappings
//   - slices of supported values ([]string, []any, []Map, ...), except
//     []byte
//
// Behaviour that follows from imitating a JavaScript object:
//
//   - Keys that are canonical array indices ("0", "1", ... "4294967294") are
//     written first, in ascending numeric order, followed by the other keys
//     in their given order; that is the order Object.keys reports.
//   - A key may appear only once in a mapping; a duplicate is an error.
//
// Integers are written exactly, even beyond 2^53 where a JavaScript number
// would lose precision. js-yaml's anchors for shared objects (&ref_0) are
// never produced: Go values carry no object identity worth reproducing.
//
// gray-matter trims the dump (String.prototype.trim) before framing it with
// "---" lines and omits the frontmatter entirely when the dump is "{}"; those
// steps belong to the caller, not to this package.
package yamlstyle

import (
	"errors"
	"fmt"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// Quoted is a string written as a string is, except that one js-yaml
// would write plain is single-quoted. It is kk's departure from js-yaml,
// for a string that js-yaml (YAML 1.1) writes plain and a YAML 1.2 reader
// (yaml.v3, kk's) reads as another type: 0o17 (an integer), 01.5 (a
// float). The caller decides which strings need it.
type Quoted string

// MapItem is one key/value pair of an ordered mapping.
type MapItem struct {
	Key   string
	Value any
}

// Map is an ordered mapping. Values may be any type listed in the package
// documentation, including nested Maps.
type Map []MapItem

// Dumper settings fixed to js-yaml's defaults.
const (
	indentPerLevel = 2  // state.indent
	maxLineWidth   = 80 // state.lineWidth
	// A key whose rendered form is longer than this (in UTF-16 code units)
	// is written as an explicit "? key" entry.
	maxImplicitKeyLen = 1024
)

// Marshal renders m as a block mapping exactly as js-yaml 3.14 safeDump does,
// including the trailing newline. An empty (or nil) map renders as "{}\n".
//
// Values of unsupported types, strings that are not valid UTF-8 and
// duplicate keys are reported as errors naming the offending key.
func Marshal(m Map) ([]byte, error) {
	out, err := dumpNode(0, m, true, "")
	if err != nil {
		return nil, err
	}
	return []byte(out + "\n"), nil
}

// Value renders v the way it appears after "key:" in a top-level mapping
// written by Marshal, so a single entry can be re-emitted without rewriting
// the whole document.
//
// The result starts with a space when the value begins on the key's line
// (" foo", " 'true'", " []", " >-\n  folded text") and with a newline when it
// is a non-empty sequence or mapping ("\n  - a\n  - b"). It lacks the line
// break that ends the entry, so the complete entry is always
// key + ":" + result + "\n", with key rendered as Marshal renders it. (The
// result itself ends with a newline only when it is a "|+" block scalar
// keeping trailing empty lines.) For a key whose rendered form is at most
// 1024 UTF-16 code units long, Marshal(Map{{key, v}}) returns exactly that
// entry; longer keys are written as explicit "? key" entries, whose values
// are laid out differently.
func Value(v any) ([]byte, error) {
	out, err := dumpNode(1, v, false, "")
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(out, "\n") {
		return []byte(out), nil
	}
	return []byte(" " + out), nil
}

// nextLine starts a new line indented for the given nesting level
// (generateNextLine in js-yaml).
func nextLine(level int) string {
	return "\n" + strings.Repeat(" ", indentPerLevel*level)
}

// dumpNode renders v at the given nesting level (writeNode in js-yaml, with
// block=true and iskey=false). compact suppresses the line break that would
// otherwise precede the first entry of a block collection. path names the
// value in error messages.
func dumpNode(level int, v any, compact bool, path string) (string, error) {
	switch x := v.(type) {
	case nil:
		return "null", nil
	case string:
		if !utf8.ValidString(x) {
			return "", pathError(path, errors.New("string is not valid UTF-8"))
		}
		return writeScalar(x, level, false), nil
	case Quoted:
		s := string(x)
		if !utf8.ValidString(s) {
			return "", pathError(path, errors.New("string is not valid UTF-8"))
		}
		if out := writeScalar(s, level, false); out != s {
			return out, nil // not plain: quoted or a block already
		}
		return "'" + strings.ReplaceAll(s, "'", "''") + "'", nil
	case bool:
		if x {
			return "true", nil
		}
		return "false", nil
	case int:
		return strconv.FormatInt(int64(x), 10), nil
	case int8:
		return strconv.FormatInt(int64(x), 10), nil
	case int16:
		return strconv.FormatInt(int64(x), 10), nil
	case int32:
		return strconv.FormatInt(int64(x), 10), nil
	case int64:
		return strconv.FormatInt(x, 10), nil
	case uint:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint8:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint16:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint32:
		return strconv.FormatUint(uint64(x), 10), nil
	case uint64:
		return strconv.FormatUint(x, 10), nil
	case float64:
		return formatFloat(x), nil
	case time.Time:
		s, err := formatISOTime(x)
		if err != nil {
			return "", pathError(path, err)
		}
		return s, nil
	case Map:
		return dumpMapping(level, x, compact, path)
	case []MapItem:
		return dumpMapping(level, Map(x), compact, path)
	case []string:
		items := make([]any, len(x))
		for i, s := range x {
			items[i] = s
		}
		return dumpSequence(level, items, compact, path)
	case []any:
		return dumpSequence(level, x, compact, path)
	}

	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
		items := make([]any, rv.Len())
		for i := range items {
			items[i] = rv.Index(i).Interface()
		}
		return dumpSequence(level, items, compact, path)
	}
	if rv.Kind() == reflect.Map {
		return "", pathError(path, fmt.Errorf("unsupported type %T (use yamlstyle.Map for ordered mappings)", v))
	}
	return "", pathError(path, fmt.Errorf("unsupported type %T", v))
}

// dumpSequence renders a sequence (writeBlockSequence, or "[]" when empty).
// The items are rendered one level deeper than the sequence itself.
func dumpSequence(level int, items []any, compact bool, path string) (string, error) {
	if len(items) == 0 {
		return "[]", nil
	}
	var b strings.Builder
	for i, item := range items {
		s, err := dumpNode(level+1, item, true, fmt.Sprintf("%s[%d]", path, i))
		if err != nil {
			return "", err
		}
		if !compact || i != 0 {
			b.WriteString(nextLine(level))
		}
		if strings.HasPrefix(s, "\n") {
			b.WriteString("-")
		} else {
			b.WriteString("- ")
		}
		b.WriteString(s)
	}
	return b.String(), nil
}

// dumpMapping renders a mapping (writeBlockMapping, or "{}" when empty).
// Keys and values are rendered one level deeper than the mapping itself.
func dumpMapping(level int, m Map, compact bool, path string) (string, error) {
	if len(m) == 0 {
		return "{}", nil
	}
	items, err := jsKeyOrder(m, path)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, item := range items {
		itemPath := item.Key
		if path != "" {
			itemPath = path + "." + item.Key
		}
		if !utf8.ValidString(item.Key) {
			return "", pathError(itemPath, errors.New("key is not valid UTF-8"))
		}
		if !compact || i != 0 {
			b.WriteString(nextLine(level))
		}
		key := writeScalar(item.Key, level+1, true)
		explicit := utf16Len(key) > maxImplicitKeyLen
		if explicit {
			b.WriteString("? ")
		}
		b.WriteString(key)
		if explicit {
			b.WriteString(nextLine(level))
		}
		val, err := dumpNode(level+1, item.Value, explicit, itemPath)
		if err != nil {
			return "", err
		}
		if strings.HasPrefix(val, "\n") {
			b.WriteString(":")
		} else {
			b.WriteString(": ")
		}
		b.WriteString(val)
	}
	return b.String(), nil
}

// jsKeyOrder returns the entries of m in the order Object.keys would list
// the properties of the equivalent JavaScript object: array-index keys
// first in ascending numeric order, then the remaining keys in their given
// order. Duplicate keys are rejected.
func jsKeyOrder(m Map, path string) ([]MapItem, error) {
	seen := make(map[string]struct{}, len(m))
	var indices, others []MapItem
	for _, item := range m {
		if _, dup := seen[item.Key]; dup {
			p := item.Key
			if path != "" {
				p = path + "." + item.Key
			}
			return nil, pathError(p, errors.New("duplicate key"))
		}
		seen[item.Key] = struct{}{}
		if _, ok := arrayIndex(item.Key); ok {
			indices = append(indices, item)
		} else {
			others = append(others, item)
		}
	}
	if len(indices) == 0 {
		return others, nil
	}
	sort.SliceStable(indices, func(i, j int) bool {
		a, _ := arrayIndex(indices[i].Key)
		b, _ := arrayIndex(indices[j].Key)
		return a < b
	})
	return append(indices, others...), nil
}

// arrayIndex reports whether k is a canonical JavaScript array index: the
// decimal form, without leading zeros, of an integer in [0, 2^32-2].
func arrayIndex(k string) (uint64, bool) {
	if k == "" || len(k) > 10 || (k[0] == '0' && k != "0") {
		return 0, false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < '0' || k[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseUint(k, 10, 64)
	if err != nil || n > 1<<32-2 {
		return 0, false
	}
	return n, true
}

// pathError wraps err with the location of the offending value.
func pathError(path string, err error) error {
	if path == "" {
		return fmt.Errorf("yamlstyle: value: %w", err)
	}
	return fmt.Errorf("yamlstyle: key %q: %w", path, err)
}

// utf16Len returns the length of s in UTF-16 code units, the unit in which
// JavaScript measures string length.
func utf16Len(s string) int {
	n := 0
	for _, r := range s {
		if r >= 0x10000 {
			n += 2
		} else {
			n++
		}
	}
	return n
}
