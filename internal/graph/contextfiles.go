package graph

import (
	"regexp"
	"strings"
)

var (
	headingLine      = regexp.MustCompile(`^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$`)
	contextHeading   = regexp.MustCompile(`(?i)^context\s+files\s*:?$`)
	listMarker       = regexp.MustCompile(`^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?`)
	markdownLink     = regexp.MustCompile(`^\[[^\]]*\]\(([^)\s]+)\)`)
	backticked       = regexp.MustCompile("^`([^`]+)`")
	pathLike         = regexp.MustCompile(`^[A-Za-z0-9_.@~+\-/*?\[\]{}()]+$`)
	descriptionAfter = regexp.MustCompile(`\s+(?:[-–—:(]|#).*$`)
)

// ContextFiles extracts the file paths listed under a task's "Context
// Files" heading (any heading level; the section ends at the next heading).
// Paths may be one per line, comma-separated, or mixed; list markers,
// backticks, markdown links and a trailing " - description" are stripped.
// Lines that do not hold a path are skipped. Paths come back in the order
// they appear, without duplicates.
func ContextFiles(markdown string) []string {
	var out []string
	seen := map[string]bool{}
	in, fenced := false, false
	for _, line := range strings.Split(strings.ReplaceAll(markdown, "\r\n", "\n"), "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fenced = !fenced
			continue
		}
		if !fenced {
			if m := headingLine.FindStringSubmatch(line); m != nil {
				in = contextHeading.MatchString(strings.TrimSpace(m[2]))
				continue
			}
		}
		if !in || fenced || trimmed == "" || strings.HasPrefix(trimmed, "<!--") {
			continue
		}
		for _, part := range strings.Split(listMarker.ReplaceAllString(line, ""), ",") {
			if p := cleanPath(part); p != "" && !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

// cleanPath turns one listed entry into a path, or "" when it is not one.
func cleanPath(s string) string {
	s = strings.TrimSpace(s)
	if m := markdownLink.FindStringSubmatch(s); m != nil {
		s = m[1]
	} else if m := backticked.FindStringSubmatch(s); m != nil {
		s = strings.TrimSpace(m[1])
	} else {
		s = descriptionAfter.ReplaceAllString(s, "")
	}
	s = strings.Trim(s, `"'`)
	if s == "" || strings.Contains(s, "://") || !pathLike.MatchString(s) {
		return ""
	}
	if !strings.ContainsAny(s, "/.") {
		return "" // a bare word is prose, not a path
	}
	return s
}
