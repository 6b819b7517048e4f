package graph

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/atomicfile"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Knowledge modes of an update.
const (
	ModeOverwrite = "overwrite"
	ModeAppend    = "append"
)

// DeleteResult is the data of a delete.
type DeleteResult struct {
	Deleted  []string `json:"deleted"`
	Orphaned []string `json:"orphaned"`
}

// ManageGraph runs manage_graph: create, update or delete an atom or a
// molecule. Writes happen under the writer lock after re-reading the
// target, and the index files are regenerated.
func ManageGraph(ctx context.Context, k *store.KB, p ManageGraphParams) Response {
	data, err := manageGraph(ctx, k, p)
	if err != nil {
		return fail(err)
	}
	return ok(data)
}

// ManageGraphJSON decodes the parameter object strictly and runs ManageGraph.
func ManageGraphJSON(ctx context.Context, k *store.KB, raw []byte) Response {
	var p ManageGraphParams
	if err := decodeStrict(raw, &p); err != nil {
		return fail(err)
	}
	return ManageGraph(ctx, k, p)
}

// timestamp is kk's clock in UTC, to the second.
func timestamp(k *store.KB) string {
	now := time.Now
	if k.Now != nil {
		now = k.Now
	}
	return now().UTC().Format("2006-01-02T15:04:05Z")
}

// edit is the input of a create or update after validation.
type edit struct {
	name      *string
	paths     []string
	pathsSet  bool
	knowledge *string
	molecule  NullableID
	related   []Related
	relSet    bool
}

func manageGraph(ctx context.Context, k *store.KB, p ManageGraphParams) (any, error) {
	if err := ValidateProjectID(k, p.ProjectID); err != nil {
		return nil, err
	}
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	switch p.Operation {
	case "create", "update":
	case "delete":
		if p.ID == "" {
			return nil, invalid("id", "is required for delete")
		}
		if p.Version == nil {
			return nil, invalid("version", "is required for delete (optimistic locking)")
		}
		if err := ValidateTaskID("lastTaskId", p.LastTaskID, false); err != nil {
			return nil, err
		}
		var res *DeleteResult
		err := mutate(ctx, k, func(g *Graph, w *writes) error {
			var err error
			res, err = g.delete(k, w, p)
			return err
		})
		return res, err
	case "":
		return nil, invalid("operation", "is required: create, update or delete")
	default:
		return nil, invalid("operation", "%q is not a manage_graph operation; use create, update or delete", p.Operation)
	}
	e, verr := validateEdit(p)
	if verr != nil {
		return nil, verr
	}
	var data any
	err := mutate(ctx, k, func(g *Graph, w *writes) error {
		var err error
		if p.Operation == "create" {
			data, err = g.create(k, w, p, e)
		} else {
			data, err = g.update(k, w, p, e)
		}
		return err
	})
	return data, err
}

