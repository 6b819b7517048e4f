package codex

import (
	"strconv"
	"strings"
)

// tomlEntry is one `key = value` line of a TOML file, with the table it
// sits in. kk only reads Codex's config.toml for doctor findings, so this
// is a line scanner, not a TOML parser: it knows tables, dotted and quoted
// keys, comments, and multi-line strings and arrays (which it skips).
type tomlEntry struct {
	table []string
	key   []string
	value string // the raw value, comment stripped
	line  int
}

// tomlHeader is one [table] or [[array]] header.
type tomlHeader struct {
	path []string
	line int
}

// scanTOML returns the headers and entries of a TOML document.
func scanTOML(data string) ([]tomlHeader, []tomlEntry) {
	var headers []tomlHeader
	var entries []tomlEntry
	var table []string
	depth, inString := 0, ""
	for i, raw := range strings.Split(data, "\n") {
		line := strings.TrimSpace(raw)
		if inString != "" { // inside a multi-line string
			if strings.Count(line, inString)%2 == 1 {
				inString = ""
			}
			continue
		}
		if depth > 0 { // inside a multi-line array or inline table
			depth += nesting(line)
			continue
		}
		line = stripComment(line)
		if line == "" {
			continue
		}
		if strings.HasPrefix(line, "[") {
			inner := strings.Trim(line, "[] \t")
			table = splitKey(inner)
			headers = append(headers, tomlHeader{path: table, line: i + 1})
			continue
		}
		eq := indexOutside(line, '=')
		if eq < 0 {
			continue
		}
		value := strings.TrimSpace(line[eq+1:])
		entries = append(entries, tomlEntry{table: table, key: splitKey(line[:eq]), value: value, line: i + 1})
		for _, q := range []string{`"""`, `'''`} {
			if strings.HasPrefix(value, q) && strings.Count(value, q) == 1 {
				inString = q
			}
		}
		depth = nesting(value)
	}
	return headers, entries
}

// nesting is the change in bracket depth over s, outside strings.
func nesting(s string) int {
	n, quote := 0, byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == '[' || c == '{':
			n++
		case c == ']' || c == '}':
			n--
		case c == '#':
			return n
		}
	}
	return n
}

// indexOutside returns the index of the first b in s outside quotes.
func indexOutside(s string, b byte) int {
	quote := byte(0)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case quote != 0:
			if c == '\\' && quote == '"' {
				i++
			} else if c == quote {
				quote = 0
			}
		case c == '"' || c == '\'':
			quote = c
		case c == b:
			return i
		}
	}
	return -1
}

// stripComment removes a # comment from a line.
func stripComment(s string) string {
	if i := indexOutside(s, '#'); i >= 0 {
		s = s[:i]
	}
	return strings.TrimSpace(s)
}

// splitKey splits a dotted key into its parts, unquoting quoted parts.
func splitKey(s string) []string {
	var parts []string
	for {
		i := indexOutside(s, '.')
		part := s
		if i >= 0 {
			part = s[:i]
		}
		parts = append(parts, unquoteKey(strings.TrimSpace(part)))
		if i < 0 {
			return parts
		}
		s = s[i+1:]
	}
}

// unquoteKey returns a bare, "basic" or 'literal' key's text.
func unquoteKey(s string) string {
	if len(s) >= 2 && s[0] == '"' && s[len(s)-1] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	if len(s) >= 2 && s[0] == '\'' && s[len(s)-1] == '\'' {
		return s[1 : len(s)-1]
	}
	return s
}

// tomlString returns the text of a quoted string value.
func tomlString(value string) (string, bool) {
	if len(value) >= 2 && (value[0] == '"' || value[0] == '\'') && value[len(value)-1] == value[0] {
		return unquoteKey(value), true
	}
	return "", false
}
