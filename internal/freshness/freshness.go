// Package freshness finds the nodes that describe repository files which
// changed after the node itself last changed, from one pass over the git
// history.
package freshness

import (
	"bytes"
	"context"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/gitx"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// RootBranch names the leaves directly under nodes/ in reports.
const RootBranch = "(root)"

// Options tune Check.
type Options struct {
	// MaxCommits limits the history read to the newest MaxCommits commits;
	// 0 reads all of it.
	MaxCommits int
}

// Report is the result of a freshness check.
type Report struct {
	// Available is false when the check could not run (no git, not a work
	// tree, no commits, no nodes, an unreadable tree); Reason says why.
	Available bool   `json:"available"`
	Reason    string `json:"reason,omitempty"`
	// Commits is how many commits of history were read.
	Commits int `json:"commits"`
	// Shallow is set in a shallow clone (git clone --depth, CI's usual
	// checkout): only the nodes changed in its Commits commits are
	// considered, against changes made in them; what changed before them
	// is not seen (ShallowFix says how to see it).
	Shallow bool `json:"shallow,omitempty"`
	// ConsideredNodes counts the nodes with a committed file, the only
	// ones that have a "last changed" to compare with.
	ConsideredNodes int           `json:"considered_nodes"`
	FlaggedCount    int           `json:"flagged_count"`
	Flagged         []Flagged     `json:"flagged"`
	PerBranch       []BranchCount `json:"per_branch"`
}

// Flagged is a node whose sources changed after it.
type Flagged struct {
	ID string `json:"id"`
	// Path is the leaf's path relative to nodes/.
	Path string `json:"path"`
	// Branch is the leaf's top folder under nodes/, or "(root)".
	Branch string `json:"branch"`
	// ChangedPaths are the referenced repository files changed by a
	// commit newer than the node's own last commit, sorted.
	ChangedPaths []string `json:"changed_paths"`
}

// BranchCount is the number of flagged nodes in one top folder.
type BranchCount struct {
	Branch  string `json:"branch"`
	Flagged int    `json:"flagged"`
}

// Check compares every node with the history of the files it references.
// It fails open: anything that keeps it from running gives a report with
// Available false, never an error.
func Check(ctx context.Context, k *store.KB, opts Options) *Report {
	unavailable := func(format string, args ...any) *Report {
		return &Report{Reason: fmt.Sprintf(format, args...), Flagged: []Flagged{}, PerBranch: []BranchCount{}}
	}
	if !gitx.InWorkTree(ctx, k.Root) {
		return unavailable("%s is not inside a git work tree (or git is not installed)", k.Root)
	}
	var (
		wg                        sync.WaitGroup
		tree                      *store.Tree
		files                     []string
		hist                      *gitx.History
		treeErr, filesErr, logErr error
	)
	wg.Go(func() { tree, treeErr = k.ReadTree(store.LoadOptions{Bodies: true}) })
	wg.Go(func() { files, filesErr = gitx.ListFiles(ctx, k.Root, false) })
	wg.Go(func() { hist, logErr = gitx.ReadHistory(ctx, k.Root, opts.MaxCommits) })
	wg.Wait()
	switch {
	case treeErr != nil:
		return unavailable("reading the knowledge tree: %v", treeErr)
	case len(tree.Leaves) == 0:
		return unavailable("the knowledge base has no nodes")
	case filesErr != nil:
		return unavailable("listing tracked files: %v", filesErr)
	case logErr != nil:
		if _, err := gitx.Read(ctx, k.Root, "rev-parse", "--verify", "-q", "HEAD"); err != nil {
			return unavailable("the repository has no commits yet")
		}
		return unavailable("reading git history: %v", logErr)
	}
	tracked := make(map[string]bool, len(files))
	for _, f := range files {
		tracked[f] = true
	}
	rep := evaluate(tree.Leaves, tracked, hist.Recency, hist.Content)
	rep.Commits = hist.Commits
	rep.Shallow = hist.Shallow
	return rep
}

// ShallowFix is what makes the whole history readable to a shallow
// clone's freshness check.
const ShallowFix = "`git fetch --unshallow` (in GitHub Actions, actions/checkout with fetch-depth: 0)"

// nodesPrefix is the repository path of nodes/.
const nodesPrefix = store.DirName + "/nodes/"

// Evaluate flags the leaves (with bodies) whose referenced files changed
// more recently than the leaf file. tracked is the set of tracked paths;
// recency gives the index of the newest commit touching a path (0 is
// HEAD), false when none did.
func Evaluate(leaves []*node.Node, tracked map[string]bool, recency func(string) (int, bool)) *Report {
	return evaluate(leaves, tracked, recency, recency)
}

// evaluate is Evaluate with a leaf's own baseline taken from baselineOf
// (gitx.History.Content: the newest commit that changed its content, a
// commit that only moved it, git mv of the leaf or of its folder, not
// counting: a move is no review) rather than from recency.
func evaluate(leaves []*node.Node, tracked map[string]bool, recency, baselineOf func(string) (int, bool)) *Report {
	rep := &Report{Available: true, Flagged: []Flagged{}, PerBranch: []BranchCount{}}
	perBranch := map[string]int{}
	for _, n := range leaves {
		self := nodesPrefix + n.Path
		baseline, ok := baselineOf(self)
		if !ok {
			continue // never committed: nothing to compare with
		}
		rep.ConsideredNodes++
		var changed []string
		check := func(p string) {
			if p == self || strings.HasPrefix(p, store.DirName+"/") || !tracked[p] {
				return
			}
			if r, ok := recency(p); ok && r < baseline && !slices.Contains(changed, p) {
				changed = append(changed, p)
			}
		}
		for _, ref := range n.DerivedFrom {
			for _, p := range candidates(ref, path.Dir(self), true) {
				check(p)
			}
		}
		for _, ref := range BodyReferences(n.Body) {
			for _, p := range candidates(ref, path.Dir(self), false) {
				check(p)
			}
		}
		if len(changed) == 0 {
			continue
		}
		slices.Sort(changed)
		b := Branch(n.Path)
		perBranch[b]++
		rep.Flagged = append(rep.Flagged, Flagged{ID: n.ID, Path: n.Path, Branch: b, ChangedPaths: changed})
	}
	slices.SortFunc(rep.Flagged, func(a, b Flagged) int {
		if c := strings.Compare(a.Branch, b.Branch); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	for b, c := range perBranch {
		rep.PerBranch = append(rep.PerBranch, BranchCount{Branch: b, Flagged: c})
	}
	slices.SortFunc(rep.PerBranch, func(a, b BranchCount) int { return strings.Compare(a.Branch, b.Branch) })
	rep.FlaggedCount = len(rep.Flagged)
	return rep
}

// Branch returns the top folder of a leaf path relative to nodes/, or
// RootBranch for a leaf directly under nodes/.
func Branch(p string) string {
	if i := strings.IndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return RootBranch
}

var (
	urlScheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*:`)
)

// BodyReferences returns the markdown link targets ("](target"), then the
// inline code spans (backticks on one line) of a leaf body, raw, in order
// of appearance. It is a hand-written scan: this runs over every leaf.
func BodyReferences(body []byte) []string {
	var refs []string
	for i := 0; ; {
		j := bytes.Index(body[i:], []byte("]("))
		if j < 0 {
			break
		}
		i += j + 2
		k := i
		for k < len(body) && isSpace(body[k]) {
			k++
		}
		angle := k < len(body) && body[k] == '<'
		if angle {
			k++
		}
		start := k
		for k < len(body) && body[k] != ')' && body[k] != '>' && !isSpace(body[k]) {
			k++
		}
		if k == start && angle {
			start-- // "](<)": the "<" is the target
		}
		if k > start {
			refs = append(refs, string(body[start:k]))
			i = k
		}
	}
	for i := 0; i < len(body); {
		j := bytes.IndexByte(body[i:], '`')
		if j < 0 {
			break
		}
		i += j
		end := bytes.IndexAny(body[i+1:], "`\n")
		if end > 0 && body[i+1+end] == '`' {
			refs = append(refs, string(body[i+1:i+1+end]))
			i += end + 2
			continue
		}
		i++
	}
	return refs
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// candidates turns a reference into the repository paths it may name:
// relative to the repository root ("/x" is root-relative too) and relative
// to the leaf's folder (dir). URLs name nothing. A body reference must
// have a folder part ("go.mod" in backticks is too loose to count); an
// explicit kk_derived_from entry (explicit) need not.
func candidates(ref, dir string, explicit bool) []string {
	ref = strings.TrimSpace(ref)
	if i := strings.IndexByte(ref, '#'); i >= 0 {
		ref = ref[:i]
	}
	if ref == "" || strings.HasPrefix(ref, "//") || urlScheme.MatchString(ref) {
		return nil
	}
	if !explicit && !strings.Contains(ref, "/") {
		return nil
	}
	if strings.HasPrefix(ref, "/") {
		return clean(strings.TrimLeft(ref, "/"))
	}
	for strings.HasPrefix(ref, "./") {
		ref = ref[2:]
	}
	return append(clean(ref), clean(path.Join(dir, ref))...)
}

// clean normalizes a repository-relative path; one that climbs out of the
// repository names nothing.
func clean(p string) []string {
	p = path.Clean(p)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return nil
	}
	return []string{p}
}
