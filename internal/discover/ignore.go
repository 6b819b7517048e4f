package discover

import (
	"bufio"
	"bytes"
	"fmt"
	"regexp"
	"strings"
)

// Ignore is a list of gitignore-syntax patterns relative to one folder (the
// repository root for .kkignore). The last pattern that matches a path
// decides; a path inside an ignored folder is ignored whatever later
// patterns say, as in git.
type Ignore struct {
	rules []ignoreRule
}

type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
}

// ParseIgnore compiles the patterns of a gitignore-syntax file. name is
// used in errors.
func ParseIgnore(name string, src []byte) (*Ignore, error) {
	ig := &Ignore{}
	sc := bufio.NewScanner(bytes.NewReader(src))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line := 0
	for sc.Scan() {
		line++
		r, ok, err := compilePattern(sc.Text())
		if err != nil {
			return nil, fmt.Errorf("%s: line %d: %w", name, line, err)
		}
		if ok {
			ig.rules = append(ig.rules, r)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return ig, nil
}

// Empty reports whether the file held no patterns.
func (ig *Ignore) Empty() bool { return ig == nil || len(ig.rules) == 0 }

// Match reports whether the slash-separated relative path rel (a folder
// when dir is set) is ignored by the patterns themselves, without looking
// at its parent folders.
func (ig *Ignore) Match(rel string, dir bool) bool {
	if ig == nil {
		return false
	}
	ignored := false
	for _, r := range ig.rules {
		if r.dirOnly && !dir {
			continue
		}
		if r.re.MatchString(rel) {
			ignored = !r.negate
		}
	}
	return ignored
}

// Ignored reports whether rel (a file, or a folder when dir is set) is
// ignored: itself, or any folder above it.
func (ig *Ignore) Ignored(rel string, dir bool) bool {
	if ig.Empty() {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && ig.Match(rel[:i], true) {
			return true
		}
	}
	return ig.Match(rel, dir)
}

// compilePattern turns one line of a gitignore file into a rule; ok is
// false for blank lines and comments.
func compilePattern(line string) (r ignoreRule, ok bool, err error) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpaces(line)
	if line == "" || line[0] == '#' {
		return r, false, nil
	}
	if line[0] == '!' {
		r.negate = true
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") && !strings.HasSuffix(line, `\/`) {
		r.dirOnly = true
		line = strings.TrimRight(line, "/")
	}
	if line == "" {
		return r, false, nil
	}
	// A slash at the start or in the middle anchors the pattern to the
	// folder of the ignore file; otherwise it matches at any depth.
	anchored := strings.Contains(line, "/")
	line = strings.TrimPrefix(line, "/")
	var b strings.Builder
	b.WriteString("^")
	if !anchored {
		b.WriteString("(?:.*/)?")
	}
	for i := 0; i < len(line); {
		c := line[i]
		switch {
		case c == '*' && strings.HasPrefix(line[i:], "**") && (i == 0 || line[i-1] == '/') && (i+2 == len(line) || line[i+2] == '/'):
			// "**" as a whole path segment: any number of folders.
			switch {
			case i+2 == len(line) && i == 0:
				b.WriteString(".*")
			case i+2 == len(line):
				b.WriteString(".*") // "a/**": everything inside a
			default:
				b.WriteString("(?:.*/)?")
				i++ // the slash after ** is part of the group
			}
			i += 2
		case c == '*':
			for i < len(line) && line[i] == '*' {
				i++
			}
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
			i++
		case c == '[':
			class, n := bracket(line[i:])
			if n == 0 {
				b.WriteString(`\[`)
				i++
				continue
			}
			b.WriteString(class)
			i += n
		case c == '\\' && i+1 < len(line):
			b.WriteString(regexp.QuoteMeta(line[i+1 : i+2]))
			i += 2
		default:
			b.WriteString(regexp.QuoteMeta(line[i : i+1]))
			i++
		}
	}
	b.WriteString("$")
	re, err := regexp.Compile(b.String())
	if err != nil {
		return r, false, fmt.Errorf("invalid pattern %q: %v", line, err)
	}
	r.re = re
	return r, true, nil
}

// bracket translates a bracket expression at the start of s into a regexp
// class and returns it with the number of bytes it used; n is 0 when s has
// no closing bracket (the "[" is then literal).
func bracket(s string) (class string, n int) {
	var b strings.Builder
	b.WriteString("[")
	i := 1
	if i < len(s) && (s[i] == '!' || s[i] == '^') {
		b.WriteString("^")
		i++
	}
	first := true
	for i < len(s) {
		c := s[i]
		switch {
		case c == ']' && !first:
			b.WriteString("]")
			return b.String(), i + 1
		case c == '[' && i+1 < len(s) && s[i+1] == ':':
			end := strings.Index(s[i+2:], ":]")
			if end < 0 {
				return "", 0
			}
			b.WriteString(s[i : i+2+end+2])
			i += 2 + end + 2
		case c == '\\' && i+1 < len(s):
			b.WriteString(regexp.QuoteMeta(s[i+1 : i+2]))
			i += 2
		case c == '/':
			return "", 0 // a class never matches a separator
		default:
			if c == ']' || c == '[' || c == '\\' || c == '^' {
				b.WriteByte('\\')
			}
			b.WriteByte(c)
			i++
		}
		first = false
	}
	return "", 0
}

// trimTrailingSpaces drops trailing spaces unless escaped with a backslash.
func trimTrailingSpaces(s string) string {
	for strings.HasSuffix(s, " ") && !strings.HasSuffix(s, `\ `) {
		s = s[:len(s)-1]
	}
	return s
}
