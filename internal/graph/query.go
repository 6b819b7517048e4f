package graph

import (
	"context"
	"errors"
	"fmt"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
)

// Defaults and limits of the read operations.
const (
	DefaultChangelogLimit = 5
	DefaultLimit          = 20
	MaxLimit              = 1000
)

// AtomView is an atom as the operations return it.
type AtomView struct {
	ID              string           `json:"id"`
	Name            string           `json:"name"`
	Knowledge       string           `json:"knowledge"`
	Paths           []string         `json:"paths"`
	MoleculeID      *string          `json:"moleculeId"`
	RelatedAtoms    []RelatedView    `json:"relatedAtoms"`
	MatchedPaths    []string         `json:"matchedPaths,omitempty"`
	Version         int64            `json:"version"`
	CreatedByTaskID string           `json:"createdByTaskId"`
	LastTaskID      string           `json:"lastTaskId"`
	CreatedAt       string           `json:"createdAt"`
	UpdatedAt       string           `json:"updatedAt"`
	Path            string           `json:"path"`
	Changelog       []ChangelogEntry `json:"changelog,omitempty"`
}

// MoleculeView is a molecule as the operations return it.
type MoleculeView struct {
	ID               string           `json:"id"`
	Name             string           `json:"name"`
	Knowledge        string           `json:"knowledge"`
	RelatedMolecules []RelatedView    `json:"relatedMolecules"`
	Version          int64            `json:"version"`
	CreatedByTaskID  string           `json:"createdByTaskId"`
	LastTaskID       string           `json:"lastTaskId"`
	CreatedAt        string           `json:"createdAt"`
	UpdatedAt        string           `json:"updatedAt"`
	Path             string           `json:"path"`
	Changelog        []ChangelogEntry `json:"changelog,omitempty"`
	Atoms            []AtomView       `json:"atoms,omitempty"`
}

// RelatedView is one relationship with the other entity's name ("" when it
// no longer exists).
type RelatedView struct {
	AtomID     string `json:"atomId,omitempty"`
	MoleculeID string `json:"moleculeId,omitempty"`
	Name       string `json:"name"`
	Reason     string `json:"reason"`
}

