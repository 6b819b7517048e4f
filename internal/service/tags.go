package service

import (
	"strings"
	"unicode"
)

// TidyTag is a tag in kk's tidy spelling (see kk lint's tag checks):
// lower case, each run of white space and hyphens one hyphen, none at
// either end ("Go Lang", " go - lang " and "-Go-Lang-" are all go-lang);
// "" for a tag of nothing else. The tags a request carries, those a
// model proposes and those a tag search names all go through it, so one
// tag has one spelling whoever gave it.
func TidyTag(tag string) string {
	return strings.ToLower(strings.Join(strings.FieldsFunc(tag, func(r rune) bool { return unicode.IsSpace(r) || r == '-' }), "-"))
}

// TidyTags is tags made TidyTag's spelling, in their order, without the
// blank ones and without repeats.
func TidyTags(tags []string) []string {
	var out []string
	seen := make(map[string]bool, len(tags))
	for _, t := range tags {
		if t = TidyTag(t); t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	return out
}
