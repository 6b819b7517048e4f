package kb

import (
	"bytes"
	"slices"
	"sync"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// kenkeep orders paths, titles and tags with JavaScript's localeCompare
// (Unicode root collation), not byte order: "apple" < "Banana" < "cherry".
// kk uses the same order so generated files agree with kenkeep's.

var collatorPool = sync.Pool{New: func() any { return collate.New(language.Und) }}

// CollateKeys returns a sort key per string; comparing keys with
// bytes.Compare orders the strings by root collation.
func CollateKeys(ss []string) [][]byte {
	c := collatorPool.Get().(*collate.Collator)
	defer collatorPool.Put(c)
	var buf collate.Buffer
	keys := make([][]byte, len(ss))
	for i, s := range ss {
		keys[i] = bytes.Clone(c.KeyFromString(&buf, s))
		buf.Reset()
	}
	return keys
}

// LocaleCompare compares two strings by root collation, falling back to
// byte order for strings the collation considers equal.
func LocaleCompare(a, b string) int {
	if a == b {
		return 0
	}
	c := collatorPool.Get().(*collate.Collator)
	defer collatorPool.Put(c)
	if r := c.CompareString(a, b); r != 0 {
		return r
	}
	if a < b {
		return -1
	}
	return 1
}

// SortLocale sorts ss in place by root collation.
func SortLocale(ss []string) {
	keys := CollateKeys(ss)
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if r := bytes.Compare(keys[a], keys[b]); r != 0 {
			return r
		}
		return cmpString(ss[a], ss[b])
	})
	out := make([]string, len(ss))
	for i, j := range idx {
		out[i] = ss[j]
	}
	copy(ss, out)
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