// validateEdit checks every field that needs no tree: bounds, globs, which
// fields the entity type takes.
func validateEdit(p ManageGraphParams) (*edit, *Error) {
	create := p.Operation == "create"
	e := &edit{molecule: p.MoleculeID}
	if create {
		if p.ID != "" {
			return nil, invalid("id", "is chosen by kk on create (from the name); leave it out")
		}
		if p.Version != nil {
			return nil, invalid("version", "a new entity starts at version 1; leave it out on create")
		}
		if p.Name == nil {
			return nil, invalid("name", "is required for create")
		}
		if p.EntityType == KindAtom && !p.Paths.Set {
			return nil, invariant("paths", "an atom needs at least one path pattern")
		}
	} else {
		if p.ID == "" {
			return nil, invalid("id", "is required for update")
		}
		if p.Version == nil {
			return nil, invalid("version", "is required for update (optimistic locking)")
		}
		if p.CreatedByTaskID != "" {
			return nil, invalid("createdByTaskId", "is set on create only")
		}
	}
	if p.Cascade {
		return nil, invalid("cascade", "applies to delete only")
	}
	switch p.KnowledgeMode {
	case "", ModeOverwrite:
	case ModeAppend:
		if create {
			return nil, invalid("knowledgeMode", "append applies to update; a new entity's knowledge is written as given")
		}
		if p.Knowledge == nil {
			return nil, invalid("knowledge", "knowledgeMode append needs the text to append")
		}
	default:
		return nil, invalid("knowledgeMode", "%q is not overwrite or append", p.KnowledgeMode)
	}
	if p.Name != nil {
		name, err := ValidateName("name", *p.Name)
		if err != nil {
			return nil, err
		}
		e.name = &name
	}
	if p.Knowledge != nil {
		text, err := ValidateKnowledge("knowledge", *p.Knowledge)
		if err != nil {
			return nil, err
		}
		e.knowledge = &text
	}
	if err := ValidateTaskID("createdByTaskId", p.CreatedByTaskID, false); err != nil {
		return nil, err
	}
	if err := ValidateTaskID("lastTaskId", p.LastTaskID, false); err != nil {
		return nil, err
	}
	relField, rel, other := "relatedAtoms", p.RelatedAtoms, p.RelatedMolecules
	if p.EntityType == KindMolecule {
		relField, rel, other = "relatedMolecules", p.RelatedMolecules, p.RelatedAtoms
		switch {
		case p.Paths.Set:
			return nil, invalid("paths", "a molecule has no paths; its atoms do")
		case p.MoleculeID.Set:
			return nil, invalid("moleculeId", "molecules do not nest; moleculeId belongs to atoms")
		case other.Set:
			return nil, invalid("relatedAtoms", "a molecule relates to molecules; use relatedMolecules")
		}
	} else if other.Set {
		return nil, invalid("relatedMolecules", "an atom relates to atoms; use relatedAtoms")
	}
	if p.Paths.Set {
		paths, err := ValidatePaths("paths", p.Paths.Items)
		if err != nil {
			return nil, err
		}
		e.paths, e.pathsSet = paths, true
	}
	if rel.Set {
		if len(rel.Items) > MaxRelated {
			return nil, invalid(relField, "%d entries; the limit is %d", len(rel.Items), MaxRelated)
		}
		e.relSet = true
		e.related = []Related{}
		for i, r := range rel.Items {
			field := fmt.Sprintf("%s[%d]", relField, i)
			id := r.AtomID
			if p.EntityType == KindMolecule {
				id = r.MoleculeID
				if r.AtomID != "" {
					return nil, invalid(field, "use moleculeId, not atomId")
				}
			} else if r.MoleculeID != "" {
				return nil, invalid(field, "use atomId, not moleculeId")
			}
			if strings.TrimSpace(id) == "" {
				return nil, invalid(field, "names no %s id", p.EntityType)
			}
			reason := strings.TrimSpace(r.Reason)
			if strings.ContainsAny(reason, "\n\r") || utf8.RuneCountInString(reason) > MaxNameChars*4 {
				return nil, invalid(field, "reason must be one line of at most %d characters", MaxNameChars*4)
			}
			dup := false
			for _, prev := range e.related {
				dup = dup || prev.ID == id
			}
			if !dup {
				e.related = append(e.related, Related{ID: id, Reason: reason})
			}
		}
	}
	return e, nil
}

// checkRefs checks that the molecule and related entities an edit names exist.
func (g *Graph) checkRefs(kind, self string, e *edit) error {
	if e.molecule.Set && e.molecule.Value != "" {
		if _, ok := g.Molecules[e.molecule.Value]; !ok {
			return notFound(KindMolecule, e.molecule.Value)
		}
	}
	for _, r := range e.related {
		if r.ID == self {
			return invalid("related", "%s cannot relate to itself", self)
		}
		exists := false
		if kind == KindAtom {
			_, exists = g.Atoms[r.ID]
		} else {
			_, exists = g.Molecules[r.ID]
		}
		if !exists {
			return notFound(kind, r.ID)
		}
	}
	return nil
}

func firstLine(s string) string {
	for _, line := range strings.Split(s, "\n") {
		if line = strings.TrimSpace(strings.TrimLeft(strings.TrimSpace(line), "#>*-")); line != "" {
			if r := []rune(line); len(r) > 200 {
				line = strings.TrimSpace(string(r[:200])) + "…"
			}
			return line
		}
	}
	return ""
}

