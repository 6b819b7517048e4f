package store

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
)

// DeadLink is a link from a leaf to a path under nodes/ where there is no
// file: the leaf it named was moved by hand (git mv), renamed, split or
// deleted.
type DeadLink struct {
	From   string // the linking leaf, relative to nodes/
	Line   int    // the line of the link in the leaf file, 1-based
	Target string // the link's path as written
	// Missing is where the link leads, relative to nodes/.
	Missing string
	// ID is the id of the leaf the link named: the label of a link of the
	// generated Related block (the edge's id), else the file name without
	// .md (a leaf's file is named after its id).
	ID string
	// Generated is a link of the generated Related block.
	Generated bool
	// Now lists the live leaves that hold the id now, relative to nodes/:
	// the leaf itself at another path, or the leaves the redirect ledger
	// (nodes/.redirects.json) sends a retired id to, in the order of
	// their ids (the first is the one a Related block links);
	// empty when no leaf does.
	Now []string
	// NowIDs are the ids of the leaves of Now, in the same order.
	NowIDs []string

	link node.Link
}

// Relinkable reports whether kk can point the link at the leaf's new
// home: a generated link always can (the Related block is rendered from
// the edge, to the first live successor), a link a person wrote only when
// exactly one leaf holds the id now.
func (d DeadLink) Relinkable() bool {
	return len(d.Now) == 1 || d.Generated && len(d.Now) > 0
}

// NewTarget is the link's target once relinked, written as the link was
// (relative to the linking leaf's folder, or bundle-absolute); "" when
// the link is not relinkable.
func (d DeadLink) NewTarget() string {
	if !d.Relinkable() {
		return ""
	}
	return node.LinkTarget(d.link, DirOf(d.From), d.Now[0])
}

// LinkPath resolves a link's path (node.Link.Path) from the leaf at from
// to a path relative to nodes/. ok is false when the link leads out of
// nodes/ (a file of the repository, not a leaf).
func LinkPath(from, target string) (p string, ok bool) {
	if rest, abs := strings.CutPrefix(target, "/"); abs {
		p = path.Clean(rest)
	} else {
		p = path.Join(DirOf(from), target)
	}
	if p == ".." || strings.HasPrefix(p, "../") || p == "." || p == "" {
		return "", false
	}
	return p, true
}

// RetargetedLink is a link RetargetTypedLinks changed: its path as it
// was typed, and as it is written now.
type RetargetedLink struct{ Was, Now string }

// RetargetTypedLinks points the links a person typed in body (not those
// of a generated block) at where the leaves they lead to are now. body is
// that of the leaf that was at from and is at to (from itself unless the
// leaf moves); leads gives, for the path a link leads to from there, the
// path it should lead to (ok false: the link stays as it is). Each link
// changed keeps its form (relative or bundle-absolute, its text and
// fragment) and is written from to's folder; one that already leads where
// it should, from where it is, stays byte for byte. It returns the body
// and the links changed, in the body's order. kk rebalance move (a moved
// leaf) and kk node delete --redirect-to (a retired one) share it.
func RetargetTypedLinks(body []byte, from, to string, leads func(p string) (string, bool)) ([]byte, []RetargetedLink) {
	links := node.MarkdownLinks(body)
	var changed []RetargetedLink
	for i := len(links) - 1; i >= 0; i-- { // the last first, so that earlier offsets hold
		l := links[i]
		if l.Generated {
			continue // the Related block is rendered from the edges
		}
		p, ok := LinkPath(from, l.Path)
		if !ok {
			continue
		}
		now, ok := leads(p)
		if !ok {
			continue
		}
		target := node.LinkTarget(l, DirOf(to), now)
		if p == now && from == to || string(body[l.Start:l.End]) == target {
			continue // leads where it did, from where it was
		}
		body = slices.Concat(body[:l.Start:l.Start], []byte(target), body[l.End:])
		changed = append(changed, RetargetedLink{Was: l.Path, Now: target})
	}
	slices.Reverse(changed)
	return body, changed
}

