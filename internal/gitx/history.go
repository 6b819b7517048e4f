package gitx

import (
	"bytes"
	"context"
	"strconv"
	"strings"
)

// ListFiles lists the files of dir's work tree under dir, relative to it,
// in one git call: every tracked file and, with others set, every untracked
// file that git's ignore rules (.gitignore at any level, .git/info/exclude,
// core.excludesFile) do not exclude. An untracked nested repository shows
// as its folder path with a trailing "/".
func ListFiles(ctx context.Context, dir string, others bool) ([]string, error) {
	args := []string{"ls-files", "-z", "--cached"}
	if others {
		args = append(args, "--others", "--exclude-standard")
	}
	out, err := Read(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	return splitNUL(out), nil
}

// History is the recency of every path in a stretch of history, from one
// `git log` pass.
type History struct {
	// Commits is how many commits were read.
	Commits int
	// recency maps a path (relative to the folder git ran in) to the index
	// of the newest commit that touched it; 0 is HEAD.
	recency map[string]int
}

// Recency returns the index of the newest commit that touched path (0 is
// HEAD), and false when no commit read touched it.
func (h *History) Recency(path string) (int, bool) {
	i, ok := h.recency[path]
	return i, ok
}

// Paths returns how many distinct paths the history touched.
func (h *History) Paths() int { return len(h.recency) }

// ReadHistory reads the history of HEAD in one `git log` pass and records,
// for every path under dir that a commit changed, the newest commit that
// changed it. maxCommits > 0 reads only the newest maxCommits commits.
// Paths are relative to dir; changes outside dir are left out. Renames
// count as a deletion and an addition; merge commits contribute no paths.
func ReadHistory(ctx context.Context, dir string, maxCommits int) (*History, error) {
	args := []string{"log", "--format=%x00%H", "--name-only", "--no-renames", "--relative", "-z"}
	if maxCommits > 0 {
		args = append(args, "-n", strconv.Itoa(maxCommits))
	}
	args = append(args, "HEAD", "--")
	out, err := Read(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	return parseHistory(out), nil
}

// parseHistory reads `git log --format=%x00%H --name-only -z` output: each
// commit is an empty field, its hash, then the paths it changed (the first
// one after a newline). A path is never empty, so an empty field always
// starts a commit.
func parseHistory(out []byte) *History {
	h := &History{recency: map[string]int{}}
	commit := -1
	expectHash := false
	first := false
	for len(out) > 0 {
		var field []byte
		if i := bytes.IndexByte(out, 0); i >= 0 {
			field, out = out[:i], out[i+1:]
		} else {
			field, out = out, nil
		}
		switch {
		case len(field) == 0:
			expectHash = true
		case expectHash:
			expectHash, first = false, true
			commit++
		default:
			if first {
				field = bytes.TrimPrefix(field, []byte("\n"))
				first = false
			}
			if commit < 0 || len(field) == 0 {
				continue
			}
			p := string(field)
			if _, seen := h.recency[p]; !seen {
				h.recency[p] = commit
			}
		}
	}
	h.Commits = commit + 1
	return h
}

func splitNUL(out []byte) []string {
	s := strings.TrimSuffix(string(out), "\x00")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\x00")
}
