package reorg

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/progress"
)

// Rebalance thresholds (kenkeep's, unchanged). The gap between the merge
// and split marks keeps a folder that gains or loses one leaf from flipping
// between the two.
const (
	// FolderOccupancyMax: a folder with more direct leaves is split.
	FolderOccupancyMax = 12
	// BranchOccupancyMin: a folder other than the root with fewer direct
	// leaves and no subfolders is merged away.
	BranchOccupancyMin = 2
	// LeafSizeSplitThreshold: a leaf larger than this many estimated tokens
	// (title, description and body characters / 4) ...
	LeafSizeSplitThreshold = 1500
	// LeafConceptMin: ... and with at least this many distinct tags is split.
	LeafConceptMin = 3
	// RootHomelessEdgeMax: a root leaf with at most this many edges has no
	// home and gets a branch of its own (with peers sharing a tag).
	RootHomelessEdgeMax = 0
)

// RebalanceTrigger reads the tree and returns the structural changes its
// shape calls for (see DecideRebalance). It writes nothing but the leaf
// cache.
func RebalanceTrigger(k *store.KB) ([]contracts.RebalanceAction, error) {
	t, err := index.ReadTree(context.Background(), k)
	if err != nil {
		return nil, err
	}
	return DecideRebalance(t), nil
}

// DecideRebalance applies the rebalance thresholds to a tree, using the
// per-folder metrics of index generation:
//
//   - split-folder for a folder (the root included) with more than
//     FolderOccupancyMax direct leaves;
//   - merge for a folder other than the root with fewer than
//     BranchOccupancyMin direct leaves and no subfolders;
//   - split-leaf for a leaf larger than LeafSizeSplitThreshold tokens that
//     carries at least LeafConceptMin distinct tags (branch: its path);
//   - create-branch for root leaves without edges, grouped by the tag most
//     of them share (see homelessActions).
//
// Folders are those index generation makes: the root and every folder
// holding a leaf at some depth. Actions are sorted by branch, then
// operation, in locale order.
func DecideRebalance(t *store.Tree) []contracts.RebalanceAction {
	byDir := map[string][]*node.Node{}
	dirSet := map[string]bool{"": true}
	for _, n := range t.Leaves {
		d := n.Dir()
		byDir[d] = append(byDir[d], n)
		for ; d != "" && !dirSet[d]; d = store.DirOf(d) {
			dirSet[d] = true
		}
	}
	hasChild := map[string]bool{}
	for d := range dirSet {
		if d != "" {
			hasChild[store.DirOf(d)] = true
		}
	}
	actions := []contracts.RebalanceAction{}
	for d := range dirSet {
		m := indexfiles.MetricsOf(byDir[d])
		if m.Occupancy > FolderOccupancyMax {
			actions = append(actions, contracts.RebalanceAction{Branch: d, Operation: contracts.OpSplitFolder})
		}
		if d != "" && m.Occupancy < BranchOccupancyMin && !hasChild[d] {
			actions = append(actions, contracts.RebalanceAction{Branch: d, Operation: contracts.OpMerge})
		}
	}
	one := make([]*node.Node, 1)
	for _, n := range t.Leaves {
		one[0] = n
		if m := indexfiles.MetricsOf(one); m.LeafSize > LeafSizeSplitThreshold && m.TagDiversity >= LeafConceptMin {
			actions = append(actions, contracts.RebalanceAction{Branch: n.Path, Operation: contracts.OpSplitLeaf})
		}
	}
	actions = append(actions, homelessActions(byDir[""])...)
	slices.SortFunc(actions, func(a, b contracts.RebalanceAction) int {
		if c := store.LocaleCompare(a.Branch, b.Branch); c != 0 {
			return c
		}
		return store.LocaleCompare(a.Operation, b.Operation)
	})
	return actions
}

