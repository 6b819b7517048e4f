package trace

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/kk-project/kk/internal/graph"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// EntityView is an entity as kb_query returns it: its fields, its outgoing
// edges and the edges pointing at it.
type EntityView struct {
	*index.Entity
	Edges    []EdgeView `json:"edges"`
	Incoming []EdgeView `json:"incoming"`
}

// EdgeView is one edge as the traceability operations return it.
type EdgeView struct {
	Type      string `json:"type"`
	From      string `json:"from"`
	To        string `json:"to"`
	CreatedAt string `json:"created_at,omitempty"`
	CreatedBy string `json:"created_by,omitempty"`
	Source    string `json:"source,omitempty"`
	// Confidence is the edge's confidence, 0 to 1, when it has one.
	Confidence *float64 `json:"confidence,omitempty"`
}

// QueryResult is the data of kb_query.
type QueryResult struct {
	Entities []EntityView `json:"entities"`
	Total    int          `json:"total"`
	Limit    int          `json:"limit"`
	Offset   int          `json:"offset"`
}

// snapshot is every entity and edge of a branch's index.
type snapshot struct {
	gen      string // the index generation it was read at
	entities []*index.Entity
	byID     map[string]*index.Entity // by the id as the entity carries it
	byKey    map[string]*index.Entity // by store.IDKey
	out, in  map[string][]index.Edge
	edges    []index.Edge

	linksMu sync.Mutex
	links   *snapshotLinks // see scanLinks
}

// snapshotLinks are the dead links a snapshot's leaves hold, found with
// the redirect ledger (nodes/.redirects.json) as ledger.
type snapshotLinks struct {
	ledger string
	dead   []store.DeadLink
	idAt   map[string]string
}

// canonical returns the id an entity carries for id (compared without
// regard to case), or id itself when no entity has it.
func (s *snapshot) canonical(id string) string {
	if e, ok := s.byKey[store.IDKey(id)]; ok {
		return e.ID
	}
	return id
}

