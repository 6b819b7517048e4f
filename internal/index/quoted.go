package index

import (
	"cmp"
	"slices"
	"strings"
	"unicode"
)

// Material pasted beside a question. A prompt is often a question and
// what it is about: a log, a stack trace, a function. The question says
// what is asked; the material is evidence, and its many names (frames,
// paths, addresses) would otherwise outweigh the question's few words. So
// the text is split into its prose and its quoted material:
//
//   - a fenced block (``` or ~~~, as Markdown has it) is quoted;
//   - so is a paragraph (lines between blank lines) of at least
//     quotedMinLen bytes whose words are less than quotedMaxStop stop
//     words: natural language is about two-fifths function words (the
//     prompts of the public query sets: 0.30 at least, for a paragraph of
//     100 bytes or more), logs, traces and code a tenth of that or less.
//     This is the stop-word density that boilerplate removal (jusText,
//     Pomikálek 2011) tells prose from the rest of a page by;
//   - and, inside a paragraph, a run of quotedMinLines lines or more
//     (quotedMinLen bytes in all) none of which reads as prose by that
//     measure: a trace pasted right under "I get this when saving:".
//
// Everything else is prose, short keyword lines included ("entity cache
// tags" has no stop word, and is the question). See textTerms for how the
// two parts are weighed.
const (
	quotedMinLen   = 100
	quotedMaxStop  = 0.25
	quotedMinLines = 3
)

// splitQuoted returns the prose of text and its quoted material (see
// above), each as the lines it holds.
func splitQuoted(text string) (prose, quoted string) {
	var p, q strings.Builder
	var para []string
	write := func(b *strings.Builder, lines []string) {
		for _, l := range lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
	}
	flush := func() {
		if len(para) == 0 {
			return
		}
		rest, runs := splitRuns(para)
		write(&q, runs)
		para = para[:0]
		if block := strings.Join(rest, "\n"); len(block) >= quotedMinLen && stopShare(block) < quotedMaxStop {
			write(&q, rest)
		} else {
			write(&p, rest)
		}
	}
	fence := "" // the open fence's characters, "" outside a fenced block
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if closesFence(fence, t) {
				fence = ""
				continue
			}
			q.WriteString(strings.TrimRight(line, "\r\n"))
			q.WriteByte('\n')
		case opensFence(t) != "":
			flush()
			fence = opensFence(t)
		case t == "":
			flush()
		default:
			para = append(para, strings.TrimRight(line, "\r\n"))
		}
	}
	flush()
	return p.String(), q.String()
}

// opensFence returns the fence a line (trimmed) opens, "" when it opens
// none: three or more backticks or tildes, and a longer fence closes only
// with as many.
func opensFence(t string) string {
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return ""
	}
	return t[:len(t)-len(strings.TrimLeft(t, t[:1]))]
}

// closesFence reports whether a line (trimmed) closes the open fence.
func closesFence(fence, t string) bool {
	return strings.HasPrefix(t, fence) && strings.Trim(t, fence[:1]) == ""
}

// fenceAt returns the fence open at the end of text, "" when none is.
func fenceAt(text string) string {
	fence := ""
	for line := range strings.Lines(text) {
		t := strings.TrimSpace(line)
		switch {
		case fence != "":
			if closesFence(fence, t) {
				fence = ""
			}
		default:
			fence = opensFence(t)
		}
	}
	return fence
}

// maxSearchText bounds the text a search reads: a prompt with a pasted
// log of megabytes is read as its first and last maxSearchText/2 bytes
// (whole lines), the question being at one end or the other ("I get this:
// <log> Why?"), and a log's failure usually at its end. Lucene's
// MoreLikeThis reads at most 5,000 tokens of a document for the same
// reason; 256 KB is about 25,000 of a log's. Before, a 3.6 MB pasted log
// took the prompt-context hook past its 1 s deadline on a busy machine,
// and it injected nothing.
const maxSearchText = 256 << 10

// boundText returns text whole when it is at most maxSearchText bytes,
// else its first and last maxSearchText/2 bytes, cut at line ends, with a
// blank line between them (the two do not make one paragraph) and a fence
// open at the cut closed before it and opened again after it, so that
// each line left is prose or quoted material as it was in the whole text.
func boundText(text string) string {
	if len(text) <= maxSearchText {
		return text
	}
	head := text[:maxSearchText/2]
	if i := strings.LastIndexByte(head, '\n'); i >= 0 {
		head = head[:i+1]
	}
	tail := text[len(text)-maxSearchText/2:]
	if i := strings.IndexByte(tail, '\n'); i >= 0 {
		tail = tail[i+1:]
	}
	var b strings.Builder
	b.Grow(len(head) + len(tail) + 32)
	b.WriteString(head)
	if !strings.HasSuffix(head, "\n") {
		b.WriteByte('\n')
	}
	if f := fenceAt(head); f != "" {
		b.WriteString(f + "\n")
	}
	b.WriteByte('\n')
	if f := fenceAt(text[:len(text)-len(tail)]); f != "" {
		b.WriteString(f + "\n")
	}
	b.WriteString(tail)
	return b.String()
}