// homelessActions proposes create-branch actions for the root leaves that
// have no edges. Taking them in path order, each leaf not yet grouped picks
// its tag shared by the most ungrouped homeless leaves (ties: locale
// order); if at least two share it, they form one action naming them all
// and the tag, otherwise the leaf gets an action of its own.
func homelessActions(rootLeaves []*node.Node) []contracts.RebalanceAction {
	var homeless []*node.Node
	for _, n := range rootLeaves {
		if len(n.RelatesTo)+len(n.DependsOn) <= RootHomelessEdgeMax {
			homeless = append(homeless, n)
		}
	}
	paths := make([]string, len(homeless))
	for i, n := range homeless {
		paths[i] = n.Path
	}
	order := store.SortedOrder(paths)
	sorted := make([]*node.Node, len(homeless))
	for i, j := range order {
		sorted[i] = homeless[j]
	}
	tagsOf := make([][]string, len(sorted))
	buckets := map[string][]int{} // tag -> indexes into sorted, in path order
	left := map[string]int{}      // tag -> ungrouped leaves carrying it
	for i, n := range sorted {
		tags := slices.Clone(n.Tags)
		store.SortLocale(tags)
		tags = slices.Compact(tags)
		tagsOf[i] = tags
		for _, tag := range tags {
			buckets[tag] = append(buckets[tag], i)
			left[tag]++
		}
	}
	grouped := make([]bool, len(sorted))
	take := func(i int) {
		grouped[i] = true
		for _, tag := range tagsOf[i] {
			left[tag]--
		}
	}
	var out []contracts.RebalanceAction
	for i, n := range sorted {
		if grouped[i] {
			continue
		}
		topic, best := "", 0
		for _, tag := range tagsOf[i] { // locale order, so the first of equals wins
			if left[tag] > best {
				topic, best = tag, left[tag]
			}
		}
		if best < 2 {
			take(i)
			out = append(out, contracts.RebalanceAction{Branch: n.Path, Operation: contracts.OpCreateBranch})
			continue
		}
		var group []string
		for _, j := range buckets[topic] {
			if !grouped[j] {
				group = append(group, sorted[j].Path)
				take(j)
			}
		}
		out = append(out, contracts.RebalanceAction{Branch: group[0], Operation: contracts.OpCreateBranch, Branches: group, Topic: topic})
	}
	return out
}

// MoveProblem is one reason a plan was rejected. Pointer is the JSON
// Pointer (RFC 6901) of the part of the plan at fault.
type MoveProblem struct {
	Pointer string `json:"pointer"`
	Message string `json:"message"`
}

func (p MoveProblem) String() string {
	ptr := p.Pointer
	if ptr == "" {
		ptr = "(root)"
	}
	return ptr + ": " + p.Message
}

// MovePlanError is a rebalance or place plan that cannot be applied to the
// tree. Nothing was written.
type MovePlanError struct {
	Plan     string // "rebalance plan" or "place plan"
	Problems []MoveProblem
}

func (e *MovePlanError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "the %s cannot be applied; nothing was written:", e.Plan)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	return b.String()
}

// RebalanceMove is one change a rebalance made. Paths are relative to
// nodes/. A split-leaf row names the retired leaf's path (From), the folder
// of the new leaves (To), the retired id (RedirectFrom) and the new ids.
type RebalanceMove struct {
	Operation    string   `json:"operation"`
	ID           string   `json:"id,omitempty"`
	From         string   `json:"from,omitempty"`
	To           string   `json:"to,omitempty"`
	NewIDs       []string `json:"newIds,omitempty"`
	RedirectFrom string   `json:"redirectFrom,omitempty"`
}

// SkippedOperation is an operation of a plan whose effect the tree already
// shows.
type SkippedOperation struct {
	Pointer string `json:"pointer"`
	Reason  string `json:"reason"`
}

// RebalanceResult says what ApplyRebalance did. Leaf and folder paths are
// relative to nodes/; index paths are relative to the repository root.
type RebalanceResult struct {
	// Noop is set when the tree already looked as the plan asks;
	// nothing was written.
	Noop    bool               `json:"nothing_to_do"`
	Moves   []RebalanceMove    `json:"moves"`
	Skipped []SkippedOperation `json:"skipped"`
	// Relinked lists the leaves that did not move but were rewritten
	// because a leaf their Related section links to moved or was retired.
	Relinked []string `json:"relinked"`
	// Summaries lists the folders whose summary was recorded or changed.
	Summaries    []string `json:"summaries"`
	IndexChanged []string `json:"index_changed"`
	IndexRemoved []string `json:"index_removed"`
}

// simLeaf is a leaf in the simulated tree a plan is checked against.
type simLeaf struct {
	id    string
	typ   string
	conf  string
	edges []string   // relates_to then depends_on
	src   string     // its path on disk before the plan; "" for a new leaf
	path  string     // its path once the plan so far is applied
	child *node.Node // a leaf the plan creates
}

// planSim is the tree as a plan transforms it, operation by operation, in
// memory. Every operation is checked against it, so a later operation sees
// where earlier ones put the leaves, and every problem of the whole plan
// is found before the first file is touched.
type planSim struct {
	k         *store.KB
	progress  *progress.Task // the rendering of fileChanges (nil: none)
	byID      map[string]*simLeaf
	byPath    map[string]*simLeaf
	below     map[string]int  // folder -> leaves at any depth below it
	vacated   map[string]bool // paths whose leaf moves away or is retired
	diskDirs  map[string]bool
	reserved  map[string]bool // ids a split may not mint
	redirects store.Redirects
	summaries store.Summaries
	// The tree before the plan: leaf paths by id, and the ledger.
	before          map[string]string
	beforePaths     map[string]string // the ids of before, by path (wasAt)
	redirectsBefore store.Redirects
	retired         []*simLeaf
	minted          []*simLeaf
	problems        []MoveProblem
	moves           []RebalanceMove
	skipped         []SkippedOperation
}

