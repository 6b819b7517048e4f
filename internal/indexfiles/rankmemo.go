package indexfiles

import (
	"slices"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// The "By topic" ranking (rankCohorts) scores every leaf in every tag
// cohort it belongs to from the whole tree. Between two generations of a
// long-running process a transaction changes a few leaves, and a leaf's
// score in tag t depends only on the leaves carrying t: when leaf x comes
// or goes, only the cohorts of x's tags change, and within them each
// member's score changes by x's similarity to it. rankState keeps what
// the scores are summed from, so that a generation updates those cohorts
// only.
//
// The kept values are exact integers: for leaf i and its tag t, X[m][k]
// counts the leaves of m tags that share exactly k tags with i, t among
// them (i itself included). The score is summed from X in the same order
// and with the same operations as centralityScores sums it, so it is the
// same float64, bit for bit, and the ranking equals a full one
// (TestIncrementalRankMatchesFull). Leaves of more than maxSubsetTags tags
// are compared pair by pair, as centralityScores does.

// xLen is the length of the X counts of a leaf of a tags.
func xLen(a int) int { return (maxSubsetTags + 1) * (a + 1) }

// xIndex is where X[m][k] of a leaf of a tags is kept.
func xIndex(a, m, k int) int { return m*(a+1) + k }

// maxRankEdits is how many leaves may come and go between two
// generations for the ranking to be updated instead of computed again.
const maxRankEdits = 64

type rankState struct {
	tagID    map[string]int
	tagNames []string
	leaves   map[string]*rankLeaf // by path
	cohorts  [][]*rankLeaf        // by tag id, in no particular order
	top      [][]*rankLeaf        // by tag id: the first byTopicMax of the cohort
	stamp    int                  // the last mark handed out
}

// rankLeaf is one version of a leaf in the ranking.
type rankLeaf struct {
	n     *node.Node // as the latest generation has it
	hash  string     // of the version it is
	idx   int        // its index in the latest generation's leaves
	set   []int      // tag ids, sorted, without repeats
	x     [][]int32  // per position of set (small leaves only): X
	score []float64  // per position of set
	mark  int        // the generation that last saw it
	seen  int        // the last count that visited it
}

func (r *rankLeaf) small() bool { return len(r.set) <= maxSubsetTags }

// rank is rankCohorts(leaves, inDegree), updated from the
// previous generation's ranking when few leaves changed. hash gives a
// leaf's content hash, byID a leaf by id. A nil memo ranks from scratch,
// and so does the first generation of a memo, through the rankings the
// branch index records (rr, rankcache.go; nil: none): the kept counts pay
// off only from the second (a command-line run generates once).
func (m *genMemo) rank(rr *rankRecord, leaves []*node.Node, hash func(*node.Node) string, byID func(string) (*node.Node, bool), inDegree map[string]int) map[string][]*node.Node {
	if m == nil || m.ranks == nil && !m.ranked {
		if m != nil {
			m.ranked = true
		}
		if rr != nil {
			return rankCached(rr, leaves, hash, byID, inDegree)
		}
		return rankCohorts(leaves, inDegree)
	}
	cmp := rankOrder(inDegree)
	st := m.ranks
	if st == nil || !st.update(leaves, hash, byID, cmp) {
		st = buildRank(leaves, hash, cmp)
	}
	m.ranks = st
	if st == nil {
		return rankCohorts(leaves, inDegree)
	}
	out := make(map[string][]*node.Node, len(st.tagNames))
	for t, top := range st.top {
		if len(st.cohorts[t]) == 0 {
			continue
		}
		ns := make([]*node.Node, len(top))
		for i, r := range top {
			ns[i] = r.n
		}
		out[st.tagNames[t]] = ns
	}
	return out
}

// rankOrder is rankCohorts' order of a cohort's members in tag t: score,
// then in-degree, then title, then path.
func rankOrder(inDegree map[string]int) func(t int, x, y *rankLeaf) int {
	return func(t int, x, y *rankLeaf) int {
		sx, sy := x.scoreIn(t), y.scoreIn(t)
		if sx != sy {
			if sy > sx {
				return 1
			}
			return -1
		}
		a, b := x.n, y.n
		if d := inDegree[b.ID] - inDegree[a.ID]; d != 0 {
			return d
		}
		if r := byTitle(a, b); r != 0 {
			return r
		}
		return store.CmpString(a.Path, b.Path)
	}
}

func (r *rankLeaf) scoreIn(t int) float64 {
	p, _ := slices.BinarySearch(r.set, t)
	return r.score[p]
}

// buildRank ranks every cohort from scratch and keeps the counts; nil
// when a leaf has no hash.
func buildRank(leaves []*node.Node, hash func(*node.Node) string, cmp func(int, *rankLeaf, *rankLeaf) int) *rankState {
	st := &rankState{tagID: map[string]int{}, leaves: make(map[string]*rankLeaf, len(leaves))}
	sets := make([][]int, len(leaves))
	rls := make([]*rankLeaf, len(leaves))
	for i, n := range leaves {
		h := hash(n)
		if h == "" {
			return nil
		}
		r := &rankLeaf{n: n, hash: h, idx: i, set: st.setOf(n)}
		sets[i], rls[i] = r.set, r
		st.leaves[n.Path] = r
	}
	xs := make([][][]int32, len(leaves))
	scores := centralityScoresX(sets, len(st.tagNames), xs)
	for i, r := range rls {
		r.score, r.x = scores[i], xs[i]
		for _, t := range r.set {
			st.cohorts[t] = append(st.cohorts[t], r)
		}
	}
	for t := range st.cohorts {
		st.reTop(t, cmp)
	}
	return st
}

// setOf returns n's tag ids, giving new tags the next ids.
func (st *rankState) setOf(n *node.Node) []int {
	set := make([]int, 0, len(n.Tags))
	for _, name := range n.Tags {
		id, ok := st.tagID[name]
		if !ok {
			id = len(st.tagNames)
			st.tagID[name] = id
			st.tagNames = append(st.tagNames, name)
			st.cohorts = append(st.cohorts, nil)
			st.top = append(st.top, nil)
		}
		if !slices.Contains(set, id) {
			set = append(set, id)
		}
	}
	slices.Sort(set)
	return set
}

// reTop finds the first byTopicMax members of cohort t.
func (st *rankState) reTop(t int, cmp func(int, *rankLeaf, *rankLeaf) int) {
	top := st.top[t][:0]
	for _, r := range st.cohorts[t] {
		at := len(top)
		for at > 0 && cmp(t, r, top[at-1]) < 0 {
			at--
		}
		if at < byTopicMax {
			top = slices.Insert(top, at, r)
			if len(top) > byTopicMax {
				top = top[:byTopicMax]
			}
		}
	}
	st.top[t] = top
}

// update brings the ranking from the previous generation's leaves to
// leaves; false when too many leaves changed (or one has no hash).
func (st *rankState) update(leaves []*node.Node, hash func(*node.Node) string, byID func(string) (*node.Node, bool), cmp func(int, *rankLeaf, *rankLeaf) int) bool {
	st.stamp++
	live := st.stamp
	var added []int
	kept := 0
	for i, n := range leaves {
		h := hash(n)
		if h == "" {
			return false
		}
		if r := st.leaves[n.Path]; r != nil && r.hash == h {
			r.n, r.idx, r.mark = n, i, live
			kept++
		} else {
			added = append(added, i)
		}
	}
	var removed []*rankLeaf
	if kept != len(st.leaves) { // else every kept leaf is still there
		for _, r := range st.leaves {
			if r.mark != live {
				removed = append(removed, r)
			}
		}
	}
	if len(added)+len(removed) > maxRankEdits {
		return false
	}
	scored := map[int]bool{}  // cohorts whose scores change
	reorder := map[int]bool{} // cohorts whose order may change
	var linked []string       // ids whose in-degree may change
	for _, r := range removed {
		delete(st.leaves, r.n.Path)
		for _, t := range r.set {
			st.cohorts[t] = slices.DeleteFunc(st.cohorts[t], func(o *rankLeaf) bool { return o == r })
			scored[t] = true
		}
		st.count(r, -1)
		linked = append(linked, r.n.RelatesTo...)
	}
	for _, i := range added {
		n := leaves[i]
		r := &rankLeaf{n: n, hash: hash(n), idx: i, set: st.setOf(n), mark: live}
		r.score = make([]float64, len(r.set))
		if r.small() {
			a := len(r.set)
			r.x = make([][]int32, a)
			for p := range r.x {
				r.x[p] = make([]int32, xLen(a))
				r.x[p][xIndex(a, a, a)] = 1 // itself
			}
		}
		st.count(r, +1)
		for _, t := range r.set {
			st.cohorts[t] = append(st.cohorts[t], r)
			scored[t] = true
		}
		st.leaves[n.Path] = r
		linked = append(linked, n.RelatesTo...)
	}
	for t := range scored {
		st.rescore(t)
		reorder[t] = true
	}
	for _, id := range linked {
		if n, ok := byID(id); ok {
			if r := st.leaves[n.Path]; r != nil && r.hash == hash(n) {
				for _, t := range r.set {
					reorder[t] = true
				}
			}
		}
	}
	for t := range reorder {
		st.reTop(t, cmp)
	}
	return true
}

// count adds (sign +1) or takes away (-1) small leaf x's share of the X
// counts of every other small leaf it shares a tag with; when adding, it
// also counts them in x's own X. x is in no cohort while counted.
func (st *rankState) count(x *rankLeaf, sign int32) {
	if !x.small() {
		return
	}
	st.stamp++
	seen := st.stamp
	mx := len(x.set)
	for _, t := range x.set {
		for _, r := range st.cohorts[t] {
			if r.seen == seen || !r.small() {
				continue
			}
			r.seen = seen
			a := len(r.set)
			k := shared(r.set, x.set)
			for p, u := range r.set {
				if slices.Contains(x.set, u) {
					r.x[p][xIndex(a, mx, k)] += sign
				}
			}
			if sign > 0 {
				for q, u := range x.set {
					if slices.Contains(r.set, u) {
						x.x[q][xIndex(mx, a, k)]++
					}
				}
			}
		}
	}
}

// shared is |a ∩ b| for sorted sets.
func shared(a, b []int) int {
	n, i, j := 0, 0, 0
	for i < len(a) && j < len(b) {
		switch {
		case a[i] == b[j]:
			n++
			i++
			j++
		case a[i] < b[j]:
			i++
		default:
			j++
		}
	}
	return n
}

// rescore computes every member's score in tag t again, from its X counts
// and the cohort's large leaves, as centralityScores does.
func (st *rankState) rescore(t int) {
	members := st.cohorts[t]
	var bigs, all []*rankLeaf
	for _, r := range members {
		if !r.small() {
			bigs = append(bigs, r)
		}
	}
	byIdx := func(x, y *rankLeaf) int { return x.idx - y.idx }
	if len(bigs) > 0 {
		slices.SortFunc(bigs, byIdx)
		all = slices.SortedFunc(slices.Values(members), byIdx)
	}
	for _, r := range members {
		p, _ := slices.BinarySearch(r.set, t)
		sum := 0.0
		if r.small() {
			a, x := len(r.set), r.x[p]
			for m := 1; m <= maxSubsetTags; m++ {
				for k := 1; k <= min(a, m); k++ {
					if c := x[xIndex(a, m, k)]; c != 0 {
						sum += float64(c) * float64(k) / float64(a+m-k)
					}
				}
			}
			sum-- // the leaf itself
			for _, b := range bigs {
				sum += jaccard(r.set, b.set)
			}
		} else {
			for _, b := range all {
				if b != r {
					sum += jaccard(r.set, b.set)
				}
			}
		}
		r.score[p] = roundScore(sum)
	}
}
