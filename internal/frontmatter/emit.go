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
	case string, []byte:
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
