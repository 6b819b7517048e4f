package index

import (
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kk-project/kk/internal/node"
)

// The analyzer turns text into the terms the full-text table holds and
// queries look for. Leaves and queries go through the same function, so a
// word is found however it was written:
//
//   - words are runs of letters, digits and underscores; everything else
//     separates them (paths and dotted names fall apart into their parts:
//     src/Entity/Ticket.php gives src, entiti, ticket, php);
//   - identifiers are split at underscores and case changes, and each part
//     is a term; the whole identifier, lowercased and without underscores,
//     is a term too, so that an exact identifier still outweighs its parts
//     (CacheBackendInterface gives cach, backend, interfac and
//     cachebackendinterface);
//   - accents are folded: a letter of the Latin, Greek or Cyrillic
//     scripts loses its combining marks (café, cafe and "cafe" followed
//     by U+0301 are one term), as SQLite's unicode61 tokenizer folds them;
//   - terms are lowercased and stemmed (Porter), stop words and
//     one-letter terms are dropped;
//   - a run of Chinese, Japanese or Korean characters, written without
//     spaces between words, gives each pair of neighbours as a term (see
//     analyzeUnspaced).

// maxWordLen bounds the words the analyzer keeps; longer runs (hashes,
// base64) are dropped.
const maxWordLen = 64

// analyze calls emit with each term of text, in order; whole is set for
// the term of a whole identifier that was also split into parts.
func analyze(text string, emit func(term string, whole bool)) {
	start, run := -1, -1 // the word, or the run of unspaced script, being read
	for i, r := range text {
		switch {
		case unspacedRune(r) || unicode.IsMark(r) && run >= 0:
			if start >= 0 {
				analyzeWord(text[start:i], emit)
				start = -1
			}
			if run < 0 {
				run = i
			}
			continue
		case run >= 0:
			analyzeUnspaced(text[run:i], emit)
			run = -1
		}
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) && start >= 0 {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			analyzeWord(text[start:i], emit)
			start = -1
		}
	}
	switch {
	case start >= 0:
		analyzeWord(text[start:], emit)
	case run >= 0:
		analyzeUnspaced(text[run:], emit)
	}
}

// unspacedRune reports whether r is written in a script that does not put
// spaces between its words: Han, Hiragana, Katakana (with its prolonged
// sound mark, ー, and the iteration mark 々) and Hangul, whose words run
// together in compounds, and Thai, Lao, Khmer and Myanmar.
func unspacedRune(r rune) bool {
	if r < 0x0e00 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul,
		unicode.Thai, unicode.Lao, unicode.Khmer, unicode.Myanmar) ||
		r == 'ー' || r == 'ｰ' || r == '々'
}

// analyzeUnspaced emits the terms of a run of a script written without
// spaces between words: each pair of neighbouring characters (the run
// 数据库迁移 gives 数据, 据库, 库迁 and 迁移), or the one character of a
// run of one, a character being a letter with the marks written on it
// (Thai's vowel and tone marks). Without spaces to tell where words end,
// overlapping bigrams find a word of any length at any place in the run,
// as the CJK analyzers of Lucene and Elasticsearch do; before, the whole
// run was one term (a sentence, which no question repeats) or, past
// maxWordLen bytes, none.
func analyzeUnspaced(run string, emit func(term string, whole bool)) {
	var starts []int // where each character (letter and marks) begins
	for i, r := range run {
		if !unicode.IsMark(r) || len(starts) == 0 {
			starts = append(starts, i)
		}
	}
	starts = append(starts, len(run))
	if len(starts) == 2 {
		emit(run, false)
		return
	}
	for i := 0; i+2 < len(starts); i++ {
		emit(run[starts[i]:starts[i+2]], false)
	}
}

// terms returns the terms of text.
func terms(text string) []string {
	var out []string
	analyze(text, func(t string, _ bool) { out = append(out, t) })
	return out
}

// analyzeWord emits the terms of one word (letters, digits, underscores).
func analyzeWord(w string, emit func(term string, whole bool)) {
	if len(w) > maxWordLen {
		return
	}
	if plainWord(w) {
		// Most words: one part, already lowercase.
		if len(w) >= 2 && !stopword(w) {
			emit(cachedStem(w), false)
		}
		return
	}
	w = foldMarks(w)
	parts := splitIdentifier(w)
	for _, p := range parts {
		if t := term(p); t != "" {
			emit(t, false)
		}
	}
	if len(parts) > 1 {
		whole := strings.ToLower(strings.ReplaceAll(w, "_", ""))
		if utf8.RuneCountInString(whole) > 1 && !stopword(whole) {
			emit(whole, true)
		}
	}
}