// DeadLinks returns every link from a leaf of t to a leaf path under
// nodes/ where there is no file, in the order of the leaves and of the
// links in them. It reads each leaf file that holds a link. A link of the
// generated Related block for an edge that names no leaf is left out: it
// links to /<id>.md as the format says, and the edge is reported as
// dangling.
func (k *KB) DeadLinks(t *Tree, r Redirects) ([]DeadLink, error) {
	c := k.linkChecker(t, r)
	found := make([][]DeadLink, len(t.Leaves))
	errs := make([]error, len(t.Leaves))
	Parallel(len(t.Leaves), func(i int) {
		n := t.Leaves[i]
		src, err := os.ReadFile(k.NodePath(n.Path))
		if err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				errs[i] = err
			}
			return // gone since the tree was read: the next read says so
		}
		found[i] = c.leaf(n.Path, src)
	})
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	var out []DeadLink
	for _, f := range found {
		out = append(out, f...)
	}
	return out, nil
}

// Bodies hands fn the path and body of each leaf that may hold a link
// (as the branch index holds them); a leaf it leaves out holds none.
type Bodies func(fn func(path, body string)) error

// DeadLinksIn is DeadLinks with the bodies of t's leaves read from
// bodies, so that only the files of leaves with a dead link are read, for
// the lines of their links.
func (k *KB) DeadLinksIn(t *Tree, r Redirects, bodies Bodies) ([]DeadLink, error) {
	order := make([]string, len(t.Leaves))
	for i, n := range t.Leaves {
		order[i] = n.Path
	}
	return k.linkChecker(t, r).bodies(order, bodies)
}

// bodies checks the leaves whose bodies are handed over, reporting them in
// the order of paths and reading the files of those with a dead link for
// the lines. The bodies are scanned as they are read.
func (c *linkChecker) bodies(paths []string, bodies Bodies) ([]DeadLink, error) {
	type found struct {
		body string
		dead []DeadLink
	}
	byPath := map[string]found{}
	work := make(chan [2]string, 64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for w := range work {
			if dead := c.body(w[0], []byte(w[1])); len(dead) > 0 {
				byPath[w[0]] = found{body: w[1], dead: dead}
			}
		}
	}()
	err := bodies(func(p, body string) { work <- [2]string{p, body} })
	close(work)
	<-done
	if err != nil {
		return nil, err
	}
	var out []DeadLink
	for _, p := range paths {
		f, ok := byPath[p]
		if !ok {
			continue
		}
		src, err := os.ReadFile(c.k.NodePath(p))
		if errors.Is(err, fs.ErrNotExist) {
			continue // gone since the tree was read: the next read says so
		}
		if err != nil {
			return nil, err
		}
		parts, err := frontmatter.Split(src)
		if err != nil || string(parts.Body) != f.body {
			// Changed since the index read it: the file says.
			out = append(out, c.leaf(p, src)...)
			continue
		}
		lines := bytes.Count(src[:len(src)-len(parts.Body)], []byte("\n"))
		for _, d := range f.dead {
			d.Line += lines
			out = append(out, d)
		}
	}
	return out, nil
}

// LeafDeadLinks returns the dead links of the leaf file src at from
// (relative to nodes/), with the lines they are on in the file.
func (k *KB) LeafDeadLinks(t *Tree, r Redirects, from string, src []byte) []DeadLink {
	return k.linkChecker(t, r).leaf(from, src)
}

func (c *linkChecker) leaf(from string, src []byte) []DeadLink {
	if !bytes.Contains(src, []byte("](")) && !bytes.Contains(src, []byte("]:")) {
		return nil
	}
	parts, err := frontmatter.Split(src)
	if err != nil {
		return nil // not a leaf kk reads; reported as such
	}
	head := len(src) - len(parts.Body)
	lines := bytes.Count(src[:head], []byte("\n"))
	var out []DeadLink
	for _, l := range node.MarkdownLinks(parts.Body) {
		d, dead := c.check(from, l)
		if dead {
			d.Line += lines
			out = append(out, d)
		}
	}
	return out
}

// BodyDeadLinks returns the dead links of a leaf body (as node.Node.Body
// holds it) of the leaf at from, with lines counted in the body.
func (k *KB) BodyDeadLinks(t *Tree, r Redirects, from string, body []byte) []DeadLink {
	return k.linkChecker(t, r).body(from, body)
}

