package frontmatter

import (
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

// toStyle converts decoded front matter values into yamlstyle values.
func toStyle(v any) any {
	if m, ok := v.(yamlstyle.Map); ok {
		return m
	}
	switch x := Normalize(v).(type) {
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = toStyle(e)
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
	default:
		return x
	}
}
