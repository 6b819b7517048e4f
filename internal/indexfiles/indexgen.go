package indexfiles

import (
	"crypto/sha256"
	"encoding/hex"
	"iter"
	"slices"
	"strconv"
	"strings"

	"github.com/kk-project/kk/internal/store"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// OKFVersion is the Open Knowledge Format version kk declares in
// nodes/index.md: kenkeep's, whose lint fails a bundle root declaring any
// other (kk reads the optional OKF v0.2 keys of a leaf all the same).
const OKFVersion = "0.1"

// EmptyHash is the nodes_hash of a tree with no leaves.
const EmptyHash = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"

// Directives embedded in every generated index: kenkeep's bytes
// (KK_NAVIGATION_DIRECTIVE, INDEX_LEAF_READ_DIRECTIVE), as are the headings,
// so that kk and kenkeep generate the same files from the same leaves.
const (
	NavigationDirective = "> kenkeep navigation: the injected body above is the root index node, the top-level catalog of branches and root-level leaves. Do not expect the whole knowledge base here; descend on demand. Read the root index node, pick one or more branches whose intent and tags match your task (several branches can be relevant), and read those branch `index.md` nodes. Descend further only where the task needs it, opening only the leaves you have confirmed are relevant. Follow each leaf's `relates_to` and `depends_on` cross edges to reach related leaves in other branches. You decide how deep to go per branch."
	LeafReadDirective   = "> This index only orients you; leaves hold the durable guidance. Open at least one relevant leaf before acting."
)

// byTopicMax is how many nodes each tag of a folder's "By topic" block lists.
const byTopicMax = 3

// Generated is the full output of index generation.
type Generated struct {
	// Files maps a path relative to the KB folder (.ai/kenkeep) to content.
	Files map[string][]byte
	// Keys holds, for every generated file (rendered or skipped), a hash of
	// the inputs it was rendered from.
	Keys map[string]string
	// Skipped lists the files not rendered because they were fresh.
	Skipped []string
	// NodesHash is the content hash of every leaf ("sha256:" not included).
	NodesHash string
	// MissingSummaries lists non-root folders without a summary.
	MissingSummaries []string
	// Folders are the folders that have (or get) an index.md.
	Folders []string
	// Metrics per folder, for rebalance.
	Metrics map[string]FolderMetrics
	// facts are what generation derived from each leaf, by leaf: a
	// second generation over the same leaves (the tree before a change,
	// handedit.go) derives only the others'.
	facts map[*node.Node]*leafGen
}

// FolderMetrics describe a folder's direct leaves.
type FolderMetrics struct {
	Occupancy    int // direct leaves
	TagDiversity int // distinct tags among them
	LeafSize     int // estimated tokens: ceil(chars/4) over title, description and body
}

// NodesHash computes the content hash of a tree: sha256 over the sorted
// lines "<path>\t<sha256 of the leaf's bytes>", joined by "\n"; a leaf's
// bytes are read with every CRLF as LF (store.LeafSum), so that a checkout
// with CRLF line endings has the hash of the one with LF.
func NodesHash(t *store.Tree) string {
	lines := make([]string, len(t.Leaves))
	for i, n := range t.Leaves {
		lines[i] = n.Path + "\t" + t.Hashes[n.Path]
	}
	return store.HashLeafLines(lines)
}

// Generate renders every generated file of the tree: each folder's
// index.md, the root nodes/index.md, ENTRY.md and GRAPH.md. summaries are
// the folder summaries; the root's comes from ENTRY.md.
func Generate(t *store.Tree, summaries store.Summaries) (*Generated, error) {
	return generate(t, summaries, nil, "", nil)
}

// generate is Generate that skips rendering every folder index for which
// fresh(file, key) reports that the file on disk was rendered from inputs
// with that key. Keys cover everything a folder index shows; see folderKey.
// nodesHash is NodesHash(t) when the caller has it, else ""; rr, when not
// nil, holds the rankings the branch index records.
func generate(t *store.Tree, summaries store.Summaries, fresh func(file, key string) bool, nodesHash string, rr *rankRecord) (*Generated, error) {
	return generateFacts(t, summaries, fresh, nodesHash, rr, make(map[*node.Node]*leafGen, len(t.Leaves)))
}

// generateFacts is generate with the facts of leaves derived already (of
// t's leaves or others); it adds those of t's other leaves.
func generateFacts(t *store.Tree, summaries store.Summaries, fresh func(file, key string) bool, nodesHash string, rr *rankRecord, facts map[*node.Node]*leafGen) (*Generated, error) {
	g := &Generated{Files: map[string][]byte{}, Keys: map[string]string{}, Metrics: map[string]FolderMetrics{}, facts: facts}
	if nodesHash == "" {
		nodesHash = NodesHash(t)
	}
	g.NodesHash = nodesHash
	leafFacts(facts, t.Leaves)
	in := newGenInputs(treeAfter(t).dirs(), summaries, linksTo(t.Leaves), facts)
	g.Folders, g.MissingSummaries = in.dirs, in.missing()
	if rr != nil {
		in.ranked = rankCached(rr, t.Leaves, func(n *node.Node) string { return t.Hashes[n.Path] }, t.ByID, in.inDegree)
	} else {
		in.ranked = rankCohorts(t.Leaves, in.inDegree)
	}
	byDir := map[string][]*node.Node{}
	for _, n := range t.Leaves {
		byDir[n.Dir()] = append(byDir[n.Dir()], n)
	}
	if err := in.renderFolders(g, in.dirs, byDir, fresh); err != nil {
		return nil, err
	}
	entry, err := in.entry(len(t.Leaves), byDir[""], nodesHash)
	if err != nil {
		return nil, err
	}
	g.Files["ENTRY.md"] = entry
	g.Keys["ENTRY.md"] = "nodes:" + g.NodesHash
	graph, err := renderGraph(t, g.NodesHash, graphOrder(t, facts))
	if err != nil {
		return nil, err
	}
	g.Files["GRAPH.md"] = graph
	g.Keys["GRAPH.md"] = "nodes:" + g.NodesHash
	return g, nil
}

// genInputs are what rendering the folder indexes and ENTRY.md reads
// besides each folder's own leaves.
type genInputs struct {
	summaries store.Summaries
	inDegree  map[string]int
	facts     map[*node.Node]*leafGen // of every leaf rendered, listed or ranked
	ranked    map[string][]*node.Node // each tag's first leaves (of the tags rendered)
	dirs      []string                // every folder that gets an index.md, sorted
	children  map[string][]string
}

// newGenInputs lists the folders (those holding leaves and their
// ancestors, nodes/ itself included) of a tree whose leaves' folders are
// leafDirs (in the tree's order).
func newGenInputs(leafDirs iter.Seq[string], summaries store.Summaries, inDegree map[string]int, facts map[*node.Node]*leafGen) *genInputs {
	in := &genInputs{summaries: summaries, inDegree: inDegree, facts: facts, children: map[string][]string{}}
	dirSet := map[string]bool{"": true}
	last := ""
	for d := range leafDirs {
		if d == last {
			continue
		}
		last = d
		for d != "" && !dirSet[d] {
			dirSet[d] = true
			d = store.DirOf(d)
		}
	}
	in.dirs = make([]string, 0, len(dirSet))
	for d := range dirSet {
		in.dirs = append(in.dirs, d)
	}
	store.SortLocale(in.dirs)
	for _, d := range in.dirs {
		if d != "" {
			in.children[store.DirOf(d)] = append(in.children[store.DirOf(d)], d)
		}
	}
	return in
}

// missing lists the folders (but nodes/) without a summary.
func (in *genInputs) missing() []string {
	var out []string
	for _, d := range in.dirs {
		if d != "" && in.summaries[d] == "" {
			out = append(out, d)
		}
	}
	return out
}

// catalog is the order of a folder's leaves: in-degree, title, path.
func (in *genInputs) catalog(a, b *node.Node) int {
	if d := in.inDegree[b.ID] - in.inDegree[a.ID]; d != 0 {
		return d
	}
	if r := byTitle(a, b); r != 0 {
		return r
	}
	return store.CmpString(a.Path, b.Path)
}

// renderFolders renders the index.md of every folder of dirs (byDir: each
// one's direct leaves) into g, but those fresh reports as current.
func (in *genInputs) renderFolders(g *Generated, dirs []string, byDir map[string][]*node.Node, fresh func(file, key string) bool) error {
	rootHead, err := yamlstyle.Marshal(yamlstyle.Map{{Key: "okf_version", Value: OKFVersion}})
	if err != nil {
		return err
	}
	bodies := make([]string, len(dirs))
	keys := make([]string, len(dirs))
	skip := make([]bool, len(dirs))
	metrics := make([]FolderMetrics, len(dirs))
	lb := labels(in.facts)
	store.Parallel(len(dirs), func(i int) {
		d := dirs[i]
		leaves := slices.Clone(byDir[d])
		slices.SortFunc(leaves, in.catalog)
		metrics[i] = MetricsOf(leaves)
		keys[i] = folderKey(d, leaves, in.children[d], in.ranked, in.summaries, in.facts)
		if fresh != nil && fresh(indexFile(d), keys[i]) {
			skip[i] = true
			return
		}
		bodies[i] = renderFolder(d, leaves, in.children[d], in.ranked, in.summaries, lb)
	})
	for i, d := range dirs {
		file := indexFile(d)
		g.Keys[file] = keys[i]
		g.Metrics[d] = metrics[i]
		if skip[i] {
			g.Skipped = append(g.Skipped, file)
			continue
		}
		body := bodies[i]
		if d == "" {
			body = "---\n" + string(rootHead) + "---\n" + body
		} else {
			// kenkeep writes a folder's index.md without a final
			// newline (its root index, with front matter, has one):
			// the same bytes, so a repository both tools work on sees
			// no diff.
			body = strings.TrimSuffix(body, "\n")
		}
		g.Files[file] = []byte(body)
	}
	return nil
}

// entry renders ENTRY.md; root are the leaves directly in nodes/.
func (in *genInputs) entry(count int, root []*node.Node, nodesHash string) ([]byte, error) {
	rootLeaves := slices.Clone(root)
	slices.SortFunc(rootLeaves, in.catalog)
	return renderEntry(count, rootLeaves, in.children[""], in.summaries, nodesHash, labels(in.facts))
}

// linksTo counts the relates_to links that lead to each id.
// byTitle orders leaves by title in root collation; equal titles tie.
func byTitle(a, b *node.Node) int { return store.LocaleCompare(a.Title, b.Title) }

func linksTo(leaves []*node.Node) map[string]int {
	inDegree := make(map[string]int, len(leaves))
	for _, n := range leaves {
		for _, id := range n.RelatesTo {
			inDegree[id]++
		}
	}
	return inDegree
}

func MetricsOf(leaves []*node.Node) FolderMetrics {
	tags := map[string]bool{}
	chars := 0
	for _, n := range leaves {
		for _, t := range n.Tags {
			tags[t] = true
		}
		chars += store.UTF16Len(n.Title) + store.UTF16Len(n.Description) + n.BodySize
	}
	return FolderMetrics{Occupancy: len(leaves), TagDiversity: len(tags), LeafSize: (chars + 3) / 4}
}

// rankCohorts orders, for every tag, the leaves carrying it by centrality
// (see centrality.go), then by in-degree, then by title, and keeps the
// first byTopicMax of each.
func rankCohorts(leaves []*node.Node, inDegree map[string]int) map[string][]*node.Node {
	tagID := map[string]int{}
	var tagNames []string
	sets := make([][]int, len(leaves))
	for i, n := range leaves {
		set := make([]int, 0, len(n.Tags))
		for _, t := range n.Tags {
			id, ok := tagID[t]
			if !ok {
				id = len(tagNames)
				tagID[t] = id
				tagNames = append(tagNames, t)
			}
			if !slices.Contains(set, id) {
				set = append(set, id)
			}
		}
		slices.Sort(set)
		sets[i] = set
	}
	scores := centralityScores(sets, len(tagNames))
	type member struct {
		leaf  int
		score float64
	}
	cohorts := make([][]member, len(tagNames))
	for i, set := range sets {
		for p, t := range set {
			cohorts[t] = append(cohorts[t], member{i, scores[i][p]})
		}
	}
	out := make(map[string][]*node.Node, len(tagNames))
	for t, members := range cohorts {
		slices.SortFunc(members, func(x, y member) int {
			if x.score != y.score {
				if y.score > x.score {
					return 1
				}
				return -1
			}
			a, b := leaves[x.leaf], leaves[y.leaf]
			if d := inDegree[b.ID] - inDegree[a.ID]; d != 0 {
				return d
			}
			if r := byTitle(a, b); r != 0 {
				return r
			}
			return store.CmpString(a.Path, b.Path)
		})
		top := make([]*node.Node, 0, min(byTopicMax, len(members)))
		for _, m := range members[:min(byTopicMax, len(members))] {
			top = append(top, leaves[m.leaf])
		}
		out[tagNames[t]] = top
	}
	return out
}

// titleCase turns a folder name like "data-cache" into "Data Cache".
func titleCase(dir string) string {
	leaf := dir[strings.LastIndexByte(dir, '/')+1:]
	var words []string
	for _, w := range strings.Split(leaf, "-") {
		if w == "" {
			continue
		}
		r := []rune(w)
		words = append(words, strings.ToUpper(string(r[0]))+string(r[1:]))
	}
	if len(words) == 0 {
		return leaf
	}
	return strings.Join(words, " ")
}

// sentenceTail is "." unless text already ends a sentence.
func sentenceTail(text string) string {
	t := strings.TrimRight(strings.TrimSpace(text), ")]\"'`")
	if strings.HasSuffix(t, ".") || strings.HasSuffix(t, "!") || strings.HasSuffix(t, "?") {
		return ""
	}
	return "."
}

func descentPointer(dir, summary, href string) string {
	raw := summary
	if raw == "" {
		raw = titleCase(dir)
	}
	name := dir[strings.LastIndexByte(dir, '/')+1:]
	return "- Load [`" + name + "/`](" + node.EscapeLinkPath(href) + ") for more information on " + node.EscapeLabel(shown(raw)) + sentenceTail(raw)
}

// label holds a leaf's title and description escaped for link text.
type label struct{ title, desc string }

// labels gives each leaf's label.
type labels map[*node.Node]*leafGen

func (l labels) pointer(n *node.Node, href string) string {
	lb := l[n].label
	var b strings.Builder
	b.WriteString("- Open [**")
	b.WriteString(lb.title)
	b.WriteString("**](")
	b.WriteString(node.EscapeLinkPath(href))
	b.WriteString(")")
	if lb.desc != "" {
		b.WriteString(" to learn about: ")
		b.WriteString(lb.desc)
	}
	for _, t := range n.Tags {
		b.WriteString(" #")
		b.WriteString(oneLine(t))
	}
	return b.String()
}

func (l labels) topicEntry(n *node.Node, href string) string {
	lb := l[n].label
	line := "- Open [**" + lb.title + "**](" + node.EscapeLinkPath(href) + ")"
	if lb.desc != "" {
		line += " — " + lb.desc
	}
	return line
}

func renderFolder(dir string, leaves []*node.Node, subs []string, ranked map[string][]*node.Node, summaries store.Summaries, lb labels) string {
	var b strings.Builder
	line := func(s string) {
		b.WriteString(s)
		b.WriteByte('\n')
	}
	if dir == "" {
		line("# kenkeep Index")
	} else {
		line("# kenkeep Index: " + strings.ReplaceAll(dir, "/", " / "))
		line("")
		parent := "kenkeep"
		if p := store.DirOf(dir); p != "" {
			parent = p[strings.LastIndexByte(p, '/')+1:]
		}
		line("↑ Parent: [" + parent + "](../index.md)")
	}
	line("")
	line(NavigationDirective)
	line("")
	line(LeafReadDirective)
	line("")
	line("## Subfolders")
	if len(subs) == 0 {
		line("_None._")
	}
	for _, s := range subs {
		line(descentPointer(s, summaries[s], relHref(dir, s+"/index.md")))
	}
	practice, maps, other := splitKinds(leaves)
	sections := []struct {
		title  string
		leaves []*node.Node
		empty  string
	}{{"## Conventions (how we build)", practice, "_None yet._"}, {"## Components (what exists)", maps, "_None yet._"}, {"## Other knowledge", other, ""}}
	for _, sec := range sections {
		if len(sec.leaves) == 0 && sec.empty == "" {
			continue
		}
		line("")
		line(sec.title)
		if len(sec.leaves) == 0 {
			line(sec.empty)
		}
		for _, n := range sec.leaves {
			line(lb.pointer(n, relHref(dir, n.Path)))
		}
	}
	line("")
	line("## By topic")
	line("")
	tags := topicBuckets(leaves)
	if len(tags) == 0 {
		line("_No tags yet._")
		return b.String()
	}
	for _, t := range tags {
		line("### #" + oneLine(t))
		for _, n := range ranked[t] {
			line(lb.topicEntry(n, relHref(dir, n.Path)))
		}
	}
	return b.String()
}

func splitKinds(leaves []*node.Node) (practice, maps, other []*node.Node) {
	for _, n := range leaves {
		switch n.Type {
		case "practice":
			practice = append(practice, n)
		case "map":
			maps = append(maps, n)
		default:
			other = append(other, n)
		}
	}
	return
}

func renderEntry(count int, rootLeaves []*node.Node, branches []string, summaries store.Summaries, hash string, lb labels) ([]byte, error) {
	fm := yamlstyle.Map{
		{Key: "schema_version", Value: node.SchemaVersion},
		{Key: "nodes_hash", Value: "sha256:" + hash},
		{Key: "node_count", Value: count},
	}
	if s := summaries[""]; s != "" {
		fm = append(fm, yamlstyle.MapItem{Key: "summary", Value: s})
	}
	head, err := yamlstyle.Marshal(fm)
	if err != nil {
		return nil, err
	}
	lines := []string{"# kenkeep", "", NavigationDirective, "", "## Branches"}
	if len(branches) == 0 {
		lines = append(lines, "_None._")
	}
	for _, b := range branches {
		lines = append(lines, descentPointer(b, summaries[b], "nodes/"+b+"/index.md"))
	}
	practice, maps, other := splitKinds(rootLeaves)
	for _, sec := range []struct {
		title  string
		leaves []*node.Node
	}{{"## Conventions (how we build)", practice}, {"## Components (what exists)", maps}, {"## Other knowledge", other}} {
		if len(sec.leaves) == 0 {
			continue
		}
		lines = append(lines, "", sec.title)
		for _, n := range sec.leaves {
			lines = append(lines, lb.pointer(n, "nodes/"+n.Path))
		}
	}
	return []byte("---\n" + string(head) + "---\n" + strings.Join(lines, "\n") + "\n"), nil
}

// renderGraph renders GRAPH.md: order is the leaves' facts by id, in
// root collation.
func renderGraph(t *store.Tree, hash string, order []*leafGen) ([]byte, error) {
	head, err := graphHead(hash, len(t.Leaves))
	if err != nil {
		return nil, err
	}
	size := len(head)
	for _, f := range order {
		size += len(f.graph)
	}
	b := make([]byte, 0, size)
	b = append(b, head...)
	if len(t.Leaves) == 0 {
		b = append(b, "_No nodes yet._\n"...)
		return b, nil
	}
	for _, f := range order {
		b = append(b, f.graph...)
	}
	return b, nil
}

// graphHead is GRAPH.md up to its first section: the front matter, the
// heading and, for a tree with leaves, their count.
func graphHead(hash string, count int) ([]byte, error) {
	fm, err := yamlstyle.Marshal(yamlstyle.Map{
		{Key: "schema_version", Value: node.SchemaVersion},
		{Key: "nodes_hash", Value: "sha256:" + hash},
		{Key: "node_count", Value: count},
	})
	if err != nil {
		return nil, err
	}
	b := append(append([]byte("---\n"), fm...), "---\n# kenkeep Graph\n\n"...)
	if count > 0 {
		b = append(b, "Total nodes: "+strconv.Itoa(count)+"\n"...)
	}
	return b, nil
}

// relHref is the link from folder dir to target (both relative to nodes/).
func relHref(dir, target string) string {
	if dir == "" {
		return target
	}
	common := commonFolder(dir, store.DirOf(target))
	up := 0
	if rest := dir[common:]; rest != "" {
		up = strings.Count(rest, "/")
		if common == 0 {
			up++
		}
	}
	rest := strings.TrimPrefix(target[common:], "/")
	return strings.Repeat("../", up) + rest
}

// commonFolder returns the length of the longest run of whole leading
// folder names a and b share.
func commonFolder(a, b string) int {
	n := 0
	for i := 0; i <= len(a) && i <= len(b); i++ {
		atEnd := i == len(a) || a[i] == '/'
		if atEnd && (i == len(b) || b[i] == '/') {
			n = i
		}
		if i == len(a) || i == len(b) || a[i] != b[i] {
			break
		}
	}
	return n
}

// topicBuckets lists the tags of a folder's direct leaves, most used first,
// then in locale order: the "By topic" headings.
func topicBuckets(leaves []*node.Node) []string {
	buckets := map[string]int{}
	for _, n := range leaves {
		for i, t := range n.Tags {
			if !slices.Contains(n.Tags[:i], t) {
				buckets[t]++
			}
		}
	}
	tags := make([]string, 0, len(buckets))
	for t := range buckets {
		tags = append(tags, t)
	}
	store.SortLocale(tags)
	slices.SortStableFunc(tags, func(a, b string) int { return buckets[b] - buckets[a] })
	return tags
}

func indexFile(dir string) string {
	if dir == "" {
		return "nodes/index.md"
	}
	return "nodes/" + dir + "/index.md"
}

// folderKey hashes everything renderFolder reads for dir: its subfolders
// and their summaries, its direct leaves in display order, and the leaves
// each of its topics lists. Equal keys mean byte-identical output.
func folderKey(dir string, leaves []*node.Node, subs []string, ranked map[string][]*node.Node, summaries store.Summaries, facts map[*node.Node]*leafGen) string {
	h := sha256.New()
	h.Write([]byte(generatorVersion + "\x00" + dir + "\x00"))
	for _, s := range subs {
		h.Write([]byte(s + "\x00" + summaries[s] + "\x00"))
	}
	h.Write([]byte{1})
	for _, n := range leaves {
		h.Write(facts[n].digest[:])
	}
	for _, t := range topicBuckets(leaves) {
		h.Write([]byte("\x02" + t + "\x00"))
		for _, n := range ranked[t] {
			h.Write(facts[n].digest[:])
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}
