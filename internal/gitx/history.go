package gitx

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
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
	// Shallow is set when the history is a shallow clone's (git clone
	// --depth): it stops at commits whose parents the clone lacks, and
	// what changed before them is not known.
	Shallow bool
	// recency maps a path (relative to the folder git ran in) to the index
	// of the newest commit that touched it; 0 is HEAD.
	recency map[string]int
	// into maps a path an exact rename (a file moved without a change)
	// made to the commits that did, and the path each moved it from.
	into map[string]map[int]string
	// older lists, for each path an exact rename moved a file from, the
	// commits that touched it before that rename, newest first.
	older map[string][]int
}

// Recency returns the index of the newest commit that touched path (0 is
// HEAD), and false when no commit read touched it.
func (h *History) Recency(path string) (int, bool) {
	i, ok := h.recency[path]
	return i, ok
}

// Content returns the index of the newest commit that changed the content
// of the file at path, following exact renames back (a commit that only
// moved the file, git mv of it or of its folder, does not count), and
// false when no commit read did.
func (h *History) Content(path string) (int, bool) {
	i, ok := h.recency[path]
	for range 1000 {
		if !ok {
			return 0, false
		}
		from, moved := h.into[path][i]
		if !moved {
			return i, true
		}
		path, ok = from, false
		for _, j := range h.older[from] {
			if j > i {
				i, ok = j, true
				break
			}
		}
	}
	return 0, false
}

// Paths returns how many distinct paths the history touched.
func (h *History) Paths() int { return len(h.recency) }

// ReadHistory reads the history of HEAD in one `git log` pass and records,
// for every path under dir that a commit changed, the newest commit that
// changed it. maxCommits > 0 reads only the newest maxCommits commits.
// Paths are relative to dir; changes outside dir are left out. Renames
// count as a deletion and an addition; merge commits contribute no paths.
// Exact renames (-M100%, which costs git a hash of each added and deleted
// file, no content comparison) are kept too, for Content.
func ReadHistory(ctx context.Context, dir string, maxCommits int) (*History, error) {
	args := []string{"log", "--format=%x00%H", "--name-status", "-M100%", "--relative", "-z"}
	if maxCommits > 0 {
		args = append(args, "-n", strconv.Itoa(maxCommits))
	}
	args = append(args, "HEAD", "--")
	out, err := Read(ctx, dir, args...)
	if err != nil {
		return nil, err
	}
	edge, err := shallowEdge(ctx, dir)
	if err != nil {
		return nil, err
	}
	h := parseHistory(out, edge)
	h.Shallow = len(edge) > 0
	return h, nil
}

// shallowEdge returns the commits a shallow clone's history stops at
// (git's shallow file), none for a whole clone. git lists each of them as
// adding every file it holds, since their parents are not in the clone;
// those listings say nothing about when a file changed.
func shallowEdge(ctx context.Context, dir string) (map[string]bool, error) {
	out, err := Read(ctx, dir, "rev-parse", "--git-path", "shallow")
	if err != nil {
		return nil, err
	}
	p := strings.TrimSpace(string(out)) // relative to dir, unless absolute
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	data, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	edge := map[string]bool{}
	for _, l := range strings.Fields(string(data)) {
		edge[l] = true
	}
	return edge, nil
}