func (g *Graph) create(k *store.KB, w *writes, p ManageGraphParams, e *edit) (any, error) {
	if err := g.checkRefs(p.EntityType, "", e); err != nil {
		return nil, err
	}
	typ := TypeAtom
	if p.EntityType == KindMolecule {
		typ = TypeMolecule
	}
	id, err := node.UniqueID(g.taken, node.DeriveID(typ, *e.name))
	if err != nil {
		return nil, invalid("name", "%v", err)
	}
	knowledge := ""
	if e.knowledge != nil {
		knowledge = *e.knowledge
	}
	now := timestamp(k)
	ent := Entity{ID: id, Path: Folder + "/" + id + ".md", Type: typ, Name: *e.name, Knowledge: knowledge, Related: e.related,
		Version: 1, CreatedAt: now, UpdatedAt: now, CreatedByTask: p.CreatedByTaskID, LastTask: p.CreatedByTaskID}
	n := &node.Node{Format: node.SchemaVersion, Path: ent.Path, Type: typ, ID: id, Title: ent.Name, Description: firstLine(knowledge),
		Tags: []string{}, DerivedFrom: []string{}, RelatesTo: []string{}, Confidence: "high"}
	if p.EntityType == KindMolecule {
		m := &Molecule{Entity: ent}
		if err := writeEntity(n, &m.Entity, nil, true); err != nil {
			return nil, err
		}
		if err := w.put(n); err != nil {
			return nil, err
		}
		g.Molecules[id], g.Leaves[id] = m, n
		return g.moleculeView(m, viewOpts{changelog: true, limit: DefaultChangelogLimit}), nil
	}
	a := &Atom{Entity: ent, Paths: e.paths, Molecule: e.molecule.Value}
	if err := writeEntity(n, &a.Entity, a, true); err != nil {
		return nil, err
	}
	if err := w.put(n); err != nil {
		return nil, err
	}
	g.Atoms[id], g.Leaves[id] = a, n
	g.sorted = nil
	return g.atomView(a, viewOpts{changelog: true, limit: DefaultChangelogLimit}), nil
}

// target finds the entity an update or delete names and checks its version.
func (g *Graph) target(kind, id string, version int64) (*Entity, error) {
	var e *Entity
	if kind == KindAtom {
		if a, ok := g.Atoms[id]; ok {
			e = &a.Entity
		}
	} else if m, ok := g.Molecules[id]; ok {
		e = &m.Entity
	}
	if e == nil {
		return nil, notFound(kind, id)
	}
	if _, err := g.fresh(id); err != nil {
		return nil, err
	}
	if e.Version != version {
		return nil, conflict(kind, id, version, e.Version)
	}
	return e, nil
}

// AppendSeparator is the line knowledgeMode append puts before the new text.
func AppendSeparator(timestamp, taskID string) string {
	return "\n\n---[" + timestamp + " task:" + taskID + "]---\n"
}

func (g *Graph) update(k *store.KB, w *writes, p ManageGraphParams, e *edit) (any, error) {
	ent, err := g.target(p.EntityType, p.ID, *p.Version)
	if err != nil {
		return nil, err
	}
	if err := g.checkRefs(p.EntityType, p.ID, e); err != nil {
		return nil, err
	}
	now := timestamp(k)
	if e.name != nil {
		ent.Name = *e.name
	}
	if e.knowledge != nil {
		if p.KnowledgeMode == ModeAppend {
			merged := strings.TrimSpace(ent.Knowledge + AppendSeparator(now, p.LastTaskID) + *e.knowledge)
			if len(merged) > MaxKnowledgeBytes {
				return nil, invalid("knowledge", "appending makes the knowledge %d bytes; the limit is %d (32 KB)", len(merged), MaxKnowledgeBytes)
			}
			ent.Knowledge = merged
		} else {
			ent.Knowledge = *e.knowledge
		}
	}
	if e.relSet {
		ent.Related = e.related
	}
	ent.Version++
	ent.UpdatedAt = now
	if p.LastTaskID != "" {
		ent.LastTask = p.LastTaskID
	}
	n := g.Leaves[p.ID] // read by target
	o := viewOpts{changelog: true, limit: DefaultChangelogLimit}
	if p.EntityType == KindMolecule {
		m := g.Molecules[p.ID]
		if err := WriteMolecule(n, m); err != nil {
			return nil, err
		}
		return g.moleculeView(m, o), w.put(n)
	}
	a := g.Atoms[p.ID]
	if e.pathsSet {
		a.Paths = e.paths
	}
	if e.molecule.Set {
		a.Molecule = e.molecule.Value
	}
	if err := WriteAtom(n, a); err != nil {
		return nil, err
	}
	return g.atomView(a, o), w.put(n)
}