func newRBSim(k *store.KB, t *store.Tree, redirects store.Redirects, summaries store.Summaries) *planSim {
	s := &planSim{
		k: k, byID: make(map[string]*simLeaf, len(t.Leaves)), byPath: make(map[string]*simLeaf, len(t.Leaves)),
		below: map[string]int{}, vacated: map[string]bool{}, diskDirs: map[string]bool{},
		reserved: redirects.Ids(), redirects: redirects.Clone(), summaries: store.Summaries{},
		before: make(map[string]string, len(t.Leaves)), redirectsBefore: redirects,
	}
	for k, v := range summaries {
		s.summaries[k] = v
	}
	for _, d := range t.Dirs {
		s.diskDirs[d] = true
	}
	for _, n := range t.Leaves {
		l := &simLeaf{id: n.ID, typ: n.Type, conf: n.Confidence, src: n.Path, path: n.Path,
			edges: append(slices.Clone(n.RelatesTo), n.DependsOn...)}
		s.insert(l)
		s.before[n.ID] = n.Path
	}
	return s
}

func (s *planSim) fail(ptr, format string, args ...any) {
	s.problems = append(s.problems, MoveProblem{Pointer: ptr, Message: fmt.Sprintf(format, args...)})
}

func (s *planSim) insert(l *simLeaf) {
	s.byID[l.id] = l
	s.byPath[l.path] = l
	s.reserved[l.id] = true
	s.count(l.path, 1)
}

func (s *planSim) remove(l *simLeaf) {
	delete(s.byID, l.id)
	delete(s.byPath, l.path)
	s.vacated[l.path] = true
	s.count(l.path, -1)
}

func (s *planSim) count(path string, delta int) {
	for d := store.DirOf(path); ; d = store.DirOf(d) {
		s.below[d] += delta
		if d == "" {
			return
		}
	}
}

// folderExists reports whether folder is the root, holds a leaf at some
// depth in the simulated tree, or is a folder on disk.
func (s *planSim) folderExists(folder string) bool {
	return folder == "" || s.below[folder] > 0 || s.diskDirs[folder]
}

// directLeaves lists the leaves directly in folder, in path order.
func (s *planSim) directLeaves(folder string) []*simLeaf {
	var out []*simLeaf
	for p, l := range s.byPath {
		if store.DirOf(p) == folder {
			out = append(out, l)
		}
	}
	slices.SortFunc(out, func(a, b *simLeaf) int { return store.LocaleCompare(a.path, b.path) })
	return out
}