func (c *linkChecker) body(from string, body []byte) []DeadLink {
	var out []DeadLink
	for _, l := range node.MarkdownLinks(body) {
		if d, dead := c.check(from, l); dead {
			out = append(out, d)
		}
	}
	return out
}

// Span returns where the link's path is in the body it was found in.
func (d DeadLink) Span() (start, end int) { return d.link.Start, d.link.End }

// linkChecker checks the links of the leaves of one tree.
type linkChecker struct {
	k     *KB
	r     Redirects
	paths map[string]bool // the paths of the tree's leaves (and of those it skipped)
	// where maps an id (compared without regard to case) to its leaf's
	// path and the id as the leaf carries it.
	where func(id string) (leafPath, leafID string, ok bool)
}

func (k *KB) linkChecker(t *Tree, r Redirects) *linkChecker {
	paths := make(map[string]bool, len(t.Leaves)+len(t.skipped))
	for _, n := range t.Leaves {
		paths[n.Path] = true
	}
	for p := range t.skipped {
		paths[p] = true
	}
	return &linkChecker{k: k, r: r, paths: paths, where: func(id string) (string, string, bool) {
		if n, ok := t.ByID(id); ok {
			return n.Path, n.ID, true
		}
		return "", "", false
	}}
}

// LeafPlace is where a leaf is: its path (relative to nodes/) and id.
type LeafPlace struct{ Path, ID string }

// DeadLinksOf is DeadLinksIn for a reader that knows the leaves of the
// tree (their paths and ids, in the order to report them) without holding
// the tree: kb_check, from the branch index's entities.
func (k *KB) DeadLinksOf(leaves []LeafPlace, r Redirects, bodies Bodies) ([]DeadLink, error) {
	paths := make(map[string]bool, len(leaves))
	byKey := make(map[string]LeafPlace, len(leaves))
	order := make([]string, len(leaves))
	for i, l := range leaves {
		paths[l.Path] = true
		if _, dup := byKey[IDKey(l.ID)]; !dup {
			byKey[IDKey(l.ID)] = l
		}
		order[i] = l.Path
	}
	c := &linkChecker{k: k, r: r, paths: paths, where: func(id string) (string, string, bool) {
		l, ok := byKey[IDKey(id)]
		return l.Path, l.ID, ok
	}}
	return c.bodies(order, bodies)
}

func (c *linkChecker) check(from string, l node.Link) (DeadLink, bool) {
	k := c.k
	p, ok := LinkPath(from, l.Path)
	if !ok || c.paths[p] || !IsLeafName(path.Base(p)) {
		return DeadLink{}, false // out of nodes/, a leaf, or no leaf's name (an index.md)
	}
	if _, err := os.Lstat(k.NodePath(p)); err == nil {
		return DeadLink{}, false // a file that is not a leaf: an index.md, a log.md
	}
	if strings.HasPrefix(l.Path, "/") {
		// A link from the repository root, as a forge renders it.
		if _, err := os.Lstat(filepath.Join(k.Root, filepath.FromSlash(p))); err == nil {
			return DeadLink{}, false
		}
	}
	id := strings.TrimSuffix(path.Base(p), ".md")
	if l.Generated && l.Label != "" {
		id = unescapeLabel(l.Label)
	}
	d := DeadLink{From: from, Line: l.Line, Target: l.Path, Missing: p, ID: id, Generated: l.Generated, link: l}
	live := func(id string) bool { _, _, ok := c.where(id); return ok }
	for _, to := range ResolveRedirect(c.r, id, live) {
		p, id, _ := c.where(to)
		d.Now = append(d.Now, p)
		d.NowIDs = append(d.NowIDs, id)
	}
	if l.Generated && len(d.Now) == 0 {
		// The edge itself names no leaf: the block links to /<id>.md, as
		// the format says, and the checks report the dangling edge.
		return DeadLink{}, false
	}
	return d, true
}

// unescapeLabel undoes node.EscapeLabel's backslashes.
func unescapeLabel(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