// foldMarks returns w without the combining marks of its Latin, Greek and
// Cyrillic letters (é, ü, ç, ё become e, u, c, е); marks of other scripts,
// where they are part of the spelling, stay.
func foldMarks(w string) string {
	ascii := true
	for i := 0; i < len(w); i++ {
		if w[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return w
	}
	var b strings.Builder
	var base rune
	for _, r := range norm.NFD.String(w) {
		if unicode.Is(unicode.Mn, r) && unicode.In(base, unicode.Latin, unicode.Greek, unicode.Cyrillic) {
			continue
		}
		if !unicode.IsMark(r) {
			base = r
		}
		b.WriteRune(r)
	}
	return norm.NFC.String(b.String())
}

// term lowercases and stems one word part; "" for a stop word or a
// one-letter part.
func term(p string) string {
	p = strings.ToLower(p)
	if utf8.RuneCountInString(p) < 2 || stopword(p) {
		return ""
	}
	return cachedStem(p)
}

// plainWord reports whether w is lowercase ASCII letters and digits only:
// a word with nothing to split or fold.
func plainWord(w string) bool {
	for i := 0; i < len(w); i++ {
		if c := w[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9') {
			return false
		}
	}
	return true
}

// The stems of the words seen so far, shared by every goroutine: text
// repeats its words, and stemming is the analyzer's main cost. The cache
// stops growing at stemCacheMax words.
var (
	stemCache     sync.Map // word → stem
	stemCacheSize atomic.Int64
)

const stemCacheMax = 200_000

func cachedStem(w string) string {
	if s, ok := stemCache.Load(w); ok {
		return s.(string)
	}
	s := stem(w)
	if stemCacheSize.Load() < stemCacheMax {
		if _, loaded := stemCache.LoadOrStore(strings.Clone(w), s); !loaded {
			stemCacheSize.Add(1)
		}
	}
	return s
}

// splitIdentifier splits a word at underscores and case changes:
// hook_entity_presave, setIfOwner and HTMLParser become hook entity
// presave, set If Owner and HTML Parser; the s of a plural acronym stays
// with it (APIs). Digits stay with the letters before them (psr3, utf8).
func splitIdentifier(w string) []string {
	var parts []string
	rs := []rune(w)
	start := 0
	flush := func(end int) {
		if end > start {
			parts = append(parts, string(rs[start:end]))
		}
		start = end
	}
	for i, r := range rs {
		switch {
		case r == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r):
			prev := rs[i-1]
			if unicode.IsLower(prev) || unicode.IsDigit(prev) {
				flush(i)
			} else if unicode.IsUpper(prev) && i+1 < len(rs) && unicode.IsLower(rs[i+1]) && !pluralTail(rs[i+1:]) {
				flush(i)
			}
		}
	}
	flush(len(rs))
	return parts
}

// pluralTail reports whether rest, what follows an uppercase letter, is
// the "s" of a plural acronym (APIs, IDs, URLs), which stays with it.
func pluralTail(rest []rune) bool {
	return len(rest) == 1 && rest[0] == 's' || len(rest) > 1 && rest[0] == 's' && !unicode.IsLower(rest[1])
}

// stopwords are English function words, and the words a question or a
// ticket wraps its subject in; they are neither indexed nor searched.
var stopwords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`
	a about above after again against all almost also although always am an and another any anyone anything
	are aren around as at be because been before being below between both but by can cannot could couldn
	did didn do does doesn doing don done down during each either else etc even ever every for from further
	had hadn has hasn have haven having he her here hers herself him himself his how however i if in into is
	isn it its itself just least less let ll lot lots may me might mine more most much must mustn my myself
	neither no nor not now of off often on once one only onto or other others otherwise our ours ourselves out
	over own per perhaps please quite rather re really same shall shan she should shouldn since so some
	somehow someone something sometimes still such than that the their theirs them themselves then there
	these they this those though through thus to too toward towards under until up upon us use used uses using
	ve very via was
	wasn we were weren what whatever when whenever where wherever whether which while who whoever whom whose
	why will with within without won would wouldn yet you your yours yourself yourselves

	actually anybody anyway basically correct correctly currently exactly fine hello help hi idea instead
	know like likely maybe mean need needed needs ok okay right seem seems sure thanks thank think trying
	want wanted wants way ways went whats wonder wondering`) {
		stopwords[w] = true
	}
}

func stopword(w string) bool { return stopwords[w] }

// authoredText returns the parts of a leaf body a person wrote: without
// the generated Related and Citations blocks, HTML comments, link targets
// (the text of a link is kept) and bare URLs. A leaf linking another thus
// does not match that leaf's words.
func authoredText(body string) string {
	body = node.WithoutGeneratedBlocks(body)
	var b strings.Builder
	b.Grow(len(body))
	for i := 0; i < len(body); {
		switch {
		case strings.HasPrefix(body[i:], "<!--"):
			j := strings.Index(body[i+4:], "-->")
			if j < 0 {
				i = len(body)
				continue
			}
			i += 4 + j + 3
			b.WriteByte(' ')
		case body[i] == ']' && i+1 < len(body) && body[i+1] == '(':
			// [text](target): keep the text, drop the target.
			j := strings.IndexByte(body[i+2:], ')')
			nl := strings.IndexByte(body[i+2:], '\n')
			if j < 0 || (nl >= 0 && nl < j) {
				b.WriteByte(body[i])
				i++
				continue
			}
			b.WriteByte(' ')
			i += 2 + j + 1
		case isURLStart(body, i):
			j := i
			for j < len(body) && !isURLEnd(body[j]) {
				j++
			}
			b.WriteByte(' ')
			i = j
		default:
			b.WriteByte(body[i])
			i++
		}
	}
	return b.String()
}

func isURLStart(s string, i int) bool {
	if i > 0 && (isWordByte(s[i-1])) {
		return false
	}
	return strings.HasPrefix(s[i:], "https://") || strings.HasPrefix(s[i:], "http://")
}

func isURLEnd(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\r', ')', '>', '"', '\'', '`', ']':
		return true
	}
	return false
}

func isWordByte(c byte) bool {
	return c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}
