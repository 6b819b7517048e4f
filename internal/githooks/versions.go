package githooks

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/store"
)

// VersionResolved is a note whose conflicts lay only in kk_version, which
// ResolveVersionConflicts resolved and staged.
type VersionResolved struct {
	// Path is the note's path from the work tree's top folder.
	Path string `json:"path"`
	// Version is the kk_version the merged note took.
	Version int `json:"version"`
}

// versionLine is the kk_version line of a leaf's front matter.
var versionLine = regexp.MustCompile(`^kk_version: *([0-9]+)\r?$`)

// ResolveVersionConflicts resolves, in the notes of k that git left
// unmerged (a merge, a rebase, a cherry-pick that stopped), the conflicts
// that lie only in kk_version: two people who each changed a different
// part of one note with kk both bumped the counter kk keeps in its front
// matter, and git stops on that line, which neither of them wrote. Such a
// note takes the higher of the two versions and one more, and is staged
// (git add). A note with any other conflict is left as git left it.
func ResolveVersionConflicts(ctx context.Context, k *store.KB) ([]VersionResolved, error) {
	top, rel, err := inWorkTree(ctx, k.Root, k.Dir)
	if err != nil {
		return nil, err
	}
	out, err := gitx.Run(ctx, top, "ls-files", "-u", "-z", "--", rel+"/nodes/")
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var res []VersionResolved
	for entry := range strings.SplitSeq(string(out), "\x00") {
		_, p, ok := strings.Cut(entry, "\t")
		if !ok || seen[p] || !strings.HasSuffix(p, ".md") || path.Base(p) == "index.md" {
			continue
		}
		seen[p] = true
		abs := filepath.Join(top, filepath.FromSlash(p))
		src, err := os.ReadFile(abs)
		if err != nil {
			continue // deleted on one side: not a version conflict
		}
		merged, version, ok := resolveVersions(string(src))
		if !ok {
			continue
		}
		if err := os.WriteFile(abs, []byte(merged), 0o644); err != nil {
			return res, fmt.Errorf("writing %s: %w", p, err)
		}
		if _, err := gitx.Run(ctx, top, "add", "--", p); err != nil {
			return res, err
		}
		res = append(res, VersionResolved{Path: p, Version: version})
	}
	return res, nil
}

// resolveVersions returns src with each of git's conflict blocks replaced
// by one kk_version line, the higher version of the two sides and one
// more, when every block (there is at least one) lies in the front matter
// and holds nothing but a kk_version line on each side (and the base's,
// in the diff3 style); ok is false otherwise.
func resolveVersions(src string) (merged string, version int, ok bool) {
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
		mo, mt := versionLine.FindStringSubmatch(strings.TrimRight(ours[0], "\n")), versionLine.FindStringSubmatch(strings.TrimRight(theirs[0], "\n"))
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