func (g *Graph) delete(k *store.KB, w *writes, p ManageGraphParams) (*DeleteResult, error) {
	ent, err := g.target(p.EntityType, p.ID, *p.Version)
	if err != nil {
		return nil, err
	}
	res := &DeleteResult{Deleted: []string{ent.ID}, Orphaned: []string{}}
	w.remove(ent.Path)
	if p.EntityType == KindAtom {
		return res, nil
	}
	now := timestamp(k)
	for _, a := range g.MemberAtoms(p.ID) {
		n, err := g.fresh(a.ID)
		if err != nil {
			return nil, err
		}
		if p.Cascade {
			w.remove(a.Path)
			res.Deleted = append(res.Deleted, a.ID)
			continue
		}
		a.Molecule = ""
		a.Version++
		a.UpdatedAt = now
		if p.LastTaskID != "" {
			a.LastTask = p.LastTaskID
		}
		if err := WriteAtom(n, a); err != nil {
			return nil, err
		}
		if err := w.put(n); err != nil {
			return nil, err
		}
		res.Orphaned = append(res.Orphaned, a.ID)
	}
	return res, nil
}

// writes collects the files one operation changes; nothing reaches the
// disk until the operation has succeeded as a whole.
type writes struct {
	k       *store.KB
	leaves  map[string]*node.Node // leaves being written, by id, for link resolution
	resolve node.Resolver
	files   map[string][]byte // nodes/-relative path -> content
	order   []string
	removed []string
}

func (w *writes) put(n *node.Node) error {
	if err := n.Validate(); err != nil {
		return err
	}
	data, err := n.Render(w.resolveWith())
	if err != nil {
		return err
	}
	if len(data) > node.MaxSize {
		return invalid("knowledge", "%s would be %d bytes; a leaf holds at most %d", n.Path, len(data), node.MaxSize)
	}
	if _, seen := w.files[n.Path]; !seen {
		w.order = append(w.order, n.Path)
	}
	w.files[n.Path] = data
	return nil
}

func (w *writes) remove(rel string) { w.removed = append(w.removed, rel) }

func (w *writes) flush() error {
	for _, rel := range w.order {
		dst := w.k.NodePath(rel)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := atomicfile.Write(dst, w.files[rel], 0o644); err != nil {
			return err
		}
	}
	for _, rel := range w.removed {
		if err := os.Remove(w.k.NodePath(rel)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// newWrites starts collecting the writes of one operation over the tree t;
// leaves are the writable leaves the operation changes, by id.
func newWrites(k *store.KB, t *store.Tree, leaves map[string]*node.Node) (*writes, error) {
	redirects := store.Redirects{}
	if data, err := os.ReadFile(k.RedirectsPath()); err == nil {
		if redirects, err = store.ParseRedirects(k.Rel(k.RedirectsPath()), data); err != nil {
			return nil, err
		}
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return &writes{k: k, leaves: leaves, resolve: t.LinkResolver(redirects), files: map[string][]byte{}}, nil
}

// mutate runs fn under the writer lock on a freshly read graph, writes what
// it collected, and regenerates the index files.
func mutate(ctx context.Context, k *store.KB, fn func(g *Graph, w *writes) error) error {
	return k.WithLock(ctx, "graph", func() error {
		t, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			return err
		}
		g, err := LoadIndexed(ctx, k, false)
		if err != nil {
			return err
		}
		defer g.Close()
		g.Tree = t
		w, err := newWrites(k, g.Tree, g.Leaves)
		if err != nil {
			return err
		}
		if err := fn(g, w); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		if _, err := indexfiles.RebuildLocked(ctx, k, indexfiles.RebuildOptions{Command: "graph"}); err != nil {
			return err
		}
		return syncIndex(ctx, k, g.db)
	})
}

// syncIndex brings the index up to date after a write, so that reads that
// trust the index as it is (get) see the write.
func syncIndex(ctx context.Context, k *store.KB, db *index.DB) error {
	ex, err := index.ExtractionFor(k)
	if err != nil {
		return err
	}
	_, err = db.SyncWith(ctx, k.NodesDir(), ex)
	return err
}
