package harness

import (
	"encoding/json"
	"strings"
)

// ExtractJSON returns the JSON object in a headless run's answer text:
// the whole text when it is one, else the first fenced code block that is
// one, else the last balanced {…} span that is valid JSON; "" when there
// is none.
func ExtractJSON(text string) string {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "{") && json.Valid([]byte(t)) {
		return t
	}
	rest := t
	for {
		i := strings.Index(rest, "```")
		if i < 0 {
			break
		}
		rest = rest[i+3:]
		nl := strings.IndexByte(rest, '\n')
		if nl < 0 {
			break
		}
		end := strings.Index(rest[nl+1:], "```")
		if end < 0 {
			break
		}
		block := strings.TrimSpace(rest[nl+1 : nl+1+end])
		if strings.HasPrefix(block, "{") && json.Valid([]byte(block)) {
			return block
		}
		rest = rest[nl+1+end+3:]
	}
	last := ""
	for start := 0; start < len(t); start++ {
		if t[start] != '{' {
			continue
		}
		if end := balancedEnd(t, start); end > 0 && json.Valid([]byte(t[start:end])) {
			last = t[start:end]
			start = end - 1
		}
	}
	return last
}

// balancedEnd returns the index just past the brace that closes the one at
// start, skipping braces inside JSON strings; 0 when it is never closed.
func balancedEnd(s string, start int) int {
	depth, inString, escaped := 0, false, false
	for i := start; i < len(s); i++ {
		c := s[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{':
			depth++
		case c == '}':
			depth--
			if depth == 0 {
				return i + 1
			}
		}
	}
	return 0
}
