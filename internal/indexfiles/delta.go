package indexfiles

import (
	"bytes"
	"slices"
	"strconv"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// A write changes a few leaves; the index files it must change follow
// from what each file is made of. When the branch index records a
// generation made for exactly the tree before the change (the same nodes
// hash, summaries and root summary, every file still as it wrote it), the
// new generation is that one brought forward by the change alone:
//
//   - the index.md of each folder a changed leaf leaves or enters, of
//     each folder that appears or goes and of its parent (the subfolder
//     list), and of each folder holding a leaf whose in-degree the change
//     may move (the catalog order): the ids the old and new versions
//     relate to;
//   - the "By topic" rankings of the tags of those leaves (a member's
//     score depends only on its tag's cohort, and ties are broken by
//     in-degree), each ranked again over its cohort; where a ranking's
//     first leaves change, or show a changed leaf, the index.md of every
//     folder holding a leaf with that tag;
//   - ENTRY.md, and GRAPH.md, whose sections are the old file's with the
//     changed leaves' sections taken out and put in at their place in id
//     order, under a new header.
//
// Every other file keeps its recorded key and bytes. The result is what
// a full generation gives (TestIncrementalRebuildMatchesFull checks it
// against one after every step of random writes and hand edits).

// Delta is how a tree read from the branch index changed before its
// index files are planned: Before is the nodes hash of the tree as read
// (as its index recorded it; "" when not known), Changes the leaves the
// changeset wrote or removed.
type Delta struct {
	Before  string
	Changes []LeafChange
}

// LeafChange is one leaf a changeset wrote or removed: its version in
// the tree as read (nil when new) and after (nil when removed).
type LeafChange struct {
	Old, New *node.Node
}

// bringForward plans the generation of t (the tree as the changeset leaves it)
// from the record of the last one and the change d; ok is false when the
// record is not of the tree before the change (or the change is not one
// it can bring forward), and the caller generates in full.
func (p *Plan) bringForward(t *after, summariesSrc []byte, nodesHash string, d *Delta) (g *Generated, ok bool, err error) {
	rec := p.rec
	if rec == nil || d == nil || d.Before == "" || len(d.Changes) == 0 || rec.g.Nodes == 0 || t.count() == 0 ||
		rec.g.NodesHash != d.Before {
		return nil, false, nil
	}
	// GRAPH.md's sections are kept: they come from the bytes the branch
	// index's handle kept of the GRAPH.md recorded (written by this
	// process), which need no look at the file (it is written anew
	// whatever it holds), or else from the file, checked against the
	// record from the bytes read, not read twice.
	var oldGraph []byte
	fromKept := false
	if f, ok := rec.g.Files["GRAPH.md"]; ok {
		oldGraph, fromKept = p.db.KeptGenerated("GRAPH.md", f.Sum)
	}
	if !fromKept {
		data, ok := rec.read(p.k, "GRAPH.md")
		if !ok {
			return nil, false, nil
		}
		oldGraph = data
	}
	if !rec.upToDate(p.k, genKey(p.k, d.Before, summariesSrc), t.indexDirs(), "GRAPH.md") {
		return nil, false, nil
	}
	summaries, err := store.ParseSummaries(p.k.SummariesPath(), summariesSrc)
	if err != nil {
		return nil, false, err
	}
	if s := p.k.EntrySummary(); s != "" {
		summaries[""] = s
	}
	facts := map[*node.Node]*leafGen{}
	// The in-degrees are counted for the leaves ranked and rendered
	// only (addInDegrees), not for every id.
	in := newGenInputs(t.dirs(), summaries, map[string]int{}, facts)

	// The folders to render.
	affected := map[string]bool{}
	live := make(map[string]bool, len(in.dirs))
	for _, dir := range in.dirs {
		live[dir] = true
	}
	was := make(map[string]bool, len(rec.g.Folders))
	for _, dir := range rec.g.Folders {
		was[dir] = true
		if !live[dir] && dir != "" {
			affected[store.DirOf(dir)] = true
		}
	}
	for _, dir := range in.dirs {
		if !was[dir] {
			affected[dir] = true
			if dir != "" {
				affected[store.DirOf(dir)] = true
			}
		}
	}
	linked := map[string]bool{}      // ids whose in-degree may change
	rerank := map[string]bool{}      // tags ranked again
	changed := map[*node.Node]bool{} // new versions (a ranking showing an old one shows other ids now)
	for _, c := range d.Changes {
		for _, n := range []*node.Node{c.Old, c.New} {
			if n == nil {
				continue
			}
			changed[n] = true
			affected[n.Dir()] = true
			for _, id := range n.RelatesTo {
				linked[id] = true
			}
			for _, tag := range n.Tags {
				rerank[tag] = true
			}
		}
	}
	for id := range linked {
		if n, ok := t.byID(id); ok && n.ID == id {
			affected[n.Dir()] = true
			for _, tag := range n.Tags {
				rerank[tag] = true
			}
		}
	}

	// The rankings of those tags, over their cohorts.
	cohorts := t.cohorts(rerank)
	for _, members := range cohorts {
		t.addInDegrees(in.inDegree, members)
	}
	recorded, err := p.db.Ranks(p.ctx, keys(rerank))
	if err != nil {
		return nil, false, err
	}
	in.ranked = map[string][]*node.Node{}
	hash := func(n *node.Node) string { return t.hash(n.Path) }
	p.ranks = &rankRecord{put: map[string]index.Ranked{}, used: true}
	for tag := range rerank {
		members := cohorts[tag]
		if len(members) == 0 {
			p.ranks.drop = append(p.ranks.drop, tag)
			continue
		}
		top := rankCohorts(members, in.inDegree)[tag]
		in.ranked[tag] = top
		p.ranks.put[tag] = index.Ranked{FP: cohortFP(members, hash, in.inDegree), IDs: topIDs(top)}
		old, had := recorded[tag]
		moved := !had || !slices.Equal(old.IDs, topIDs(top))
		for _, n := range top {
			moved = moved || changed[n]
		}
		if moved {
			for _, n := range members {
				affected[n.Dir()] = true
			}
		}
	}

	// The leaves of the folders to render, and the rankings they show.
	byDir := t.folders(affected) // and the root leaves, for ENTRY.md
	var shown []string           // tags the rendered folders show that were not ranked again
	for dir, leaves := range byDir {
		if !affected[dir] {
			continue
		}
		for _, n := range leaves {
			for _, tag := range n.Tags {
				if _, ok := in.ranked[tag]; !ok && !rerank[tag] {
					shown = append(shown, tag)
				}
			}
		}
	}
	slices.Sort(shown)
	shown = slices.Compact(shown)
	kept, err := p.db.Ranks(p.ctx, shown)
	if err != nil {
		return nil, false, err
	}
	for _, tag := range shown {
		r, ok := kept[tag]
		if !ok {
			return nil, false, nil // not recorded: rank everything
		}
		top := make([]*node.Node, len(r.IDs))
		for i, id := range r.IDs {
			n, ok := t.byID(id)
			if !ok {
				return nil, false, nil
			}
			top[i] = n
		}
		in.ranked[tag] = top
	}
	dirs := make([]string, 0, len(affected))
	for _, dir := range in.dirs {
		if affected[dir] {
			dirs = append(dirs, dir)
			leafFacts(facts, byDir[dir])
			t.addInDegrees(in.inDegree, byDir[dir])
		}
	}
	leafFacts(facts, byDir[""])
	t.addInDegrees(in.inDegree, byDir[""])
	for _, top := range in.ranked {
		leafFacts(facts, top)
	}

	g = &Generated{Files: map[string][]byte{}, Keys: map[string]string{}, Metrics: map[string]FolderMetrics{},
		NodesHash: nodesHash, Folders: in.dirs, MissingSummaries: in.missing()}
	if err := in.renderFolders(g, dirs, byDir, nil); err != nil {
		return nil, false, err
	}
	for _, dir := range in.dirs {
		file := indexFile(dir)
		if _, ok := g.Keys[file]; ok {
			continue
		}
		f, ok := rec.g.Files[file]
		if !ok {
			return nil, false, nil
		}
		g.Keys[file] = f.Key
	}
	entry, err := in.entry(t.count(), byDir[""], nodesHash)
	if err != nil {
		return nil, false, err
	}
	g.Files["ENTRY.md"], g.Keys["ENTRY.md"] = entry, "nodes:"+nodesHash

	graph, ok, err := spliceGraph(oldGraph, d, nodesHash, t.count())
	if err != nil || !ok {
		return nil, false, err
	}
	g.Files["GRAPH.md"], g.Keys["GRAPH.md"] = graph, "nodes:"+nodesHash
	return g, true, nil
}

// spliceGraph is GRAPH.md of the tree after the change d, from old, the
// GRAPH.md of the tree before it: the old sections but the changed
// leaves', the new versions' sections at their place (by id in root
// collation), under a header for count leaves of the given nodes hash. ok
// is false when old is not laid out as kk writes GRAPH.md, or when the
// result would not hold count sections.
//
// old is read, never changed, nor kept in what it returns: at 100,000
// leaves it is 47 MB, and a copy of it costs a write as much as the
// splice.
func spliceGraph(old []byte, d *Delta, hash string, count int) ([]byte, bool, error) {
	const heading = "---\n# kenkeep Graph\n\nTotal nodes: "
	if !bytes.HasPrefix(old, []byte("---\n")) {
		return nil, false, nil
	}
	at := bytes.Index(old, []byte("\n"+heading))
	if at < 0 {
		return nil, false, nil
	}
	rest := old[at+1+len(heading):]
	eol := bytes.IndexByte(rest, '\n')
	if eol < 0 {
		return nil, false, nil
	}
	n, err := strconv.Atoi(string(rest[:eol]))
	if err != nil {
		return nil, false, nil
	}
	body := rest[eol+1:]
	// The sections: each from its "\n## <id>\n" to the next one.
	type section struct {
		start, end int    // in body; end -1: text, a new section
		id         [2]int // where the id is in body
		text       string
		newID      string
	}
	idOf := func(s *section) string {
		if s.end < 0 {
			return s.newID
		}
		return string(body[s.id[0]:s.id[1]])
	}
	secs := make([]section, 0, n+len(d.Changes))
	marker := []byte("\n## ")
	for off := 0; off < len(body); {
		if !bytes.HasPrefix(body[off:], marker) {
			return nil, false, nil
		}
		idEnd := bytes.IndexByte(body[off+len(marker):], '\n')
		if idEnd < 0 {
			return nil, false, nil
		}
		next := bytes.Index(body[off+1:], marker)
		end := len(body)
		if next >= 0 {
			end = off + 1 + next
		}
		secs = append(secs, section{id: [2]int{off + len(marker), off + len(marker) + idEnd}, start: off, end: end})
		off = end
	}
	if len(secs) != n {
		return nil, false, nil
	}
	find := func(id string) (int, bool) {
		return slices.BinarySearchFunc(secs, id, func(s section, id string) int { return store.LocaleCompare(idOf(&s), id) })
	}
	for _, c := range d.Changes {
		if c.Old == nil {
			continue
		}
		i, found := find(c.Old.ID)
		if !found {
			return nil, false, nil
		}
		secs = slices.Delete(secs, i, i+1)
	}
	for _, c := range d.Changes {
		if c.New == nil {
			continue
		}
		i, found := find(c.New.ID)
		if found {
			return nil, false, nil // two sections for one id
		}
		secs = slices.Insert(secs, i, section{newID: c.New.ID, end: -1, text: graphSection(c.New)})
	}
	if len(secs) != count {
		return nil, false, nil
	}
	head, err := graphHead(hash, count)
	if err != nil {
		return nil, false, err
	}
	size := len(head)
	for _, s := range secs {
		if s.end < 0 {
			size += len(s.text)
		} else {
			size += s.end - s.start
		}
	}
	out := make([]byte, 0, size)
	out = append(out, head...)
	for _, s := range secs {
		if s.end < 0 {
			out = append(out, s.text...)
		} else {
			out = append(out, body[s.start:s.end]...)
		}
	}
	return out, true, nil
}

func keys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