// free checks that nothing occupies path once the plan so far is applied.
func (s *planSim) free(path string) error {
	if other, ok := s.byPath[path]; ok {
		return fmt.Errorf("%s is already the path of leaf %s", path, other.id)
	}
	if s.vacated[path] {
		return nil
	}
	if _, err := os.Lstat(s.k.NodePath(path)); err == nil {
		return fmt.Errorf("%s already exists and kk does not overwrite it", path)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// folder cleans a folder named by the plan, reporting a bad one at ptr.
// nodes/x and .ai/kenkeep/nodes/x name the folder x (node.TreeFolder).
func (s *planSim) folder(ptr, raw string) (string, bool) {
	f, err := node.TreeFolder(raw)
	if err != nil {
		s.fail(ptr, "%v", err)
		return "", false
	}
	if err := s.k.CheckFolder(f); err != nil {
		s.fail(ptr, "%v", err)
		return "", false
	}
	return f, true
}

// lookup finds a live leaf for an id the plan names.
func (s *planSim) lookup(ptr, id string) (*simLeaf, bool) {
	if l, ok := s.byID[id]; ok {
		return l, true
	}
	if to, retired := s.redirects[id]; retired {
		s.fail(ptr, "leaf %s was retired by a split; it redirects to %s", id, strings.Join(to, ", "))
	} else {
		s.fail(ptr, "no leaf has the id %q", id)
	}
	return nil, false
}

// relocate moves a leaf to folder in the simulation (nothing when it is
// there already).
func (s *planSim) relocate(ptr, op string, l *simLeaf, folder string) {
	to := store.JoinRel(folder, l.id+".md")
	if l.path == to {
		return
	}
	if err := s.free(to); err != nil {
		s.fail(ptr, "moving %s to %s: %v", l.id, folder, err)
		return
	}
	from := l.path
	s.remove(l)
	l.path = to
	s.insert(l)
	s.moves = append(s.moves, RebalanceMove{Operation: op, ID: l.id, From: from, To: to})
}

// stamp records a folder summary from the plan; a blank one changes nothing.
func (s *planSim) stamp(ptr, folder, summary string) {
	summary = strings.TrimSpace(summary)
	if summary == "" || folder == "" {
		return
	}
	if strings.ContainsAny(summary, "\r\n") {
		s.fail(ptr, "a folder summary is one line")
		return
	}
	// FOLDER_SUMMARIES.md and every index file print it.
	if msg := node.LineProblem(summary); msg != "" {
		s.fail(ptr, "%s", msg)
		return
	}
	s.summaries[folder] = summary
}

func leafRef(i int, rest ...any) string {
	var b strings.Builder
	b.WriteString("/operations/")
	b.WriteString(strconv.Itoa(i))
	for _, r := range rest {
		b.WriteByte('/')
		b.WriteString(escapeName(fmt.Sprint(r)))
	}
	return b.String()
}

func escapeName(t string) string {
	return strings.ReplaceAll(strings.ReplaceAll(t, "~", "~0"), "/", "~1")
}

func (s *planSim) apply(i int, op contracts.RebalanceOperation) {
	moves, problems, skipped := len(s.moves), len(s.problems), len(s.skipped)
	reason := "every leaf it names is already in place"
	switch op.Operation {
	case contracts.OpSplitFolder:
		s.splitFolder(i, op)
	case contracts.OpMerge:
		s.merge(i, op)
		reason = fmt.Sprintf("folder %s has no leaves left to merge", op.Branch)
	case contracts.OpCreateBranch:
		s.createBranch(i, op)
	case contracts.OpSplitLeaf:
		s.splitLeaf(i, op)
		reason = fmt.Sprintf("leaf %s was already split", op.LeafID)
	default:
		s.fail(leafRef(i, "operation"), "unknown operation %q; use one of %s", op.Operation, strings.Join(contracts.RebalanceOperations, ", "))
	}
	if len(s.moves) == moves && len(s.problems) == problems && len(s.skipped) == skipped {
		s.skipped = append(s.skipped, SkippedOperation{Pointer: leafRef(i), Reason: reason})
	}
}

func (s *planSim) splitFolder(i int, op contracts.RebalanceOperation) {
	branch, ok := s.folder(leafRef(i, "branch"), op.Branch)
	if !ok {
		return
	}
	if !s.folderExists(branch) {
		s.fail(leafRef(i, "branch"), "no folder %q under nodes/", op.Branch)
		return
	}
	if len(op.Groups) == 0 {
		s.fail(leafRef(i, "groups"), "a split-folder needs at least one group")
	}
	seenSub := map[string]string{}
	seenID := map[string]string{}
	for g, grp := range op.Groups {
		sub, err := node.CleanFolder(grp.Subfolder)
		if err != nil {
			s.fail(leafRef(i, "groups", g, "subfolder"), "%v", err)
			continue
		}
		if sub == "" {
			s.fail(leafRef(i, "groups", g, "subfolder"), "names no subfolder")
			continue
		}
		target := store.JoinRel(branch, sub)
		if prev, dup := seenSub[target]; dup {
			s.fail(leafRef(i, "groups", g, "subfolder"), "subfolder %s is also the target of %s", target, prev)
			continue
		}
		seenSub[target] = leafRef(i, "groups", g)
		if err := s.k.CheckFolder(target); err != nil {
			s.fail(leafRef(i, "groups", g, "subfolder"), "%v", err)
			continue
		}
		if len(grp.IDs) == 0 {
			s.fail(leafRef(i, "groups", g, "ids"), "a group needs at least one leaf")
		}
		for j, id := range grp.IDs {
			ptr := leafRef(i, "groups", g, "ids", j)
			if prev, dup := seenID[id]; dup {
				s.fail(ptr, "leaf %s is already listed at %s", id, prev)
				continue
			}
			seenID[id] = ptr
			l, ok := s.lookup(ptr, id)
			if !ok {
				continue
			}
			if dir := store.DirOf(l.path); dir != branch && dir != target {
				s.fail(ptr, "leaf %s is in %s, not directly in %s; split-folder moves the branch's own leaves", id, folderName(dir), folderName(branch))
				continue
			}
			s.relocate(ptr, contracts.OpSplitFolder, l, target)
		}
		s.stamp(leafRef(i, "groups", g, "summary"), target, grp.Summary)
	}
}

func (s *planSim) merge(i int, op contracts.RebalanceOperation) {
	branch, ok1 := s.folder(leafRef(i, "branch"), op.Branch)
	into, ok2 := s.folder(leafRef(i, "into"), op.Into)
	if !ok1 || !ok2 {
		return
	}
	switch {
	case branch == "":
		s.fail(leafRef(i, "branch"), "the nodes/ root cannot be merged into another folder")
		return
	case branch == into:
		s.fail(leafRef(i, "into"), "merging %s into itself moves nothing", branch)
		return
	case !s.folderExists(into):
		s.fail(leafRef(i, "into"), "no folder %q under nodes/; a merge moves leaves into an existing folder (use create-branch for a new one)", op.Into)
		return
	}
	leaves := s.directLeaves(branch)
	if len(leaves) == 0 {
		if s.below[branch] > 0 {
			s.fail(leafRef(i, "branch"), "folder %s has no leaves of its own to merge; its leaves are in subfolders", branch)
		}
		// A folder without leaves was merged already.
		return
	}
	for _, l := range leaves {
		s.relocate(leafRef(i, "branch"), contracts.OpMerge, l, into)
	}
}

func (s *planSim) createBranch(i int, op contracts.RebalanceOperation) {
	folder, ok := s.folder(leafRef(i, "folder"), op.Folder)
	if !ok {
		return
	}
	if folder == "" {
		s.fail(leafRef(i, "folder"), "create-branch needs a folder under nodes/, not the root")
		return
	}
	if len(op.IDs) == 0 {
		s.fail(leafRef(i, "ids"), "create-branch needs at least one leaf")
	}
	seen := map[string]string{}
	for j, id := range op.IDs {
		ptr := leafRef(i, "ids", j)
		if prev, dup := seen[id]; dup {
			s.fail(ptr, "leaf %s is already listed at %s", id, prev)
			continue
		}
		seen[id] = ptr
		if l, ok := s.lookup(ptr, id); ok {
			s.relocate(ptr, contracts.OpCreateBranch, l, folder)
		}
	}
	s.stamp(leafRef(i, "summary"), folder, op.Summary)
}

func (s *planSim) splitLeaf(i int, op contracts.RebalanceOperation) {
	folder, ok := s.folder(leafRef(i, "folder"), op.Folder)
	if !ok {
		return
	}
	old, ok := s.byID[op.LeafID]
	if !ok {
		if _, retired := s.redirects[op.LeafID]; retired {
			return // split already
		}
		s.fail(leafRef(i, "leafId"), "no leaf has the id %q", op.LeafID)
		return
	}
	if len(op.Children) < 2 {
		s.fail(leafRef(i, "children"), "a split-leaf needs at least two children")
		return
	}
	before := len(s.problems)
	taken := func(id string) bool { return s.reserved[id] }
	kids := make([]*simLeaf, len(op.Children))
	// first child of each derived id: two children of one title (or of
	// titles giving one id, "C part" and "C Part") would be two notes
	// nobody can tell apart, told apart only by the -2 kk added.
	type firstChild struct {
		ptr, title string
	}
	derived := map[string]firstChild{}
	for c, ch := range op.Children {
		ptr := leafRef(i, "children", c)
		title, summary := strings.TrimSpace(ch.Title), strings.TrimSpace(ch.Summary)
		switch {
		case title == "":
			s.fail(ptr+"/title", "is required")
			continue
		case strings.ContainsAny(ch.Title, "\r\n"):
			s.fail(ptr+"/title", "a title is one line")
			continue
		case strings.ContainsAny(ch.Summary, "\r\n"):
			s.fail(ptr+"/summary", "a summary is one line")
			continue
		case len(ch.Body) > node.MaxSize || !utf8.ValidString(ch.Body):
			s.fail(ptr+"/body", "must be valid UTF-8 of at most %d bytes", node.MaxSize)
			continue
		case node.LineProblem(ch.Title) != "":
			s.fail(ptr+"/title", "%s", node.LineProblem(ch.Title))
			continue
		case node.LineProblem(ch.Summary) != "":
			s.fail(ptr+"/summary", "%s", node.LineProblem(ch.Summary))
			continue
		case node.TextProblem(ch.Body) != "":
			s.fail(ptr+"/body", "%s", node.TextProblem(ch.Body))
			continue
		case node.BodyFrontMatter(ch.Body) != "":
			s.fail(ptr+"/body", "%s", node.BodyFrontMatter(ch.Body))
			continue
		}
		for t, tag := range ch.Tags {
			if strings.TrimSpace(tag) == "" || strings.ContainsAny(tag, "\r\n") {
				s.fail(fmt.Sprintf("%s/tags/%d", ptr, t), "a tag is non-empty and on one line")
			}
		}
		id, err := node.DeriveID(old.typ, title)
		if err != nil {
			s.fail(ptr+"/title", "%v", err)
			continue
		}
		if msg := node.LongID(id); msg != "" {
			s.fail(ptr+"/title", "%s: give a shorter title", msg)
			continue
		}
		if first, dup := derived[id]; dup {
			s.fail(ptr+"/title", "%q names the same note as %s (%q, id %s); give each child its own title", title, first.ptr, first.title, id)
			continue
		}
		derived[id] = firstChild{ptr: ptr, title: title}
		if id, err = node.UniqueID(taken, id); err != nil {
			s.fail(ptr+"/title", "%v", err)
			continue
		}
		s.reserved[id] = true
		n := &node.Node{
			Format: node.SchemaVersion, Type: old.typ, Title: title, Description: summary,
			Tags: node.List(ch.Tags), ID: id, DerivedFrom: []string{old.id}, RelatesTo: node.Dedupe(node.List(ch.RelatesTo)),
			DependsOn: []string{}, Confidence: old.conf, Body: []byte(ch.Body), Path: store.JoinRel(folder, id+".md"),
		}
		if err := n.Validate(); err != nil {
			s.fail(ptr, "%v", err)
			continue
		}
		kids[c] = &simLeaf{id: id, typ: old.typ, conf: old.conf, edges: slices.Clone(n.RelatesTo), path: n.Path, child: n}
	}
	if len(s.problems) > before {
		return
	}
	from := old.path
	s.remove(old)
	s.retired = append(s.retired, old)
	ids := make([]string, len(kids))
	for c, kid := range kids {
		if err := s.free(kid.path); err != nil {
			s.fail(leafRef(i, "children", c, "title"), "%v", err)
			continue
		}
		s.insert(kid)
		s.minted = append(s.minted, kid)
		ids[c] = kid.id
	}
	s.redirects[old.id] = ids
	live := func(id string) bool { _, ok := s.byID[id]; return ok }
	for c, kid := range kids {
		for r, to := range kid.child.RelatesTo {
			ptr := leafRef(i, "children", c, "relates_to", r)
			switch {
			case to == old.id:
				s.fail(ptr, "a child cannot relate to the leaf being split; edges to %s reach the children through the redirect", old.id)
			case len(store.ResolveRedirect(s.redirects, to, live)) == 0:
				s.fail(ptr, "no leaf has the id %q", to)
			}
		}
	}
	s.stamp(leafRef(i, "summary"), folder, op.Summary)
	s.moves = append(s.moves, RebalanceMove{Operation: contracts.OpSplitLeaf, From: from, To: folder, NewIDs: ids, RedirectFrom: old.id})
}

func folderName(d string) string {
	if d == "" {
		return "the nodes/ root"
	}
	return d
}

// moveChange is one file a plan writes or removes.
type moveChange struct {
	rel    string // relative to nodes/ for a leaf, to the repository root otherwise
	abs    string
	data   []byte // nil: remove the file
	remove string // after writing, remove this file (relative to nodes/): a move's source
	leaf   *simLeaf
	// whole: a move whose leaf keeps its bytes (none of its links
	// changed): the file is moved as it is, as kenkeep moves leaves.
	whole bool
}

// ApplyRebalance applies a rebalance plan in one store transaction: every
// operation is checked against the tree as the earlier operations leave it,
// and any problem rejects the whole plan before a file is touched. Leaves
// move as whole files (git sees renames); split-leaf writes new leaves,
// removes the old one and records the redirect in nodes/.redirects.json;
// folder summaries go to FOLDER_SUMMARIES.md. Then the generated Related
// sections of the moved and new leaves, and of every leaf linking to a
// moved or retired id, are brought up to date (a leaf whose bytes would
// not change is not rewritten), and the index files are regenerated. The
// transaction makes all of it happen, or none.
//
// Operations whose effect the tree already shows are skipped; a plan that
// is wholly applied already is reported as Noop.
func ApplyRebalance(ctx context.Context, k *store.KB, plan contracts.RebalancePlan, cmd string) (*RebalanceResult, error) {
	if _, err := k.LoadConfig(); err != nil {
		return nil, err
	}
	var res *RebalanceResult
	done, err := txn.Update(ctx, k, txn.Meta{Source: "cli", Command: cmd}, func(tx *txn.Tx) error {
		var err error
		res, err = applyRebalance(tx, plan)
		return err
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		res.IndexChanged, res.IndexRemoved = done.Index.Changed, done.Index.Removed
	}
	return res, nil
}

// RebalanceInTx applies plan inside the caller's transaction tx, as
// ApplyRebalance does in its own: kk serve's organizer moves notes in the
// transaction (and the commit) of the job that posts a note.
func RebalanceInTx(tx *txn.Tx, plan contracts.RebalancePlan) (*RebalanceResult, error) {
	return applyRebalance(tx, plan)
}

func applyRebalance(tx *txn.Tx, plan contracts.RebalancePlan) (*RebalanceResult, error) {
	k := tx.KB()
	t, err := tx.Tree()
	if err != nil {
		return nil, err
	}
	if err := store.RequireV3(t); err != nil {
		return nil, err
	}
	redirects, err := tx.Redirects()
	if err != nil {
		return nil, err
	}
	summaries, err := store.ReadSummaries(k.SummariesPath())
	if err != nil {
		return nil, err
	}
	s := newRBSim(k, t, redirects, summaries)
	for i, op := range plan.Operations {
		s.apply(i, op)
	}
	if len(s.problems) > 0 {
		return nil, &MovePlanError{Plan: "rebalance plan", Problems: s.problems}
	}
	s.progress = progress.Start(tx.Context(), "rebalance: rendering leaves", 0)
	changes, relinked, err := s.fileChanges()
	s.progress.Done()
	if err != nil {
		return nil, err
	}
	res := &RebalanceResult{Moves: s.moves, Skipped: s.skipped, Relinked: relinked, Summaries: []string{}, IndexChanged: []string{}, IndexRemoved: []string{}}
	if res.Moves == nil {
		res.Moves = []RebalanceMove{}
	}
	if res.Skipped == nil {
		res.Skipped = []SkippedOperation{}
	}
	redirectsChanged := !redirectsEqual(redirects, s.redirects)
	for f, v := range s.summaries {
		if summaries[f] != v {
			res.Summaries = append(res.Summaries, f)
		}
	}
	store.SortLocale(res.Summaries)
	if len(changes) == 0 && !redirectsChanged && len(res.Summaries) == 0 {
		// Every operation is in place, or later operations undo what the
		// earlier ones would do again (a plan that moves a leaf twice).
		res.Noop, res.Moves = true, []RebalanceMove{}
		reasons := map[string]string{}
		for _, sk := range res.Skipped {
			reasons[sk.Pointer] = sk.Reason
		}
		res.Skipped = make([]SkippedOperation, len(plan.Operations))
		for i := range plan.Operations {
			ptr := leafRef(i)
			reason, ok := reasons[ptr]
			if !ok {
				reason = "the plan as a whole leaves the tree as it is"
			}
			res.Skipped[i] = SkippedOperation{Pointer: ptr, Reason: reason}
		}
		return res, nil
	}
	if redirectsChanged {
		tx.SetRedirects(s.redirects)
	}
	if len(res.Summaries) > 0 {
		data, err := store.RenderSummaries(s.summaries)
		if err != nil {
			return nil, err
		}
		tx.WriteFile("FOLDER_SUMMARIES.md", data)
	}
	for _, c := range changes {
		l := c.leaf
		switch {
		case l.child != nil: // a leaf the plan creates
			tx.Put(l.child)
		case c.data == nil: // retired by a split
			n, err := tx.LeafAt(l.src)
			if err != nil {
				return nil, err
			}
			if err := tx.Remove(n); err != nil {
				return nil, err
			}
		case c.whole: // moved whole
			if err := tx.MoveLeaf(l.src, l.path); err != nil {
				return nil, err
			}
		default: // moved with its links rendered again, or relinked in place
			n, err := tx.LeafAt(l.src)
			if err != nil {
				return nil, err
			}
			if body, typed := s.typedLinks(n.Body, l); typed {
				n.Body = body
			}
			n.Path = l.path
			tx.Put(n)
		}
	}
	return res, nil
}

// fileChanges turns the simulated tree into the file writes and removals
// that produce it, rendering every leaf whose generated sections may have
// changed. It returns the paths of leaves rewritten in place (relinked).
func (s *planSim) fileChanges() ([]moveChange, []string, error) {
	resolve := store.RedirectResolver(func(id string) (string, bool) {
		if l, ok := s.byID[id]; ok {
			return l.path, true
		}
		return "", false
	}, s.redirects)
	resolveBefore := store.RedirectResolver(func(id string) (string, bool) {
		p, ok := s.before[id]
		return p, ok
	}, s.redirectsBefore)
	// A leaf is rendered again when it is new, when it moved, or when one of
	// its edges now resolves to another path than before the plan (its
	// target moved, was retired, or is a retired id whose chain of
	// successors changed).
	relink := func(l *simLeaf) bool {
		for _, id := range l.edges {
			p, ok := resolve(id)
			q, was := resolveBefore(id)
			if p != q || ok != was {
				return true
			}
		}
		return false
	}
	// Links a person typed in a body are theirs, but a move kk makes
	// must not leave them dead: a link from a leaf that moves, and a link
	// to one, are pointed at where the leaf they name is once the plan is
	// applied (typedLinks). Only the leaves that move are read for the
	// first; every other leaf's file is read for the second, and only
	// when the plan moves a leaf.
	s.beforePaths = make(map[string]string, len(s.before))
	for id, q := range s.before {
		s.beforePaths[q] = id
	}
	var moves bool
	for _, l := range s.byID {
		if l.src != "" && l.src != l.path {
			moves = true
			break
		}
	}
	var pending []*simLeaf
	var scan []*simLeaf
	for _, l := range s.byID {
		switch {
		case l.src == "" || l.src != l.path || relink(l):
			pending = append(pending, l)
		case moves:
			scan = append(scan, l)
		}
	}
	if len(scan) > 0 {
		found := make([]bool, len(scan))
		errs := make([]error, len(scan))
		store.Parallel(len(scan), func(i int) {
			src, err := os.ReadFile(s.k.NodePath(scan[i].src))
			if err != nil {
				errs[i] = err
				return
			}
			if !bytes.Contains(src, []byte("](")) && !bytes.Contains(src, []byte("]:")) {
				return
			}
			n, err := node.Parse(scan[i].src, src)
			if err != nil {
				return // not a leaf kk reads as it is: the checks say why
			}
			_, found[i] = s.typedLinks(n.Body, scan[i])
		})
		if err := errors.Join(errs...); err != nil {
			return nil, nil, err
		}
		for i, l := range scan {
			if found[i] {
				pending = append(pending, l)
			}
		}
	}
	slices.SortFunc(pending, func(a, b *simLeaf) int { return store.LocaleCompare(a.path, b.path) })
	out := make([]moveChange, len(pending))
	errs := make([]error, len(pending))
	s.progress.SetTotal(len(pending))
	store.Parallel(len(pending), func(i int) {
		defer s.progress.Add(1)
		l := pending[i]
		n := l.child
		var orig []byte
		if n == nil {
			var err error
			orig, err = os.ReadFile(s.k.NodePath(l.src))
			if err != nil {
				errs[i] = err
				return
			}
			if n, err = node.Parse(l.src, orig); err != nil {
				errs[i] = err
				return
			}
			n.Path = l.path
			body, typed := s.typedLinks(n.Body, l)
			n.Body = body
			if l.src != l.path && !typed && node.BodyUpToDate(n, resolve) {
				// Nothing in the leaf changes: it moves whole, byte for
				// byte (rendering would add the optional keys it lacks).
				out[i] = moveChange{rel: l.path, abs: s.k.NodePath(l.path), data: orig, remove: l.src, leaf: l, whole: true}
				return
			}
		}
		data, err := n.Render(resolve)
		if err != nil {
			errs[i] = err
			return
		}
		if len(data) > node.MaxSize {
			errs[i] = &node.Error{Path: l.path, Msg: fmt.Sprintf("the leaf would be %d bytes; the limit is %d", len(data), node.MaxSize)}
			return
		}
		c := moveChange{rel: l.path, abs: s.k.NodePath(l.path), data: data, leaf: l}
		switch {
		case l.src != "" && l.src != l.path:
			c.remove = l.src
		case l.src != "" && string(orig) == string(data):
			c.data = nil // unchanged: no write
		}
		out[i] = c
	})
	if err := errors.Join(errs...); err != nil {
		return nil, nil, err
	}
	var changes []moveChange
	relinked := []string{}
	for i, c := range out {
		if c.data == nil {
			continue
		}
		if pending[i].src == pending[i].path {
			relinked = append(relinked, c.rel)
		}
		changes = append(changes, c)
	}
	for _, l := range s.retired {
		changes = append(changes, moveChange{rel: l.src, abs: s.k.NodePath(l.src), leaf: l})
	}
	return changes, relinked, nil
}

// typedLinks points the links a person typed in body, of the leaf l,
// that lead to a leaf at its path before the plan, at that leaf's path
// once the plan is applied, from l's path then (store.RetargetTypedLinks).
// A link to a leaf the plan retires, to a file that is not a leaf, or that
// was dead before is left as it is. It returns the body, and whether a
// link changed.
func (s *planSim) typedLinks(body []byte, l *simLeaf) ([]byte, bool) {
	body, changed := store.RetargetTypedLinks(body, l.src, l.path, s.wasAt)
	return body, len(changed) > 0
}

// wasAt returns where the leaf at path p before the plan is once it is
// applied; ok is false when no leaf was at p, or the plan retires it.
func (s *planSim) wasAt(p string) (string, bool) {
	id, ok := s.beforePaths[p]
	if !ok {
		return "", false
	}
	l, ok := s.byID[id]
	if !ok {
		return "", false
	}
	return l.path, true
}

func redirectsEqual(a, b store.Redirects) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		w, ok := b[k]
		if !ok || !slices.Equal(v, w) {
			return false
		}
	}
	return true
}