// parseHistory reads `git log --format=%x00%H --name-status -M100% -z`
// output: each commit is an empty field, its hash, then its changes, each
// a status (the first one after a newline) and its path, or, for a rename
// or a copy, its status, the old path and the new one. A status is never
// empty, so an empty field always starts a commit. The changes listed for
// a commit of edge (a shallow clone's: see shallowEdge) are left out; the
// commit counts.
func parseHistory(out []byte, edge map[string]bool) *History {
	h := &History{recency: map[string]int{}, into: map[string]map[int]string{}, older: map[string][]int{}}
	commit := -1
	skip := false
	touch := func(p string) {
		if skip {
			return
		}
		if _, seen := h.recency[p]; !seen {
			h.recency[p] = commit
		}
		if l, followed := h.older[p]; followed && (len(l) == 0 || l[len(l)-1] != commit) {
			h.older[p] = append(l, commit)
		}
	}
	fields := bytes.Split(out, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) == 0 {
			if i+1 < len(fields) && len(fields[i+1]) > 0 {
				i++ // the hash
				commit++
				skip = edge[string(fields[i])]
			}
			continue
		}
		if commit < 0 {
			continue
		}
		status := string(bytes.TrimPrefix(f, []byte("\n")))
		if status == "" {
			continue
		}
		if status[0] == 'R' || status[0] == 'C' {
			if i+2 >= len(fields) {
				break
			}
			from, to := string(fields[i+1]), string(fields[i+2])
			i += 2
			if status == "R100" && !skip {
				if h.into[to] == nil {
					h.into[to] = map[int]string{}
				}
				h.into[to][commit] = from
				if _, followed := h.older[from]; !followed {
					h.older[from] = []int{}
				}
			}
			touch(from)
			touch(to)
			continue
		}
		if i+1 >= len(fields) {
			break
		}
		i++
		touch(string(fields[i]))
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

// removedFileDepth bounds how many of HEAD's commits RemovedFile reads:
// a removal further back is not looked for (kk lint, run at a session's
// start, asks for each dangling edge, in histories of any length).
const removedFileDepth = 5000

// RemovedFile finds the last commit of HEAD's history (its newest
// removedFileDepth commits) that removed a file under folder (relative to
// dir, slash-separated) whose name is name, without regard to case:
// commit is its hash, file the file's path relative to dir, and src what
// the file held before that commit. It returns "" when git has no such
// commit (outside git included).
func RemovedFile(ctx context.Context, dir, folder, name string) (commit, file string, src []byte) {
	spec := ":(glob,icase)" + strings.TrimSuffix(folder, "/") + "/**/" + name
	revs := "HEAD"
	if out, err := Read(ctx, dir, "rev-list", "--max-count=1", "--skip="+strconv.Itoa(removedFileDepth), "HEAD"); err != nil {
		return "", "", nil
	} else if oldest := strings.TrimSpace(string(out)); oldest != "" {
		revs = oldest + "..HEAD"
	}
	out, err := Read(ctx, dir, "log", "-1", "--diff-filter=D", "--no-renames", "--relative", "--format=%H", "--name-only", "-z", revs, "--", spec)
	if err != nil {
		return "", "", nil
	}
	// "<hash>\n\x00<path>\x00"…: the hash, then the commit's removed files
	fields := splitNUL(out)
	if len(fields) < 2 {
		return "", "", nil
	}
	commit = strings.TrimSpace(fields[0])
	for _, f := range fields[1:] {
		if f = strings.TrimSpace(f); f == "" || !strings.EqualFold(pathBase(f), name) {
			continue
		}
		data, err := Read(ctx, dir, "cat-file", "blob", commit+"^:./"+f)
		if err != nil {
			return "", "", nil
		}
		return commit, f, data
	}
	return "", "", nil
}

func pathBase(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// Removal is what became of a file that HEAD's history, or the work tree,
// no longer has under a folder (Removals).
type Removal struct {
	// File is the file's path relative to the folder git ran in.
	File string
	// Commit is the commit that removed or renamed it; "" when the work
	// tree did (rm, git rm or git mv, not committed).
	Commit string
	// RenamedTo is the path git paired it with as a rename (relative to
	// the folder git ran in), "" when it was removed.
	RenamedTo string
}

// Removals lists, in two git calls whatever their number, the files under
// folder (relative to dir, slash-separated) that the work tree or HEAD's
// newest removedFileDepth commits removed or renamed, by their base
// names in lower case (the newest removal of a name wins; the work
// tree's before any commit's). Renames are git's rename detection (-M).
// It is empty outside git.
func Removals(ctx context.Context, dir, folder string) map[string]Removal {
	out := map[string]Removal{}
	add := func(r Removal) {
		if key := strings.ToLower(pathBase(r.File)); out[key] == (Removal{}) {
			out[key] = r
		}
	}
	spec := strings.TrimSuffix(folder, "/")
	if diff, err := Read(ctx, dir, "diff", "-M", "--name-status", "--relative", "-z", "HEAD", "--", spec); err == nil {
		parseRemovals(splitNUL(diff), "", add)
	}
	revs := "HEAD"
	if rl, err := Read(ctx, dir, "rev-list", "--max-count=1", "--skip="+strconv.Itoa(removedFileDepth), "HEAD"); err != nil {
		return out
	} else if oldest := strings.TrimSpace(string(rl)); oldest != "" {
		revs = oldest + "..HEAD"
	}
	if log, err := Read(ctx, dir, "log", "-M", "--diff-filter=DR", "--name-status", "--relative", "-z", "--format=%x00commit %H", revs, "--", spec); err == nil {
		parseRemovals(splitNUL(log), "", add)
	}
	return out
}

// parseRemovals reads `git diff|log --name-status -z` output, its fields
// split at NUL: "commit <hash>" fields (log's --format) name the commit of
// the status fields after them; a D status is followed by one path, an
// R<score> by two. Other statuses are skipped, with their path.
func parseRemovals(fields []string, commit string, add func(Removal)) {
	for i := 0; i < len(fields); i++ {
		f := strings.TrimLeft(fields[i], "\n")
		switch {
		case f == "":
		case strings.HasPrefix(f, "commit "):
			commit = strings.TrimSpace(strings.TrimPrefix(f, "commit "))
		case f == "D" && i+1 < len(fields):
			add(Removal{File: fields[i+1], Commit: commit})
			i++
		case f[0] == 'R' && i+2 < len(fields):
			add(Removal{File: fields[i+1], Commit: commit, RenamedTo: fields[i+2]})
			i += 2
		case f[0] == 'C' && i+2 < len(fields):
			i += 2
		default:
			i++ // a status and its path
		}
	}
}