// loadSnapshot syncs the current branch's index and reads it whole.
func loadSnapshot(ctx context.Context, k *store.KB) (*snapshot, error) {
	db, err := graph.BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	st, err := graph.SyncForRead(ctx, k, db)
	if err != nil {
		return nil, err
	}
	snapshots := snapshotsOf(k)
	snapshots.Lock()
	cached := snapshots.byDB[db.Path]
	snapshots.Unlock()
	if cached != nil && st.Gen != "" && cached.gen == st.Gen {
		return cached, nil
	}
	ents, err := db.Entities(ctx)
	if err != nil {
		return nil, err
	}
	edges, err := db.Edges(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{byID: make(map[string]*index.Entity, len(ents)), byKey: make(map[string]*index.Entity, len(ents)),
		out: map[string][]index.Edge{}, in: map[string][]index.Edge{}, edges: edges}
	for _, e := range ents {
		if _, dup := s.byKey[store.IDKey(e.ID)]; dup {
			continue // Entities lists a leaf before an extracted entity of the same id
		}
		s.byID[e.ID], s.byKey[store.IDKey(e.ID)] = e, e
		s.entities = append(s.entities, e)
	}
	// Edge ends name an entity without regard to case: they are read as
	// the id the entity carries, so that every rule compares ids as they
	// are.
	for i := range edges {
		edges[i].From, edges[i].To = s.canonical(edges[i].From), s.canonical(edges[i].To)
	}
	for _, e := range edges {
		s.out[e.From] = append(s.out[e.From], e)
		s.in[e.To] = append(s.in[e.To], e)
	}
	if s.gen = st.Gen; s.gen != "" {
		snapshots.Lock()
		snapshots.byDB[db.Path] = s
		snapshots.Unlock()
	}
	return s, nil
}

// snapshots keeps, per index, the last snapshot read, for as long as the
// index stays at its generation (a long-running process answers many
// queries between two changes). A snapshot is never changed once read.
// The knowledge base value owns them (store.Memo).
type snapshots struct {
	sync.Mutex
	byDB map[string]*snapshot
}

type snapshotsKey struct{}

func snapshotsOf(k *store.KB) *snapshots {
	return store.Memo(k, snapshotsKey{}, func() *snapshots { return &snapshots{byDB: map[string]*snapshot{}} })
}

func edgeViews(list []index.Edge) []EdgeView {
	out := make([]EdgeView, len(list))
	for i, e := range list {
		out[i] = EdgeView{Type: e.Type, From: e.From, To: e.To, CreatedAt: e.CreatedAt, CreatedBy: e.CreatedBy, Source: e.Source}
		if c, err := strconv.ParseFloat(e.Confidence, 64); err == nil {
			out[i].Confidence = &c
		}
	}
	return out
}

func KBQuery(ctx context.Context, k *store.KB, p KBQueryParams) (*QueryResult, error) {
	if err := graph.ValidateProjectID(k, p.ProjectID); err != nil {
		return nil, err
	}
	limit, offset, verr := graph.Page(p.Limit, p.Offset)
	if verr != nil {
		return nil, verr
	}
	if p.Status != "" && !slices.Contains([]string{"draft", "stable", "deprecated"}, p.Status) {
		return nil, op.Invalid("status", "%q is not a status; use draft, stable or deprecated", p.Status)
	}
	rel := p.Relationship
	if rel != nil {
		if strings.TrimSpace(rel.Type) == "" {
			return nil, op.Invalid("relationship.type", "is required")
		}
		switch rel.Direction {
		case "":
			rel.Direction = "out"
		case "out", "in":
		default:
			return nil, op.Invalid("relationship.direction", "%q is not a direction; use out or in", rel.Direction)
		}
		if rel.Other != "" {
			other, err := checkRef("relationship.other", rel.Other)
			if err != nil {
				return nil, err
			}
			rel.Other = other
		}
	}
	var id string
	if p.ID != "" {
		var err *op.Error
		if id, err = checkRef("id", p.ID); err != nil {
			return nil, err
		}
	}
	s, err := loadSnapshot(ctx, k)
	if err != nil {
		return nil, err
	}
	if rel != nil && !s.knowsEdgeType(rel.Type) {
		// A misspelt type would match nothing, and with missing:true
		// every entity: refused, unless some edge of the tree has it.
		return nil, op.Invalid("relationship.type", "%s is not an edge type; use one of %s or %s (kk_related)", op.Quote(rel.Type),
			strings.Join(graph.EdgeTypes(), ", "), index.EdgeRelated)
	}
	if p.Type != "" && !s.knowsType(p.Type) {
		// As a misspelt edge type: "reqs without tests" would report
		// none, as if every requirement had its test.
		return nil, op.Invalid("type", "%s is not an entity type; use one of %s", op.Quote(p.Type), strings.Join(graph.EntityTypes, ", "))
	}
	if id != "" {
		id = s.canonical(id)
	}
	if rel != nil && rel.Other != "" {
		rel.Other = s.canonical(rel.Other)
	}
	var hits []*index.Entity
	for _, e := range s.entities {
		if (p.Type != "" && e.Type != p.Type) || (id != "" && e.ID != id) || (p.Status != "" && e.Status != p.Status) {
			continue
		}
		if !hasTags(e.Tags, p.Tags) {
			continue
		}
		if rel != nil && !s.matches(e.ID, rel) {
			continue
		}
		hits = append(hits, e)
	}
	res := &QueryResult{Entities: []EntityView{}, Total: len(hits), Limit: limit, Offset: offset}
	for _, e := range graph.Window(hits, limit, offset) {
		res.Entities = append(res.Entities, EntityView{Entity: e, Edges: edgeViews(s.out[e.ID]), Incoming: edgeViews(s.in[e.ID])})
	}
	return res, nil
}

func hasTags(have, want []string) bool {
	for _, t := range want {
		if !slices.Contains(have, t) {
			return false
		}
	}
	return true
}

// knowsEdgeType reports whether typ is an edge type of the edge table, a
// generic relationship (relates_to, depends_on, related), or the type of
// some edge of the snapshot (a hand-written kk_edges entry may carry one
// the table does not know).
func (s *snapshot) knowsEdgeType(typ string) bool {
	if _, ok := graph.EdgeTable[typ]; ok || typ == index.EdgeRelatesTo || typ == index.EdgeDependsOn || typ == index.EdgeRelated {
		return true
	}
	for _, e := range s.edges {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// knowsType reports whether typ is an entity type: kk's own, or one some
// entity of the tree has (a note's type of a person's choosing).
func (s *snapshot) knowsType(typ string) bool {
	if slices.Contains(graph.EntityTypes, typ) {
		return true
	}
	for _, e := range s.entities {
		if e.Type == typ {
			return true
		}
	}
	return false
}

// matches reports whether entity id fits the relationship pattern.
func (s *snapshot) matches(id string, rel *KBRelationship) bool {
	list, far := s.out[id], func(e index.Edge) string { return e.To }
	if rel.Direction == "in" {
		list, far = s.in[id], func(e index.Edge) string { return e.From }
	}
	found := slices.ContainsFunc(list, func(e index.Edge) bool {
		return e.Type == rel.Type && (rel.Other == "" || far(e) == rel.Other)
	})
	return found != rel.Missing
}

// Check rules of kb_check.
const (
	RuleMustCoverage      = "must-coverage"
	RuleDependsOnAcyclic  = "depends-on-acyclic"
	RuleSymbolReqExists   = "symbol-req-exists"
	RuleNoDanglingEdges   = "no-dangling-edges"
	RuleEdgeEndpointTypes = "edge-endpoint-types"
	RuleLeavesReadable    = "leaves-readable"
	RuleNoDeadLinks       = "no-dead-links"
	RuleRetiredIDs        = "retired-ids"
)

// CheckRules lists kb_check's rules with what each one asks.
var CheckRules = []struct{ Name, Description string }{
	{RuleMustCoverage, "every req with priority must has at least one specified_by scenario and one verified_by test"},
	{RuleDependsOnAcyclic, "depends_on edges form no cycle (config traceability.allowDependsOnCycles turns this off)"},
	{RuleSymbolReqExists, "every implements edge of a symbol points at a req that exists"},
	{RuleNoDanglingEdges, "every other edge points at an entity that exists"},
	{RuleEdgeEndpointTypes, "every typed edge connects the entity types the edge table allows"},
	{RuleLeavesReadable, "every leaf under nodes/ can be read (kk skips a leaf it cannot read; here it is a violation)"},
	{RuleNoDeadLinks, "every link from a leaf to a path under nodes/ leads to a file (a note moved by hand leaves links at its old path; kk doctor --fix relinks them)"},
	{RuleRetiredIDs, "no leaf holds an id nodes/.redirects.json retired (a note deleted or renamed, then restored by hand under its old id)"},
}

// Violation is one broken rule.
type Violation struct {
	Rule    string   `json:"rule"`
	IDs     []string `json:"ids"`
	Message string   `json:"message"`
}

// CheckResult is the data of kb_check.
type CheckResult struct {
	Rules      []string    `json:"rules"`
	Violations []Violation `json:"violations"`
}

// KBCheck runs the consistency rules p names (every rule when none) over
// the knowledge base's entities and edges (kb_check, kk check). A sparse
// checkout that leaves leaves out is refused (index.CheckedOut).
func KBCheck(ctx context.Context, k *store.KB, p KBCheckParams) (*CheckResult, error) {
	if err := graph.ValidateProjectID(k, p.ProjectID); err != nil {
		return nil, err
	}
	var names []string
	for _, r := range CheckRules {
		names = append(names, r.Name)
	}
	rules := names
	if len(p.Rules) > 0 {
		rules = nil
		for i, r := range p.Rules {
			if !slices.Contains(names, r) {
				return nil, op.Invalid(fmt.Sprintf("rules[%d]", i), "%q is not a rule; use %s", r, strings.Join(names, ", "))
			}
			if !slices.Contains(rules, r) {
				rules = append(rules, r)
			}
		}
	}
	// Every rule judged from part of the leaves would be wrong (an edge
	// to a note not checked out is not dangling): a sparse checkout that
	// leaves some out is refused, naming what to run, as kk check and kk
	// lint refuse it.
	if err := index.CheckedOut(ctx, k); err != nil {
		return nil, err
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	s, err := loadSnapshot(ctx, k)
	if err != nil {
		return nil, err
	}
	res := &CheckResult{Rules: rules, Violations: []Violation{}}
	// The leaves a tree read skips, read once for the rules that need
	// them.
	var problems []error
	problemsRead := false
	skipped := func() ([]error, error) {
		if !problemsRead {
			var err error
			if problems, err = skippedLeaves(ctx, k); err != nil {
				return nil, err
			}
			problemsRead = true
		}
		return problems, nil
	}
	for _, r := range rules {
		switch r {
		case RuleMustCoverage:
			res.Violations = append(res.Violations, s.mustCoverage()...)
		case RuleDependsOnAcyclic:
			if cfg.Traceability == nil || !cfg.Traceability.AllowDependsOnCycles {
				res.Violations = append(res.Violations, s.dependsOnCycles()...)
			}
		case RuleSymbolReqExists:
			res.Violations = append(res.Violations, s.symbolReqs()...)
		case RuleNoDanglingEdges:
			ps, err := skipped()
			if err != nil {
				return nil, err
			}
			r, err := k.ReadRedirects()
			if err != nil {
				return nil, err
			}
			res.Violations = append(res.Violations, s.dangling(ctx, k, claimedIDs(ps), r)...)
		case RuleEdgeEndpointTypes:
			res.Violations = append(res.Violations, s.endpointTypes()...)
		case RuleLeavesReadable:
			ps, err := skipped()
			if err != nil {
				return nil, err
			}
			res.Violations = append(res.Violations, unreadableLeaves(ps)...)
		case RuleNoDeadLinks:
			v, err := s.deadLinks(ctx, k)
			if err != nil {
				return nil, err
			}
			res.Violations = append(res.Violations, v...)
		case RuleRetiredIDs:
			r, err := k.ReadRedirects()
			if err != nil {
				return nil, err
			}
			res.Violations = append(res.Violations, s.retiredHeld(k, r)...)
		}
	}
	return res, nil
}

// deadLinks lists the links from a leaf to a leaf path where there is no
// file, each naming the linking file and line, and where the leaf the
// link named is now.
func (s *snapshot) deadLinks(ctx context.Context, k *store.KB) ([]Violation, error) {
	dead, idAt, err := s.scanLinks(ctx, k)
	if err != nil {
		return nil, err
	}
	out := []Violation{}
	for _, d := range dead {
		v := Violation{Rule: RuleNoDeadLinks, IDs: []string{}}
		if id, ok := idAt[d.From]; ok {
			v.IDs = []string{id}
		}
		file := path.Join(store.DirName, "nodes", d.From)
		nodes := func(p string) string { return path.Join(store.DirName, "nodes", p) }
		v.Message = fmt.Sprintf("%s:%d links to %s, which does not exist", file, d.Line, nodes(d.Missing))
		switch {
		case d.Relinkable():
			v.Message += fmt.Sprintf("; %s is now at %s (kk doctor --fix relinks it)", d.NowIDs[0], nodes(d.Now[0]))
		case len(d.Now) > 1:
			var to []string
			for _, p := range d.Now {
				to = append(to, nodes(p))
			}
			v.Message += fmt.Sprintf("; %s was split into %s: point the link at the one it means", d.ID, strings.Join(to, ", "))
		default:
			v.Message += fmt.Sprintf("; no leaf has the id %s: point the link elsewhere or remove it", d.ID)
		}
		out = append(out, v)
	}
	return out, nil
}

// scanLinks returns the dead links of the snapshot's leaves and the id of
// each leaf by path. They are found once per snapshot (one index
// generation: the leaves' bodies) and redirect ledger, since reading
// every body again is most of a kb_check at 10k leaves (100 ms against
// 5; docs/benchmarks.md).
func (s *snapshot) scanLinks(ctx context.Context, k *store.KB) ([]store.DeadLink, map[string]string, error) {
	ledger, err := os.ReadFile(k.RedirectsPath())
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, err
	}
	s.linksMu.Lock()
	defer s.linksMu.Unlock()
	if s.links != nil && s.links.ledger == string(ledger) {
		return s.links.dead, s.links.idAt, nil
	}
	db, err := graph.BranchIndex(ctx, k)
	if err != nil {
		return nil, nil, err
	}
	r, err := k.ReadRedirects()
	if err != nil {
		return nil, nil, err
	}
	var leaves []store.LeafPlace
	idAt := map[string]string{}
	for _, e := range s.entities {
		if e.Path != "" && e.Origin == "" {
			leaves = append(leaves, store.LeafPlace{Path: e.Path, ID: e.ID})
			idAt[e.Path] = e.ID
		}
	}
	slices.SortFunc(leaves, func(a, b store.LeafPlace) int { return store.LocaleCompare(a.Path, b.Path) })
	dead, err := k.DeadLinksOf(leaves, r, func(fn func(path, body string)) error { return db.EachLinkBody(ctx, fn) })
	if err != nil {
		return nil, nil, err
	}
	s.links = &snapshotLinks{ledger: string(ledger), dead: dead, idAt: idAt}
	return dead, idAt, nil
}

// skippedLeaves returns the problems of the leaves a tree read skips.
func skippedLeaves(ctx context.Context, k *store.KB) ([]error, error) {
	db, err := graph.BranchIndex(ctx, k)
	if err != nil {
		return nil, err
	}
	if _, err := graph.SyncForRead(ctx, k, db); err != nil {
		return nil, err
	}
	return db.Problems(ctx, k.NodesDir())
}

// claimedIDs returns the ids (by store.IDKey) the skipped leaves of
// problems name: the id their front matter gives, else their file name,
// as kk names such a leaf when it is read by id (graph.UnreadableLeaf).
func claimedIDs(problems []error) map[string]bool {
	ids := map[string]bool{}
	for _, p := range problems {
		ne, ok := errors.AsType[*node.Error](p)
		if !ok {
			continue
		}
		if ne.ID != "" {
			ids[store.IDKey(ne.ID)] = true
		}
		ids[store.IDKey(strings.TrimSuffix(path.Base(ne.Path), ".md"))] = true
	}
	return ids
}

// unreadableLeaves lists the leaves a tree read skips, each with every
// problem in it.
func unreadableLeaves(problems []error) []Violation {
	out := []Violation{}
	for _, p := range problems {
		v := Violation{Rule: RuleLeavesReadable, IDs: []string{}, Message: p.Error()}
		if ne, ok := errors.AsType[*node.Error](p); ok {
			if ne.ID != "" {
				v.IDs = []string{ne.ID}
			}
			v.Message = fmt.Sprintf("%s/nodes/%s cannot be read: %s", store.DirName, ne.Path, ne.Detail())
		}
		out = append(out, v)
	}
	return out
}

func (s *snapshot) mustCoverage() []Violation {
	var out []Violation
	for _, e := range s.entities {
		if e.Type != graph.TypeReq || !strings.EqualFold(e.Priority, "must") {
			continue
		}
		var missing []string
		if !s.hasEdgeTo(e.ID, "specified_by", graph.TypeScenario) {
			missing = append(missing, "scenario (specified_by)")
		}
		if !s.verified(e.ID) {
			missing = append(missing, "verifying test (verified_by)")
		}
		if len(missing) > 0 {
			out = append(out, Violation{Rule: RuleMustCoverage, IDs: []string{e.ID},
				Message: fmt.Sprintf("%s has priority must but no %s", e.ID, strings.Join(missing, " and no "))})
		}
	}
	return out
}

// hasEdgeTo reports whether entity id has an edge of type edge to an
// existing entity of type typ.
func (s *snapshot) hasEdgeTo(id, edge, typ string) bool {
	return slices.ContainsFunc(s.out[id], func(x index.Edge) bool {
		t, ok := s.byID[x.To]
		return x.Type == edge && ok && t.Type == typ
	})
}

// verified reports whether entity id has a verifying test: a verified_by
// edge to an existing test, as must-coverage asks of a must requirement.
func (s *snapshot) verified(id string) bool {
	return s.hasEdgeTo(id, "verified_by", graph.TypeTest)
}

// Unverified returns the ids of the requirements of the current branch's
// index, whatever their priority, that no test verifies: those without a
// verified_by edge to an existing test, the half of must-coverage that
// every requirement can be measured by. Ids are sorted as the index
// orders them.
func Unverified(ctx context.Context, k *store.KB) ([]string, error) {
	s, err := loadSnapshot(ctx, k)
	if err != nil {
		return nil, err
	}
	out := []string{}
	for _, e := range s.entities {
		if e.Type == graph.TypeReq && !s.verified(e.ID) {
			out = append(out, e.ID)
		}
	}
	return out, nil
}

// Everything is every entity and edge of a branch's index as kb_query and
// kb_check see them: one entity per id (a leaf before an extracted entity
// of the same id), ordered by id, and every edge, ordered by source, type
// and target, with its ends read as the ids the entities carry. Edges may
// point at entities that do not exist (kb_check reports them).
type Everything struct {
	Entities []index.Entity
	Edges    []index.Edge
}

// ReadAll reads every entity and edge of the current branch's index,
// synced first. The result is the caller's own copy.
func ReadAll(ctx context.Context, k *store.KB) (*Everything, error) {
	s, err := loadSnapshot(ctx, k)
	if err != nil {
		return nil, err
	}
	all := &Everything{Entities: make([]index.Entity, len(s.entities)), Edges: slices.Clone(s.edges)}
	for i, e := range s.entities {
		all.Entities[i] = *e
		all.Entities[i].Tags = slices.Clone(e.Tags)
	}
	return all, nil
}

// dependsOnCycles finds the strongly connected components of the
// depends_on graph (Tarjan) and reports each one that is a cycle.
func (s *snapshot) dependsOnCycles() []Violation {
	adj := map[string][]string{}
	var nodes []string
	for _, e := range s.edges {
		if e.Type != "depends_on" {
			continue
		}
		if _, ok := adj[e.From]; !ok {
			nodes = append(nodes, e.From)
		}
		adj[e.From] = append(adj[e.From], e.To)
	}
	slices.Sort(nodes)
	idx, low := map[string]int{}, map[string]int{}
	onStack := map[string]bool{}
	var stack []string
	var out []Violation
	counter := 0
	var strong func(v string)
	strong = func(v string) {
		idx[v], low[v] = counter, counter
		counter++
		stack = append(stack, v)
		onStack[v] = true
		for _, w := range adj[v] {
			if _, seen := idx[w]; !seen {
				strong(w)
				low[v] = min(low[v], low[w])
			} else if onStack[w] {
				low[v] = min(low[v], idx[w])
			}
		}
		if low[v] != idx[v] {
			return
		}
		var comp []string
		for {
			w := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			onStack[w] = false
			comp = append(comp, w)
			if w == v {
				break
			}
		}
		if len(comp) > 1 || slices.Contains(adj[v], v) {
			slices.Sort(comp)
			out = append(out, Violation{Rule: RuleDependsOnAcyclic, IDs: comp,
				Message: fmt.Sprintf("depends_on cycle through %s", strings.Join(comp, ", "))})
		}
	}
	for _, v := range nodes {
		if _, seen := idx[v]; !seen {
			strong(v)
		}
	}
	slices.SortFunc(out, func(a, b Violation) int { return cmp.Compare(a.IDs[0], b.IDs[0]) })
	return out
}

func (s *snapshot) symbolReqs() []Violation {
	var out []Violation
	for _, e := range s.edges {
		from, ok := s.byID[e.From]
		if e.Type != "implements" || !ok || from.Type != graph.TypeSymbol {
			continue
		}
		switch to, ok := s.byID[e.To]; {
		case !ok:
			out = append(out, Violation{Rule: RuleSymbolReqExists, IDs: []string{e.From, e.To},
				Message: fmt.Sprintf("symbol %s implements %s, which does not exist", e.From, e.To)})
		case to.Type != graph.TypeReq:
			out = append(out, Violation{Rule: RuleSymbolReqExists, IDs: []string{e.From, e.To},
				Message: fmt.Sprintf("symbol %s implements %s, which is a %s, not a req", e.From, e.To, to.Type)})
		}
	}
	return out
}

// retiredHeld reports the leaves that hold an id the redirect ledger
// retired: one look-up per entry of the ledger among the entities read.
func (s *snapshot) retiredHeld(k *store.KB, r store.Redirects) []Violation {
	var out []Violation
	for _, h := range r.Held(func(id string) (string, string, bool) {
		e, ok := s.byKey[store.IDKey(id)]
		if !ok || e.Path == "" || e.Origin != "" {
			return "", "", false
		}
		return e.ID, e.Path, true
	}) {
		msg, fix := RetiredHeldText(k, h)
		out = append(out, Violation{Rule: RuleRetiredIDs, IDs: []string{h.LeafID},
			Message: k.Rel(k.NodePath(h.Path)) + " " + msg + "; " + fix})
	}
	return out
}

// RetiredHeldText says what is wrong with a leaf that holds an id the
// redirect ledger retired, and what to do (kk check's retired-ids, kk
// lint's retired-id): msg starts with "holds".
func RetiredHeldText(k *store.KB, h store.HeldRetired) (msg, fix string) {
	ledger := k.Rel(k.RedirectsPath())
	to := strings.Join(h.To, ", ")
	if to == "" {
		to = "no note"
	}
	file := k.Rel(k.NodePath(h.Path))
	msg = fmt.Sprintf("holds %s, an id %s retired to %s (its entry %q): the note was deleted or renamed, and its file restored by hand (git checkout, git revert, a conflict resolved)? edges to %s lead to this leaf, not to %s, and kk does not give a retired id again",
		h.LeafID, ledger, to, h.ID, h.LeafID, to)
	fix = fmt.Sprintf("to keep it as a note of its own, give it a new id with `kk node rename %s <new-id>`; to make %s its id again, remove the entry %q from %s (the edges kk pointed at %s stay there); if it came back by mistake, remove it (git rm %s)",
		h.LeafID, h.LeafID, h.ID, ledger, to, file)
	return msg, fix
}

// dangling reports edges to missing entities, except a symbol's implements
// edges (symbol-req-exists reports those) and edges to an id a leaf kk
// cannot read names (claimed, by store.IDKey): the entity exists, and
// leaves-readable reports its leaf, as kk lint does) and edges to an id
// retired in the redirect ledger that leads to a live id (kk lint's
// redirected-edge finding, what kk rebalance move's split-leaf leaves).
func (s *snapshot) dangling(ctx context.Context, k *store.KB, claimed map[string]bool, r store.Redirects) []Violation {
	var out []Violation
	removed := index.NewRemoved(k) // where the leaves of dangling ids went, asked of git once
	live := func(id string) bool { _, ok := s.byID[id]; return ok }
	var named map[string]*index.Entity  // leaves by the id their file is named for, when they hold another
	var atPath map[string]*index.Entity // leaves by path (relative to nodes/)
	for _, e := range s.edges {
		if live(e.To) || claimed[store.IDKey(e.To)] || len(store.ResolveRedirect(r, e.To, live)) > 0 {
			continue
		}
		if from, ok := s.byID[e.From]; ok && from.Type == graph.TypeSymbol && e.Type == "implements" {
			continue
		}
		msg := fmt.Sprintf("%s has a %s edge to %s, which does not exist", e.From, e.Type, e.To)
		if named == nil {
			named, atPath = map[string]*index.Entity{}, map[string]*index.Entity{}
			for _, n := range s.entities {
				if n.Path != "" {
					atPath[n.Path] = n
				}
				if was := strings.TrimSuffix(path.Base(n.Path), ".md"); n.Path != "" && store.IDKey(was) != store.IDKey(n.ID) {
					named[store.IDKey(was)] = n
				}
			}
		}
		// A typed edge of a traceability entity (or to an atom), not
		// kenkeep's relates_to or depends_on of a note.
		_, typed := graph.EdgeTable[e.Type]
		typed = typed && (!NoteID(e.From) || e.Type != index.EdgeRelatesTo && e.Type != index.EdgeDependsOn && e.Type != index.EdgeRelated)
		if n := named[store.IDKey(e.To)]; n != nil && NoteID(e.To) && NoteID(n.ID) {
			// kk_id changed by hand in the file named for e.To.
			msg += fmt.Sprintf("; its file, %s, holds %s now: if kk_id was changed by hand, `kk node rename %s %s` finishes the rename", path.Join(store.DirName, "nodes", n.Path), n.ID, e.To, n.ID)
		} else if typed {
			// A typed edge (a traceability entity's, or to an atom): kk
			// node delete and rename keep notes, not these; kk delete
			// takes the edge out whatever became of its end.
			if n != nil {
				msg += fmt.Sprintf("; its file, %s, holds %s now (kk_id changed by hand: an entity's id is not renamed, put it back, or add the edge to %s with kk upsert)", path.Join(store.DirName, "nodes", n.Path), n.ID, n.ID)
			}
			msg += fmt.Sprintf("; `kk delete --edge %s:%s:%s` takes the edge out", e.Type, e.From, e.To)
		} else if hint := GoneHint(ctx, removed, e.To, func(p string) (string, bool) {
			n := atPath[p]
			if n == nil {
				return "", false
			}
			return n.ID, true
		}); hint != "" {
			msg += "; " + hint
		}
		out = append(out, Violation{Rule: RuleNoDanglingEdges, IDs: []string{e.From, e.To}, Message: msg})
	}
	return out
}

// GoneHint says, for an edge to id that no leaf holds, what became of the
// file named for it and the command that finishes what a person began by
// hand ("" when there is nothing to say): a file git saw renamed (git mv)
// to one whose leaf holds another id (idAt, by path relative to nodes/)
// is a rename kk node rename finishes; a file removed (rm, git rm), a
// deletion kk node delete finishes; with no file git knows of, a note's
// id may still be a rename whose file was never added (mv without git).
func GoneHint(ctx context.Context, removed *index.Removed, id string, idAt func(path string) (string, bool)) string {
	how, to := removed.Leaf(ctx, id)
	if to != "" {
		if now, ok := idAt(to); ok && store.IDKey(now) != store.IDKey(id) {
			return fmt.Sprintf("its file %s and holds %s: if kk_id was changed by hand, `kk node rename %s %s` points the edges and links to %s at it", how, now, id, now, id)
		}
	}
	rename := ""
	if NoteID(id) {
		rename = fmt.Sprintf("if its note's file was renamed and its kk_id changed by hand, `kk node rename %s <the id it has now>` points the edges and links to %s at it", id, id)
	}
	if how != "" && to == "" {
		// (A file moved without git, mv, is a removal to git until the
		// new one is added.)
		del := fmt.Sprintf("its leaf %s: `kk node delete %s` takes the edges to it out", how, id)
		if rename != "" {
			return del + "; " + rename
		}
		return del
	}
	return rename
}

// NoteID reports whether id, by its type prefix, is no traceability
// entity's and no molecule's: an id kk node rename may have to finish.
func NoteID(id string) bool {
	typ, _, _ := strings.Cut(store.IDKey(id), "-")
	return !slices.Contains(TraceTypes, typ) && typ != graph.TypeMolecule
}

// endpointTypes checks the typed edges against the edge table. kenkeep's
// generic relationships (relates_to and depends_on between leaves that are
// not requirements, and kk_related) are not typed edges and are skipped.
func (s *snapshot) endpointTypes() []Violation {
	var out []Violation
	for _, e := range s.edges {
		from, okF := s.byID[e.From]
		to, okT := s.byID[e.To]
		if !okF || !okT || e.Type == "relates_to" || e.Type == "related" {
			continue
		}
		if e.Type == "depends_on" && from.Type != graph.TypeReq && to.Type != graph.TypeReq {
			continue
		}
		if _, known := graph.EdgeTable[e.Type]; !known {
			out = append(out, Violation{Rule: RuleEdgeEndpointTypes, IDs: []string{e.From, e.To},
				Message: fmt.Sprintf("%s has an edge of unknown type %q to %s", e.From, e.Type, e.To)})
			continue
		}
		if err := graph.CheckEdge(e.Type, from.Type, to.Type, "-"); err != nil {
			out = append(out, Violation{Rule: RuleEdgeEndpointTypes, IDs: []string{e.From, e.To},
				Message: fmt.Sprintf("%s → %s: %s", e.From, e.To, err.Message)})
		}
	}
	return out
}
