package frontmatter

import (
	"reflect"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/yamlstyle"
)

// Emit renders one front matter key and its value in the style of the
// JavaScript YAML writer kenkeep uses (see package yamlstyle), so that the
// files kk writes match the files kenkeep writes. Unordered maps are written
// with their keys sorted. It is an Emitter.
func Emit(key string, v any) (string, error) {
	b, err := yamlstyle.Marshal(yamlstyle.Map{{Key: key, Value: toStyle(v)}})
	if err != nil {
		return "", err
	}
	return strings.TrimRight(string(b), "\n"), nil
}

// toStyle converts front matter values into yamlstyle values. Ordered maps
// (yamlstyle.Map) keep their key order at any depth; plain maps are written
// with their keys sorted.
func toStyle(v any) any {
	switch x := v.(type) {
	case yamlstyle.Map:
		out := make(yamlstyle.Map, len(x))
		for i, it := range x {
			out[i] = yamlstyle.MapItem{Key: it.Key, Value: toStyle(it.Value)}
		}
		return out
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		m := make(yamlstyle.Map, 0, len(keys))
		for _, k := range keys {
			m = append(m, yamlstyle.MapItem{Key: k, Value: toStyle(x[k])})
		}
		return m
	case string:
		if readsAsAnotherType(x) {
			return yamlstyle.Quoted(x)
		}
		return x
	case []byte:
		return x
	}
	if rv := reflect.ValueOf(v); rv.IsValid() && rv.Kind() == reflect.Slice {
		out := make([]any, rv.Len())
		for i := range out {
			out[i] = toStyle(rv.Index(i).Interface())
		}
		return out
	}
	return Normalize(v)
}

// readsAsAnotherType reports whether the string s, written plain as
// js-yaml 3 writes it, would be read back by kk's reader (YAML 1.2) as
// another type than a string, or as another string: 0o17 and 0B101 (YAML
// 1.2 integers), 01.5, 01e5 and +.5 (floats), which js-yaml's YAML 1.1
// rules take for strings. Such a string is written quoted (yamlstyle.Quoted);
// before, a title "0o17" was written plain, and the note then failed to
// parse (field "title": must be a string, not a number). Every scalar
// YAML 1.2 reads as a number starts with a digit, a sign or a dot; the
// words it reads as null or a boolean js-yaml quotes already.
func readsAsAnotherType(s string) bool {
	if s == "" || !strings.ContainsRune("0123456789+-.", rune(s[0])) {
		return false
	}
	if strings.ContainsAny(s, "\n\r") {
		return false // never written plain
	}
	d, err := Parse([]byte("---\nk: " + s + "\n---\n"))
	if err != nil {
		return false // not a plain scalar as it stands: js-yaml quotes it
	}
	v, ok := d.Value("k")
	got, isString := v.(string)
	return !ok || !isString || got != s
}