// SearchResult is the data of a search.
type SearchResult struct {
	Atoms     []AtomView     `json:"atoms,omitzero"`
	Molecules []MoleculeView `json:"molecules,omitzero"`
	Total     int            `json:"total"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
}

// ContextResult is the data of a context lookup.
type ContextResult struct {
	Molecules      []MoleculeView `json:"molecules"`
	OrphanAtoms    []AtomView     `json:"orphanAtoms"`
	UnmatchedPaths []string       `json:"unmatchedPaths"`
}

type viewOpts struct {
	changelog bool
	limit     int
}

// newestFirst returns up to limit entries, newest first. Entries are stored
// oldest first, so a later entry is newer even when timestamps tie.
func NewestFirst(log []ChangelogEntry, limit, offset int) []ChangelogEntry {
	out := make([]ChangelogEntry, 0, min(len(log), limit))
	for i := len(log) - 1 - offset; i >= 0 && len(out) < limit; i-- {
		out = append(out, log[i])
	}
	return out
}

func (g *Graph) atomView(a *Atom, o viewOpts) AtomView {
	v := AtomView{ID: a.ID, Name: a.Name, Knowledge: a.Knowledge, Paths: node.List(a.Paths), RelatedAtoms: []RelatedView{},
		Version: a.Version, CreatedByTaskID: a.CreatedByTask, LastTaskID: a.LastTask, CreatedAt: a.CreatedAt, UpdatedAt: a.UpdatedAt, Path: RepoPath(a.Path)}
	if a.Molecule != "" {
		m := a.Molecule
		v.MoleculeID = &m
	}
	for _, r := range a.Related {
		rv := RelatedView{AtomID: r.ID, Reason: r.Reason}
		if other, ok := g.Atoms[store.IDKey(r.ID)]; ok {
			rv.Name = other.Name
		}
		v.RelatedAtoms = append(v.RelatedAtoms, rv)
	}
	if o.changelog {
		v.Changelog = NewestFirst(a.Changelog, o.limit, 0)
	}
	return v
}

func (g *Graph) moleculeView(m *Molecule, o viewOpts) MoleculeView {
	v := MoleculeView{ID: m.ID, Name: m.Name, Knowledge: m.Knowledge, RelatedMolecules: []RelatedView{},
		Version: m.Version, CreatedByTaskID: m.CreatedByTask, LastTaskID: m.LastTask, CreatedAt: m.CreatedAt, UpdatedAt: m.UpdatedAt, Path: RepoPath(m.Path)}
	for _, r := range m.Related {
		rv := RelatedView{MoleculeID: r.ID, Reason: r.Reason}
		if other, ok := g.Molecules[store.IDKey(r.ID)]; ok {
			rv.Name = other.Name
		}
		v.RelatedMolecules = append(v.RelatedMolecules, rv)
	}
	if o.changelog {
		v.Changelog = NewestFirst(m.Changelog, o.limit, 0)
	}
	return v
}

// viewOptions reads the changelog parameters of a read operation.
// queryView checks a query's project id and reads its changelog options:
// the start every query_graph operation shares.
func queryView(k *store.KB, projectID string, include *bool, limit *int) (viewOpts, error) {
	if err := ValidateProjectID(k, projectID); err != nil {
		return viewOpts{}, err
	}
	return viewOptions(include, limit)
}

func viewOptions(include *bool, limit *int) (viewOpts, error) {
	o := viewOpts{changelog: include == nil || *include, limit: DefaultChangelogLimit}
	if limit != nil {
		if *limit < 0 || *limit > MaxLimit {
			return o, op.Invalid("changelogLimit", "must be between 0 and %d", MaxLimit)
		}
		o.limit = *limit
	}
	return o, nil
}

// Get returns one atom or molecule by id, a molecule with its atoms
// (query_graph get).
func Get(ctx context.Context, k *store.KB, p GetParams) (EntityView, error) {
	o, err := queryView(k, p.ProjectID, p.IncludeChangelog, p.ChangelogLimit)
	if err != nil {
		return nil, err
	}
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, op.Invalid("id", "is required for get")
	}
	return getEntity(ctx, k, p.EntityType, p.ID, o)
}

// Search lists atoms or molecules by text, molecule or orphans, a page at
// a time (query_graph search).
func Search(ctx context.Context, k *store.KB, p SearchParams) (*SearchResult, error) {
	o, err := queryView(k, p.ProjectID, p.IncludeChangelog, p.ChangelogLimit)
	if err != nil {
		return nil, err
	}
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	limit, offset, perr := Page(p.Limit, p.Offset)
	if perr != nil {
		return nil, perr
	}
	if p.EntityType == KindMolecule && (p.MoleculeID != "" || p.OrphansOnly) {
		return nil, op.Invalid("moleculeId", "moleculeId and orphansOnly filter atoms, not molecules")
	}
	if p.MoleculeID != "" && p.OrphansOnly {
		return nil, op.Invalid("orphansOnly", "an orphan atom has no molecule; give moleculeId or orphansOnly, not both")
	}
	g, err := LoadIndexed(ctx, k, true)
	if err != nil {
		return nil, err
	}
	defer func() { _ = g.Close() }()
	return g.search(ctx, p, limit, offset, o)
}

// Context returns the atoms whose path patterns match some files, grouped
// by molecule, and the files no atom covers (query_graph context).
func Context(ctx context.Context, k *store.KB, p ContextParams) (*ContextResult, error) {
	o, err := queryView(k, p.ProjectID, p.IncludeChangelog, p.ChangelogLimit)
	if err != nil {
		return nil, err
	}
	paths := slices.Clone(p.Paths)
	if p.TaskFile != "" {
		src, file, err := readTaskFile(k, p.TaskFile)
		if err != nil {
			return nil, err
		}
		// Noted for the end-of-turn graph hint (the session that works on
		// the task is asked to record what it changed); a note that cannot
		// be written takes nothing from the answer.
		_ = RecordTaskFile(k, file, k.Time())
		paths = append(paths, ContextFiles(string(src))...)
	}
	if len(paths) == 0 && p.TaskFile == "" {
		return nil, op.Invalid("paths", "give at least one file path (or a taskFile)")
	}
	g, err := contextGraph(ctx, k, paths)
	if err != nil {
		return nil, err
	}
	return g.Context(ctx, k.Root, paths, o)
}

func checkKind(field, kind string) *op.Error {
	switch kind {
	case KindAtom, KindMolecule:
		return nil
	case "":
		return op.Invalid(field, "is required: atom or molecule")
	}
	return op.Invalid(field, "%q is not atom or molecule", kind)
}

func Page(limit, offset *int) (int, int, *op.Error) {
	l, o := DefaultLimit, 0
	if limit != nil {
		if *limit < 1 || *limit > MaxLimit {
			return 0, 0, op.Invalid("limit", "must be between 1 and %d", MaxLimit)
		}
		l = *limit
	}
	if offset != nil {
		if *offset < 0 {
			return 0, 0, op.Invalid("offset", "must not be negative")
		}
		o = *offset
	}
	return l, o, nil
}

// getEntity answers get from the index as it is, with the entity itself
// read from its leaf; only when the index does not know the id, or its
// leaf moved or changed since, is the index synced and the get repeated.
func getEntity(ctx context.Context, k *store.KB, kind, id string, o viewOpts) (EntityView, error) {
	g, err := getGraph(ctx, k, kind, id, false)
	if err != nil {
		return nil, err
	}
	if v, err := g.get(ctx, kind, id, o); err == nil {
		return v, nil
	}
	if g, err = getGraph(ctx, k, kind, id, true); err != nil {
		return nil, err
	}
	v, err := g.get(ctx, kind, id, o)
	if oe, ok := errors.AsType[*op.Error](err); ok && oe.Code == op.CodeNotFound && g.db != nil {
		if uerr := UnreadableLeaf(ctx, k, g.db, kind, id); uerr != nil {
			return nil, uerr
		}
	}
	return v, err
}

// get returns the view of one entity, read from its leaf.
func (g *Graph) get(ctx context.Context, kind, id string, o viewOpts) (EntityView, error) {
	if kind == KindAtom {
		a, ok := g.Atoms[store.IDKey(id)]
		if !ok {
			return nil, op.NotFound(kind, id)
		}
		// The version is the index's (see index effective versions); the
		// rest is read fresh from the leaf.
		version := a.Version
		if _, err := g.fresh(id); err != nil {
			return nil, err
		}
		a.Version = max(a.Version, version)
		return g.atomView(a, o), nil
	}
	m, ok := g.Molecules[store.IDKey(id)]
	if !ok {
		return nil, op.NotFound(kind, id)
	}
	version := m.Version
	if _, err := g.fresh(id); err != nil {
		return nil, err
	}
	m.Version = max(m.Version, version)
	var ents []*Entity
	for _, a := range g.MemberAtoms(id) {
		ents = append(ents, &a.Entity)
	}
	if err := g.Knowledge(ctx, ents...); err != nil {
		return nil, err
	}
	v := g.moleculeView(m, o)
	v.Atoms = []AtomView{}
	for _, a := range g.MemberAtoms(id) {
		v.Atoms = append(v.Atoms, g.atomView(a, o))
	}
	return v, nil
}

// textRanks ranks the entities of leaf type typ against query with the
// branch index's search engine (the one every face uses): it returns the
// rank of each matching entity by store.IDKey, and nil when query is
// blank (every entity matches).
func (g *Graph) textRanks(ctx context.Context, query, typ string) (map[string]int, error) {
	if strings.TrimSpace(query) == "" {
		return nil, nil
	}
	if g.db == nil {
		return nil, fmt.Errorf("graph search needs the branch index")
	}
	hits, err := g.db.Search(ctx, index.Request{Text: query, Types: []string{typ}, Limit: max(1, len(g.Atoms)+len(g.Molecules)), Every: true, Lexical: true})
	if err != nil {
		return nil, err
	}
	ranks := make(map[string]int, len(hits))
	for i, h := range hits {
		ranks[store.IDKey(h.ID)] = i
	}
	return ranks, nil
}

// byRank orders entities by their rank, when there are ranks.
func byRank[T any](list []T, id func(T) string, ranks map[string]int) {
	if ranks != nil {
		slices.SortStableFunc(list, func(a, b T) int { return ranks[store.IDKey(id(a))] - ranks[store.IDKey(id(b))] })
	}
}

func (g *Graph) search(ctx context.Context, p SearchParams, limit, offset int, o viewOpts) (*SearchResult, error) {
	res := &SearchResult{Limit: limit, Offset: offset}
	matches := func(ranks map[string]int, id string) bool {
		_, ok := ranks[store.IDKey(id)]
		return ranks == nil || ok
	}
	if p.EntityType == KindMolecule {
		ranks, err := g.textRanks(ctx, p.Query, TypeMolecule)
		if err != nil {
			return nil, err
		}
		res.Molecules = []MoleculeView{}
		var hits []*Molecule
		for _, m := range g.SortedMolecules() {
			if matches(ranks, m.ID) {
				hits = append(hits, m)
			}
		}
		byRank(hits, func(m *Molecule) string { return m.ID }, ranks)
		res.Total = len(hits)
		for _, m := range Window(hits, limit, offset) {
			res.Molecules = append(res.Molecules, g.moleculeView(m, o))
		}
		return res, nil
	}
	if p.MoleculeID != "" {
		if _, ok := g.Molecules[store.IDKey(p.MoleculeID)]; !ok {
			return nil, op.NotFound(KindMolecule, p.MoleculeID)
		}
	}
	ranks, err := g.textRanks(ctx, p.Query, TypeAtom)
	if err != nil {
		return nil, err
	}
	res.Atoms = []AtomView{}
	var hits []*Atom
	for _, a := range g.SortedAtoms() {
		switch {
		case p.MoleculeID != "" && store.IDKey(a.Molecule) != store.IDKey(p.MoleculeID):
		case p.OrphansOnly && g.MoleculeOf(a) != nil:
		case !matches(ranks, a.ID):
		default:
			hits = append(hits, a)
		}
	}
	byRank(hits, func(a *Atom) string { return a.ID }, ranks)
	res.Total = len(hits)
	for _, a := range Window(hits, limit, offset) {
		res.Atoms = append(res.Atoms, g.atomView(a, o))
	}
	return res, nil
}

func Window[T any](s []T, limit, offset int) []T {
	if offset >= len(s) {
		return nil
	}
	return s[offset:min(len(s), offset+limit)]
}

// MoleculeOf returns an atom's molecule, or nil for an orphan (also when
// kk_molecule names a molecule that does not exist).
func (g *Graph) MoleculeOf(a *Atom) *Molecule {
	if a.Molecule == "" {
		return nil
	}
	return g.Molecules[store.IDKey(a.Molecule)]
}

// NormalizePath turns a requested file path into the repository-relative
// slash form atom patterns are matched against: "./" and duplicate slashes
// dropped, an absolute path inside root made relative. It returns "" for a
// path that cannot name a repository file.
func NormalizePath(root, p string) string {
	p = strings.TrimSpace(p)
	if p == "" {
		return ""
	}
	if filepath.IsAbs(p) {
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return ""
		}
		p = rel
	}
	p = path.Clean(filepath.ToSlash(p))
	if p == "." || p == ".." || strings.HasPrefix(p, "../") || strings.HasPrefix(p, "/") {
		return ""
	}
	return p
}

// Context matches file paths against every atom's patterns and groups the
// matching atoms by molecule. Molecules and atoms are ordered by name;
// matchedPaths and unmatchedPaths keep the request's order. A path that
// cannot name a repository file is reported as unmatched, as given.
func (g *Graph) Context(ctx context.Context, root string, paths []string, o viewOpts) (*ContextResult, error) {
	res := &ContextResult{Molecules: []MoleculeView{}, OrphanAtoms: []AtomView{}, UnmatchedPaths: []string{}}
	var req []string
	seen := map[string]bool{}
	for _, p := range paths {
		key := NormalizePath(root, p)
		if key == "" {
			key = strings.TrimSpace(p)
		}
		if key != "" && !seen[key] {
			seen[key] = true
			req = append(req, key)
		}
	}
	matched := map[string][]string{}
	hit := map[string]bool{}
	atoms := g.SortedAtoms()
	var set *PatternSet
	if g.tmpl != nil && len(g.sorted) == len(g.Atoms) {
		set = g.tmpl.patternSet() // atoms is g.sorted, in the template's order
	} else {
		set = buildPatterns(atoms)
	}
	for _, p := range req {
		set.Match(p, func(i int, _ string) {
			id := atoms[i].ID
			if mp := matched[id]; len(mp) == 0 || mp[len(mp)-1] != p {
				matched[id] = append(matched[id], p)
			}
			hit[p] = true
		})
		if !hit[p] {
			res.UnmatchedPaths = append(res.UnmatchedPaths, p)
		}
	}
	var ents []*Entity
	for _, a := range atoms {
		if _, ok := matched[a.ID]; ok {
			ents = append(ents, &a.Entity)
			if m := g.MoleculeOf(a); m != nil {
				ents = append(ents, &m.Entity)
			}
		}
	}
	if err := g.Knowledge(ctx, ents...); err != nil {
		return nil, err
	}
	groups := map[string][]AtomView{}
	for _, a := range atoms {
		mp, ok := matched[a.ID]
		if !ok {
			continue
		}
		v := g.atomView(a, o)
		v.MatchedPaths = mp
		if m := g.MoleculeOf(a); m != nil {
			groups[m.ID] = append(groups[m.ID], v)
		} else {
			res.OrphanAtoms = append(res.OrphanAtoms, v)
		}
	}
	for _, m := range g.SortedMolecules() {
		if members, ok := groups[m.ID]; ok {
			v := g.moleculeView(m, o)
			v.Atoms = members
			res.Molecules = append(res.Molecules, v)
		}
	}
	return res, nil
}