// splitRuns takes out of the lines of a paragraph the runs of at least
// quotedMinLines consecutive lines, quotedMinLen bytes in all, in which no
// line reads as prose (see readsAsProse; a line without a word, a brace or
// a rule, joins a run): a trace or a log pasted under the sentence that
// introduces it, with no blank line between them. It returns the other
// lines and the runs' lines, each in order.
func splitRuns(lines []string) (rest, runs []string) {
	start := -1
	end := func(i int) {
		if start < 0 {
			return
		}
		run := lines[start:i]
		n := 0
		for _, l := range run {
			n += len(l) + 1
		}
		if len(run) >= quotedMinLines && n >= quotedMinLen {
			runs = append(runs, run...)
		} else {
			rest = append(rest, run...)
		}
		start = -1
	}
	for i, l := range lines {
		if !readsAsProse(l) {
			if start < 0 {
				start = i
			}
			continue
		}
		end(i)
		rest = append(rest, l)
	}
	end(len(lines))
	return rest, runs
}

// readsAsProse reports whether a line reads as something a person typed
// rather than pasted: a sentence (a quarter of its words or more stop
// words, and fewer than one code symbol, such as a bracket, an operator
// or a slash, in ten characters: "if err != nil {" has the stop word but
// not the look), or two words or more and nothing but words, spaces and
// the punctuation of a sentence (keywords: "deploy kubernetes ingress with
// helm charts", not indented). Lines of logs, traces and code carry
// brackets, slashes, colons, quotes or operators, are indented, or are a
// single word ("return").
func readsAsProse(l string) bool {
	if stopShare(l) >= quotedMaxStop && hasWord(l) {
		chars, symbols := 0, 0
		for _, r := range l {
			if !unicode.IsSpace(r) {
				chars++
				if strings.ContainsRune(codeSymbols, r) {
					symbols++
				}
			}
		}
		if 10*symbols < chars {
			return true
		}
	}
	if l != strings.TrimLeft(l, " \t") {
		return false // indented: a line of code or of a trace
	}
	words := 0
	inWord := false
	for _, r := range l {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_':
			if !inWord {
				words++
			}
			inWord = true
			continue
		case unicode.IsSpace(r) || strings.ContainsRune("-'.,?!", r):
		default:
			return false
		}
		inWord = false
	}
	return words >= 2
}

// codeSymbols are the characters code, paths and logs are made of and
// sentences rarely hold.
const codeSymbols = "{}[]<>=;|\\/()\"`#$%^&*@~:+"

// hasWord reports whether s holds a letter or a digit.
func hasWord(s string) bool {
	return strings.IndexFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) >= 0
}

// stopShare is the share of the words of s (runs of letters, digits and
// underscores) that are stop words; 1 when s has no word.
func stopShare(s string) float64 {
	words, stop := 0, 0
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return r != '_' && !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		words++
		if stopword(strings.ToLower(w)) {
			stop++
		}
	}
	if words == 0 {
		return 1
	}
	return float64(stop) / float64(words)
}

// textTerms returns the distinct terms of a searched text, the prose's
// first, and how many of them are the prose's (own). A term only the
// quoted material holds follows them; when there are more such terms than
// the prose has, each weighs own/their number instead of 1, so that the
// material together weighs at most what the question does (mass
// balance: a 40-frame stack trace does not outvote a one-line question).
// A text without prose (keywords, or only a pasted error) is all its own
// terms at weight 1, as before the split.
func textTerms(text string) (q []queryTerm, own int) {
	prose, quoted := splitQuoted(text)
	if quoted == "" {
		q = queryTerms(text)
		return q, len(q)
	}
	q = queryTerms(prose)
	own = len(q)
	if own == 0 {
		q = queryTerms(text)
		return q, len(q)
	}
	seen := make(map[string]bool, own)
	for _, t := range q {
		seen[t.term] = true
	}
	var more []queryTerm
	for _, t := range queryTerms(quoted) {
		if !seen[t.term] {
			t.quoted = true
			more = append(more, t)
		}
	}
	if len(more) > own {
		w := float64(own) / float64(len(more))
		for i := range more {
			more[i].weight = w
		}
	}
	return append(q, more...), own
}

// maxQuotedTerms bounds the terms of pasted material a search keeps (see
// tellingMaterial): a pasted log of thousands of lines has thousands of
// distinct terms, and the candidate query over all of them cost 0.6 s of
// a 120 KB prompt's 0.8 s at 10,000 leaves. Lucene's MoreLikeThis keeps
// 25 terms of a document; 64 ranked every public query set with every
// paste of testdata/retrieval/pasted as all of them did.
const maxQuotedTerms = 64

// tellingMaterial keeps, of the material's terms q[own:] (their document
// frequencies looked up), the maxQuotedTerms that best tell it apart: the
// highest by their count in the material times their idf, among those some
// leaf holds (MoreLikeThis's choice). Their weights stay as textTerms set
// them, so the material weighs no more for being cut.
func tellingMaterial(text string, q []queryTerm, own int) []queryTerm {
	if len(q)-own <= maxQuotedTerms {
		return q
	}
	_, quoted := splitQuoted(text)
	tf := map[string]int{}
	analyze(quoted, func(t string, _ bool) { tf[t]++ })
	more := slices.DeleteFunc(slices.Clone(q[own:]), func(t queryTerm) bool { return t.df == 0 })
	slices.SortStableFunc(more, func(a, b queryTerm) int {
		return cmp.Compare(float64(tf[b.term])*b.idf, float64(tf[a.term])*a.idf)
	})
	return append(q[:own:own], more[:min(maxQuotedTerms, len(more))]...)
}
