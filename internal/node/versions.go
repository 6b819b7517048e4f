package node

import (
	"regexp"
	"strconv"
	"strings"
)

// conflictVersionLine is the kk_version line of a leaf's front matter, as
// a side of a git conflict block holds it.
var conflictVersionLine = regexp.MustCompile(`^kk_version: *([0-9]+)\r?$`)

// ResolveVersionConflicts returns src with each of git's conflict blocks replaced
// by one kk_version line, the higher version of the two sides and one
// more, when every block (there is at least one) lies in the front matter
// and holds nothing but a kk_version line on each side (and the base's,
// in the diff3 style); ok is false otherwise.
func ResolveVersionConflicts(src string) (merged string, version int, ok bool) {
	lines := strings.SplitAfter(src, "\n")
	if len(lines) == 0 || strings.TrimRight(lines[0], "\r\n") != "---" {
		return "", 0, false
	}
	var b strings.Builder
	blocks := 0
	inFront := true
	for i := 1; i < len(lines); i++ {
		line := strings.TrimRight(lines[i], "\r\n")
		if !strings.HasPrefix(line, "<<<<<<<") {
			if strings.HasPrefix(line, "=======") || strings.HasPrefix(line, ">>>>>>>") || strings.HasPrefix(line, "|||||||") {
				return "", 0, false
			}
			if inFront && line == "---" {
				inFront = false
			}
			continue
		}
		if !inFront {
			return "", 0, false
		}
		// <<<<<<< ours, [||||||| base], =======, theirs, >>>>>>>
		var ours, theirs []string
		side := &ours
		j, closed := i+1, false
		for ; j < len(lines) && !closed; j++ {
			l := strings.TrimRight(lines[j], "\r\n")
			switch {
			case strings.HasPrefix(l, "|||||||"):
				side = nil
			case strings.HasPrefix(l, "======="):
				side = &theirs
			case strings.HasPrefix(l, ">>>>>>>"):
				closed = true
			case side != nil:
				*side = append(*side, lines[j])
			}
		}
		j-- // the >>>>>>> line
		if !closed || len(ours) != 1 || len(theirs) != 1 {
			return "", 0, false
		}
		mo, mt := conflictVersionLine.FindStringSubmatch(strings.TrimRight(ours[0], "\n")), conflictVersionLine.FindStringSubmatch(strings.TrimRight(theirs[0], "\n"))
		if mo == nil || mt == nil {
			return "", 0, false
		}
		vo, _ := strconv.Atoi(mo[1])
		vt, _ := strconv.Atoi(mt[1])
		version = max(vo, vt) + 1
		eol := "\n"
		if strings.HasSuffix(ours[0], "\r\n") {
			eol = "\r\n"
		}
		lines[i] = "kk_version: " + strconv.Itoa(version) + eol
		for x := i + 1; x <= j; x++ {
			lines[x] = ""
		}
		blocks++
		i = j
	}
	if blocks == 0 {
		return "", 0, false
	}
	for _, l := range lines {
		b.WriteString(l)
	}
	return b.String(), version, true
}
