package index

// stem reduces an English word (lowercase ASCII letters) to its stem with
// M. F. Porter's algorithm ("An algorithm for suffix stripping", 1980), the
// one SQLite's porter tokenizer applies: retrying, retries and retried all
// become retri. Words of fewer than three letters, and words holding
// anything but a-z, are returned as they are.
func stem(w string) string {
	if len(w) < 3 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return w
		}
	}
	s := porter{b: []byte(w)}
	s.step1ab()
	s.step1c()
	s.step2()
	s.step3()
	s.step4()
	s.step5()
	return string(s.b)
}

type porter struct {
	b []byte
}

// cons reports whether b[i] is a consonant: not a vowel, and a y only when
// it follows a vowel (or starts the word).
func (p *porter) cons(i int) bool {
	switch p.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !p.cons(i-1)
	}
	return true
}

// measure is m in [C](VC)^m[V] for the first n letters.
func (p *porter) measure(n int) int {
	m, i := 0, 0
	for i < n && p.cons(i) {
		i++
	}
	for i < n {
		for i < n && !p.cons(i) {
			i++
		}
		if i >= n {
			break
		}
		m++
		for i < n && p.cons(i) {
			i++
		}
	}
	return m
}

// hasVowel reports whether the first n letters hold a vowel.
func (p *porter) hasVowel(n int) bool {
	for i := range n {
		if !p.cons(i) {
			return true
		}
	}
	return false
}

// doubleCons reports whether the first n letters end with a double consonant.
func (p *porter) doubleCons(n int) bool {
	return n >= 2 && p.b[n-1] == p.b[n-2] && p.cons(n-1)
}

// cvc reports whether the first n letters end consonant-vowel-consonant,
// the last not w, x or y (hop, not hoop or box).
func (p *porter) cvc(n int) bool {
	if n < 3 || !p.cons(n-1) || p.cons(n-2) || !p.cons(n-3) {
		return false
	}
	switch p.b[n-1] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

func (p *porter) ends(suffix string) bool {
	n := len(p.b)
	return n >= len(suffix) && string(p.b[n-len(suffix):]) == suffix
}

// replace swaps the suffix (which the word ends with) for to.
func (p *porter) replace(suffix, to string) {
	p.b = append(p.b[:len(p.b)-len(suffix)], to...)
}

// rule is one suffix replacement of steps 2 to 4.
type rule struct{ suffix, to string }

// apply finds the first rule whose suffix ends the word and, when the stem
// left before it has a measure above min, replaces it. Only the first
// matching rule is considered, as the algorithm says.
func (p *porter) apply(rules []rule, min int) {
	for _, r := range rules {
		if p.ends(r.suffix) {
			if p.measure(len(p.b)-len(r.suffix)) > min {
				p.replace(r.suffix, r.to)
			}
			return
		}
	}
}

func (p *porter) step1ab() {
	switch {
	case p.ends("sses"):
		p.replace("sses", "ss")
	case p.ends("ies"):
		p.replace("ies", "i")
	case p.ends("ss"):
	case p.ends("s"):
		p.replace("s", "")
	}
	switch {
	case p.ends("eed"):
		if p.measure(len(p.b)-3) > 0 {
			p.replace("eed", "ee")
		}
		return
	case p.ends("ed") && p.hasVowel(len(p.b)-2):
		p.replace("ed", "")
	case p.ends("ing") && p.hasVowel(len(p.b)-3):
		p.replace("ing", "")
	default:
		return
	}
	n := len(p.b)
	switch {
	case p.ends("at"):
		p.replace("at", "ate")
	case p.ends("bl"):
		p.replace("bl", "ble")
	case p.ends("iz"):
		p.replace("iz", "ize")
	case p.doubleCons(n):
		if c := p.b[n-1]; c != 'l' && c != 's' && c != 'z' {
			p.b = p.b[:n-1]
		}
	case p.measure(n) == 1 && p.cvc(n):
		p.b = append(p.b, 'e')
	}
}

func (p *porter) step1c() {
	if p.ends("y") && p.hasVowel(len(p.b)-1) {
		p.b[len(p.b)-1] = 'i'
	}
}

var step2Rules = []rule{
	{"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
	{"bli", "ble"}, {"alli", "al"}, {"entli", "ent"}, {"eli", "e"}, {"ousli", "ous"},
	{"ization", "ize"}, {"ation", "ate"}, {"ator", "ate"}, {"alism", "al"}, {"iveness", "ive"},
	{"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"}, {"iviti", "ive"}, {"biliti", "ble"},
	{"logi", "log"},
}

func (p *porter) step2() { p.apply(step2Rules, 0) }

var step3Rules = []rule{
	{"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"}, {"ical", "ic"}, {"ful", ""}, {"ness", ""},
}

func (p *porter) step3() { p.apply(step3Rules, 0) }

var step4Rules = []rule{
	{"al", ""}, {"ance", ""}, {"ence", ""}, {"er", ""}, {"ic", ""}, {"able", ""}, {"ible", ""}, {"ant", ""},
	{"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""}, {"ism", ""}, {"ate", ""}, {"iti", ""},
	{"ous", ""}, {"ive", ""}, {"ize", ""},
}

func (p *porter) step4() {
	for _, r := range step4Rules {
		if !p.ends(r.suffix) {
			continue
		}
		n := len(p.b) - len(r.suffix)
		if r.suffix == "ion" && (n == 0 || (p.b[n-1] != 's' && p.b[n-1] != 't')) {
			return
		}
		if p.measure(n) > 1 {
			p.b = p.b[:n]
		}
		return
	}
}

func (p *porter) step5() {
	n := len(p.b)
	if p.ends("e") {
		m := p.measure(n - 1)
		if m > 1 || (m == 1 && !p.cvc(n-1)) {
			p.b = p.b[:n-1]
		}
	}
	n = len(p.b)
	if p.ends("ll") && p.measure(n) > 1 {
		p.b = p.b[:n-1]
	}
}
