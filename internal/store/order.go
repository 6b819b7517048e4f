package store

import (
	"bytes"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"golang.org/x/text/collate"
	"golang.org/x/text/language"
)

// kenkeep orders paths, titles and tags with JavaScript's localeCompare
// (Unicode root collation), not byte order: "apple" < "Banana" < "cherry",
// and "_" < "-" < "1" < "a". kk uses the same order so that its generated
// files agree with kenkeep's.
//
// Collation keys are expensive, and almost every string kk sorts is plain
// ASCII, for which root collation reduces to two table lookups per byte:
// compare the strings by primary weight (letters case-folded, punctuation
// before digits before letters), and only when those are equal, by case
// (lower before upper). The tables are derived from the collator itself at
// start-up, and a test checks the fast path against it.

var CollatorPool = sync.Pool{New: func() any { return collate.New(language.Und) }}

var asciiPrimary, asciiCase = asciiTables()

// asciiTables ranks the printable ASCII characters by the collator: primary
// ranks ignore case, case ranks put lower case first.
func asciiTables() (primary, cases [128]byte) {
	var chars []string
	for c := 0x20; c < 0x7f; c++ {
		chars = append(chars, string(rune(c)))
	}
	folded := collate.New(language.Und, collate.IgnoreCase)
	full := collate.New(language.Und)
	slices.SortStableFunc(chars, func(a, b string) int { return full.CompareString(a, b) })
	rank := byte(1)
	for i, c := range chars {
		if i > 0 && folded.CompareString(chars[i-1], c) != 0 {
			rank++
		}
		primary[c[0]] = rank
		if c[0] >= 'A' && c[0] <= 'Z' {
			cases[c[0]] = 1
		}
	}
	return primary, cases
}

func isPlainASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] >= 0x7f {
			return false
		}
	}
	return true
}

// compareASCII compares two printable-ASCII strings by root collation.
func CompareASCII(a, b string) int {
	n := min(len(a), len(b))
	for i := 0; i < n; i++ {
		if pa, pb := asciiPrimary[a[i]], asciiPrimary[b[i]]; pa != pb {
			if pa < pb {
				return -1
			}
			return 1
		}
	}
	if len(a) != len(b) {
		if len(a) < len(b) {
			return -1
		}
		return 1
	}
	for i := 0; i < n; i++ {
		if ca, cb := asciiCase[a[i]], asciiCase[b[i]]; ca != cb {
			if ca < cb {
				return -1
			}
			return 1
		}
	}
	return 0
}

// LocaleCompare compares two strings by root collation, falling back to
// byte order for strings the collation considers equal.
func LocaleCompare(a, b string) int {
	if a == b {
		return 0
	}
	var r int
	if isPlainASCII(a) && isPlainASCII(b) {
		r = CompareASCII(a, b)
	} else {
		c := CollatorPool.Get().(*collate.Collator)
		r = c.CompareString(a, b)
		CollatorPool.Put(c)
	}
	if r != 0 {
		return r
	}
	return CmpString(a, b)
}

// localeSorter sorts strings by LocaleCompare, computing collation keys
// only for the strings that are not plain ASCII.
type localeSorter struct {
	keys  [][]byte // nil for plain ASCII strings
	ascii bool     // every string is plain ASCII
}

func newLocaleSorter(ss []string) localeSorter {
	ls := localeSorter{ascii: true}
	for _, s := range ss {
		if !isPlainASCII(s) {
			ls.ascii = false
			break
		}
	}
	if ls.ascii {
		return ls
	}
	c := CollatorPool.Get().(*collate.Collator)
	defer CollatorPool.Put(c)
	var buf collate.Buffer
	ls.keys = make([][]byte, len(ss))
	for i, s := range ss {
		ls.keys[i] = bytes.Clone(c.KeyFromString(&buf, s))
		buf.Reset()
	}
	return ls
}

// compare compares ss[i] and ss[j] (the slice given to newLocaleSorter).
func (ls localeSorter) compare(ss []string, i, j int) int {
	var r int
	if ls.ascii {
		r = CompareASCII(ss[i], ss[j])
	} else {
		r = bytes.Compare(ls.keys[i], ls.keys[j])
	}
	if r != 0 {
		return r
	}
	return CmpString(ss[i], ss[j])
}

// sortedOrder returns the indexes of ss in locale order.
func SortedOrder(ss []string) []int {
	ls := newLocaleSorter(ss)
	idx := make([]int, len(ss))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return ls.compare(ss, a, b) })
	return idx
}

// SortLocale sorts ss in place by root collation.
func SortLocale(ss []string) {
	idx := SortedOrder(ss)
	out := make([]string, len(ss))
	for i, j := range idx {
		out[i] = ss[j]
	}
	copy(ss, out)
}

func CmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// CompareUTF16 orders strings by UTF-16 code units, as JavaScript's default
// sort does. It differs from byte order only where one string has a
// character above U+FFFF and the other one in U+E000..U+FFFF at the first
// difference.
func CompareUTF16(a, b string) int {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	if i == len(a) || i == len(b) {
		return len(a) - len(b)
	}
	for i > 0 && !utf8.RuneStart(a[i]) {
		i--
	}
	ra, _ := utf8.DecodeRuneInString(a[i:])
	rb, _ := utf8.DecodeRuneInString(b[i:])
	if ka, kb := utf16Key(ra), utf16Key(rb); ka != kb {
		if ka < kb {
			return -1
		}
		return 1
	}
	return strings.Compare(a, b)
}

func UTF16Len(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}

// utf16Key maps a rune to its first UTF-16 code unit.
func utf16Key(r rune) rune {
	if r >= 0x10000 {
		return 0xD800 + (r-0x10000)>>10
	}
	return r
}
