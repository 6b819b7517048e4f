package frontmatter

import (
	"bytes"
	"strconv"
	"strings"
	"unicode/utf8"
)

// parseSimple decodes the restricted YAML that kk and kenkeep write (and
// most people hand-write): one "key: value" per line, with values that are
// plain, single-quoted or escape-free double-quoted scalars, [] or {}, folded ">-" blocks, and block
// sequences of such scalars indented by two spaces. It is an order of
// magnitude faster than the general parser, which matters when a command
// reads ten thousand leaves.
//
// It is deliberately conservative: on anything outside that subset — a
// comment, a blank line, a double-quoted or multi-line scalar, anything
// that could resolve to a type other than string, int, bool or null — it
// returns ok == false and the caller uses the full YAML parser. When it
// returns ok == true, the result equals what the full parser gives; tests
// and a fuzz target compare the two.
func parseSimple(text []byte) (segs []segment, values map[string]any, ok bool) {
	if !utf8.Valid(text) {
		return nil, nil, false
	}
	lines := splitLinesKeep(text)
	offsets := make([]int, len(lines)+1)
	for j, l := range lines {
		offsets[j+1] = offsets[j] + len(l)
	}
	values = make(map[string]any, 16)
	for i := 0; i < len(lines); {
		line := trimNL(lines[i])
		key, rest, found := bytes.Cut(line, []byte(":"))
		if !found || !isSimpleKey(key) {
			return nil, nil, false
		}
		k := string(key)
		if _, dup := values[k]; dup {
			return nil, nil, false
		}
		start := i
		i++
		var v any
		switch {
		case len(rest) == 0:
			// A block sequence follows, or nothing (null).
			var items []any
			for i < len(lines) && bytes.HasPrefix(lines[i], []byte("  - ")) {
				item, next, ok := simpleItem(lines, i)
				if !ok {
					return nil, nil, false
				}
				items = append(items, item)
				i = next
			}
			if items == nil {
				v = nil
			} else {
				v = items
			}
		case rest[0] != ' ':
			return nil, nil, false
		default:
			val := rest[1:]
			if bytes.Equal(val, []byte(">-")) {
				s, next, ok := foldedBlock(lines, i, "  ")
				if !ok {
					return nil, nil, false
				}
				v, i = s, next
				break
			}
			s, ok := simpleScalar(val)
			if !ok {
				return nil, nil, false
			}
			v = s
		}
		if i < len(lines) && (lines[i][0] == ' ' || lines[i][0] == '\t') {
			return nil, nil, false // an indented line that belongs to nothing we know
		}
		values[k] = v
		raw := text[offsets[start]:offsets[i]:offsets[i]]
		if raw[len(raw)-1] != '\n' {
			raw = append(raw, '\n') // the capacity limit makes this copy
		}
		segs = append(segs, segment{key: k, raw: raw, line: start + 1})
	}
	if len(segs) == 0 {
		return nil, nil, false
	}
	return segs, values, true
}

func trimNL(b []byte) []byte {
	return bytes.TrimSuffix(b, []byte("\n"))
}

func isSimpleKey(k []byte) bool {
	// YAML allows an implicit key of at most 1024 characters.
	if len(k) == 0 || len(k) > 1024 {
		return false
	}
	for i, c := range k {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		case i > 0 && (c >= '0' && c <= '9' || c == '-'):
		default:
			return false
		}
	}
	return true
}

// simpleItem decodes the sequence item at lines[i] ("  - value").
func simpleItem(lines [][]byte, i int) (any, int, bool) {
	val := trimNL(lines[i])[4:]
	if bytes.Equal(val, []byte(">-")) {
		return foldedBlock(lines, i+1, "    ")
	}
	v, ok := simpleScalar(val)
	return v, i + 1, ok
}

// foldedBlock decodes the lines of a ">-" scalar starting at lines[i], each
// indented by exactly indent, with no blank or more-indented lines: they
// fold into one line joined by spaces.
func foldedBlock(lines [][]byte, i int, indent string) (string, int, bool) {
	var parts []string
	for i < len(lines) && bytes.HasPrefix(lines[i], []byte(indent)) {
		l := trimNL(lines[i])[len(indent):]
		if len(l) == 0 || l[0] == ' ' || l[len(l)-1] == ' ' || l[0] == '#' || hasOddChars(l) || bytes.Contains(l, []byte(" #")) {
			return "", 0, false
		}
		parts = append(parts, string(l))
		i++
	}
	if len(parts) == 0 {
		return "", 0, false
	}
	return strings.Join(parts, " "), i, true
}

// simpleScalar decodes a one-line plain or single-quoted scalar.
func simpleScalar(v []byte) (any, bool) {
	if len(v) == 0 {
		return nil, false
	}
	if hasOddChars(v) {
		return nil, false
	}
	switch v[0] {
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return nil, false
		}
		inner := v[1 : len(v)-1]
		for j := 0; j < len(inner); j++ {
			if inner[j] == '\'' {
				if j+1 < len(inner) && inner[j+1] == '\'' {
					j++
					continue
				}
				return nil, false
			}
		}
		return string(bytes.ReplaceAll(inner, []byte("''"), []byte("'"))), true
	case '"':
		// Only the escape-free form: "text" with no backslash or quote inside.
		if len(v) < 2 || v[len(v)-1] != '"' || bytes.ContainsAny(v[1:len(v)-1], "\\\"") {
			return nil, false
		}
		return string(v[1 : len(v)-1]), true
	case '[':
		if len(v) == 2 && v[1] == ']' {
			return []any{}, true
		}
		return nil, false
	case '{':
		if len(v) == 2 && v[1] == '}' {
			return map[string]any{}, true
		}
		return nil, false
	case '-', '?', ':', ',', ']', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', ' ', '~', '+', '.':
		return nil, false
	}
	if v[len(v)-1] == ' ' || v[len(v)-1] == ':' || bytes.Contains(v, []byte(": ")) || bytes.Contains(v, []byte(" #")) {
		return nil, false
	}
	s := string(v)
	if v[0] >= '0' && v[0] <= '9' {
		if isSmallInt(s) {
			n, err := strconv.ParseInt(s, 10, 64)
			return n, err == nil
		}
		return nil, false // numbers, dates and the like: leave to the full parser
	}
	switch s {
	case "null", "Null", "NULL":
		return nil, true
	case "true", "True", "TRUE":
		return true, true
	case "false", "False", "FALSE":
		return false, true
	}
	if isSpecialWord(s) {
		return nil, false
	}
	return s, true
}

func isSmallInt(s string) bool {
	if len(s) == 0 || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isSpecialWord reports words YAML parsers may resolve to something other
// than a string (.inf, .nan and YAML 1.1 booleans); they go to the full
// parser.
func isSpecialWord(s string) bool {
	switch strings.ToLower(s) {
	case "y", "n", "yes", "no", "on", "off", "nan", "inf":
		return true
	}
	return false
}

// hasOddChars reports characters outside YAML's printable set (C0 and C1
// controls, DEL, U+FFFE and U+FFFF; the YAML parser refuses them) and the
// characters YAML treats as line breaks or byte order marks (NEL, LS, PS,
// BOM). b is valid UTF-8.
func hasOddChars(b []byte) bool {
	for i := 0; i < len(b); {
		c := b[i]
		if c < 0x80 {
			if c < 0x20 || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRune(b[i:])
		switch {
		case r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029, r == 0xfeff, r == 0xfffe, r == 0xffff:
			return true
		}
		i += size
	}
	return false
}
