package graph

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
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
	// Unlinked are the atoms and molecules that named a deleted one in
	// their related list and lost that entry.
	Unlinked []string `json:"unlinked"`
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

// Create creates one atom or molecule, its id derived from its name
// (manage_graph create).
func Create(ctx context.Context, k *store.KB, p CreateParams) (EntityView, error) {
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	if p.Name == nil {
		return nil, op.Invalid("name", "is required for create")
	}
	if p.EntityType == KindAtom && !p.Paths.Set {
		return nil, op.Invariant("paths", "an atom needs at least one path pattern")
	}
	e, err := validateEdit(editInput{kind: p.EntityType, name: p.Name, paths: p.Paths, knowledge: p.Knowledge, molecule: p.MoleculeID,
		relatedAtoms: p.RelatedAtoms, relatedMolecules: p.RelatedMolecules, createdBy: p.CreatedByTaskID})
	if err != nil {
		return nil, err
	}
	return edited(ctx, k, p.ProjectID, func(g *Graph, w *writes) (*node.Node, error) { return g.create(w, p, e) })
}

// Update changes the fields of one atom or molecule that p sets, at the
// version last read (manage_graph update).
func Update(ctx context.Context, k *store.KB, p UpdateParams) (EntityView, error) {
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, op.Invalid("id", "is required for update")
	}
	if p.Version == 0 {
		return nil, op.Invalid("version", "is required for update (optimistic locking)")
	}
	switch p.KnowledgeMode {
	case "", ModeOverwrite:
	case ModeAppend:
		if p.Knowledge == nil {
			return nil, op.Invalid("knowledge", "knowledgeMode append needs the text to append")
		}
	default:
		return nil, op.Invalid("knowledgeMode", "%q is not overwrite or append", p.KnowledgeMode)
	}
	e, err := validateEdit(editInput{kind: p.EntityType, name: p.Name, paths: p.Paths, knowledge: p.Knowledge, molecule: p.MoleculeID,
		relatedAtoms: p.RelatedAtoms, relatedMolecules: p.RelatedMolecules, lastTask: p.LastTaskID})
	if err != nil {
		return nil, err
	}
	return edited(ctx, k, p.ProjectID, func(g *Graph, w *writes) (*node.Node, error) { return g.update(w, p, e) })
}

// Delete deletes one atom or molecule at the version last read; a
// molecule's atoms are orphaned, or deleted too with Cascade
// (manage_graph delete).
func Delete(ctx context.Context, k *store.KB, p DeleteParams) (*DeleteResult, error) {
	if err := checkKind("entityType", p.EntityType); err != nil {
		return nil, err
	}
	if p.ID == "" {
		return nil, op.Invalid("id", "is required for delete")
	}
	if p.Version == 0 {
		return nil, op.Invalid("version", "is required for delete (optimistic locking)")
	}
	if err := ValidateTaskID("lastTaskId", p.LastTaskID, false); err != nil {
		return nil, err
	}
	var res *DeleteResult
	_, err := mutate(ctx, k, p.ProjectID, "manage_graph", func(g *Graph, w *writes) error {
		var err error
		res, err = g.delete(w, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// edited runs a create or update in a transaction and returns the view of
// the leaf it wrote, as written.
func edited(ctx context.Context, k *store.KB, projectID string, fn func(g *Graph, w *writes) (*node.Node, error)) (EntityView, error) {
	var n *node.Node
	var g *Graph
	_, err := mutate(ctx, k, projectID, "manage_graph", func(gr *Graph, w *writes) error {
		var err error
		g = gr
		n, err = fn(g, w)
		return err
	})
	if err != nil {
		return nil, err
	}
	return g.view(n)
}

// editInput is what validateEdit checks of a create or an update.
type editInput struct {
	kind                           string
	name, knowledge                *string
	paths                          JSONArray[string]
	molecule                       NullableID
	relatedAtoms, relatedMolecules JSONArray[RelatedIn]
	createdBy, lastTask            string
}

// validateEdit checks every field of a create or update that needs no
// tree: bounds, globs, which fields the entity type takes.
func validateEdit(p editInput) (*edit, *op.Error) {
	e := &edit{molecule: p.molecule}
	if p.name != nil {
		name, err := ValidateName("name", *p.name)
		if err != nil {
			return nil, err
		}
		e.name = &name
	}
	if p.knowledge != nil {
		text, err := ValidateKnowledge("knowledge", *p.knowledge)
		if err != nil {
			return nil, err
		}
		// A whole leaf pasted as knowledge would be written as a second
		// front matter block in the body.
		if msg := node.BodyFrontMatter(text); msg != "" {
			return nil, op.Invalid("knowledge", "%s", msg)
		}
		e.knowledge = &text
	}
	if err := ValidateTaskID("createdByTaskId", p.createdBy, false); err != nil {
		return nil, err
	}
	if err := ValidateTaskID("lastTaskId", p.lastTask, false); err != nil {
		return nil, err
	}
	relField, rel, other := "relatedAtoms", p.relatedAtoms, p.relatedMolecules
	if p.kind == KindMolecule {
		relField, rel, other = "relatedMolecules", p.relatedMolecules, p.relatedAtoms
		switch {
		case p.paths.Set:
			return nil, op.Invalid("paths", "a molecule has no paths; its atoms do")
		case p.molecule.Set:
			return nil, op.Invalid("moleculeId", "molecules do not nest; moleculeId belongs to atoms")
		case other.Set:
			return nil, op.Invalid("relatedAtoms", "a molecule relates to molecules; use relatedMolecules")
		}
	} else if other.Set {
		return nil, op.Invalid("relatedMolecules", "an atom relates to atoms; use relatedAtoms")
	}
	if p.paths.Set {
		paths, err := ValidatePaths("paths", p.paths.Items)
		if err != nil {
			return nil, err
		}
		e.paths, e.pathsSet = paths, true
	}
	if rel.Set {
		if len(rel.Items) > MaxRelated {
			return nil, op.Invalid(relField, "%d entries; the limit is %d", len(rel.Items), MaxRelated)
		}
		e.relSet = true
		e.related = []Related{}
		for i, r := range rel.Items {
			field := fmt.Sprintf("%s[%d]", relField, i)
			id := r.AtomID
			if p.kind == KindMolecule {
				id = r.MoleculeID
				if r.AtomID != "" {
					return nil, op.Invalid(field, "use moleculeId, not atomId")
				}
			} else if r.MoleculeID != "" {
				return nil, op.Invalid(field, "use atomId, not moleculeId")
			}
			if strings.TrimSpace(id) == "" {
				return nil, op.Invalid(field, "names no %s id", p.kind)
			}
			reason := strings.TrimSpace(r.Reason)
			if strings.ContainsAny(reason, "\n\r") || utf8.RuneCountInString(reason) > MaxNameChars*4 {
				return nil, op.Invalid(field, "reason must be one line of at most %d characters", MaxNameChars*4)
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
		if _, ok := g.Molecules[store.IDKey(e.molecule.Value)]; !ok {
			return op.NotFound(KindMolecule, e.molecule.Value)
		}
	}
	for _, r := range e.related {
		if r.ID == self {
			return op.Invalid("related", "%s cannot relate to itself", self)
		}
		exists := false
		if kind == KindAtom {
			_, exists = g.Atoms[store.IDKey(r.ID)]
		} else {
			_, exists = g.Molecules[store.IDKey(r.ID)]
		}
		if !exists {
			return op.NotFound(kind, r.ID)
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

func (g *Graph) create(w *writes, p CreateParams, e *edit) (*node.Node, error) {
	if err := g.checkRefs(p.EntityType, "", e); err != nil {
		return nil, err
	}
	typ := TypeAtom
	if p.EntityType == KindMolecule {
		typ = TypeMolecule
	}
	id, err := node.DeriveID(typ, *e.name)
	if err == nil {
		id, err = node.UniqueID(g.taken, id)
	}
	if err != nil {
		return nil, op.Invalid("name", "%v", err)
	}
	if msg := node.LongID(id); msg != "" {
		return nil, op.Invalid("name", "%s: give a shorter name", msg)
	}
	knowledge := ""
	if e.knowledge != nil {
		knowledge = *e.knowledge
	}
	now := w.tx.Timestamp()
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
		g.Molecules[store.IDKey(id)], g.Leaves[store.IDKey(id)] = m, n
		return n, nil
	}
	a := &Atom{Entity: ent, Paths: e.paths, Molecule: e.molecule.Value}
	if err := writeEntity(n, &a.Entity, a, true); err != nil {
		return nil, err
	}
	if err := w.put(n); err != nil {
		return nil, err
	}
	g.Atoms[store.IDKey(id)], g.Leaves[store.IDKey(id)] = a, n
	g.sorted = nil
	return n, nil
}

// target finds the entity an update or delete names, reads its leaf and
// checks that version is its current one.
func (g *Graph) target(kind, id string, version int64) (*Entity, *node.Node, error) {
	e := g.entity(kind, id)
	if e == nil {
		return nil, nil, g.notFound(kind, id)
	}
	n, err := g.fresh(e.ID)
	if err != nil {
		return nil, nil, err
	}
	if err := g.tx.Expect(n, version); err != nil {
		return nil, nil, err
	}
	return e, n, nil
}

// notFound is the error of a write naming an entity the graph does not
// have: NOT_FOUND, unless a leaf kk cannot read claims the id (a hand edit
// broke its front matter), which is said, with the file and its problem.
func (g *Graph) notFound(kind, id string) error {
	if g.tx != nil {
		if t, err := g.tx.Tree(); err == nil {
			if rel, ok := t.Claimed(id); ok {
				return unreadable(kind, id, rel, g.tx.Skipped())
			}
		}
	}
	return op.NotFound(kind, id)
}

// unreadable is the error of an operation on the entity kind id whose leaf
// rel (relative to nodes/) kk cannot read, with its problem from skipped
// (the tree read's problems).
func unreadable(kind, id, rel string, skipped []error) error {
	problem := "it was skipped"
	for _, p := range skipped {
		if ne, ok := errors.AsType[*node.Error](p); ok && ne.Path == rel {
			problem = ne.Detail()
		}
	}
	file := path.Join(store.DirName, "nodes", rel)
	return op.New(op.CodeInternal, map[string]any{"entityType": kind, "id": id, "path": file},
		"%s %s: its leaf %s cannot be read (%s); fix it by hand (kk lint shows the problem), or run %s", kind, id, file, problem, store.AdoptCommand(rel))
}

// UnreadableInTree returns the error of a read of the entity kind id
// that tree t does not have when a leaf t skipped claims the id (a hand
// edit broke its front matter, or another leaf has its id), and nil
// otherwise: the reader says that the leaf cannot be read, naming the
// file and its problem, where NOT_FOUND would send a person or an agent
// off to write the entity again.
func UnreadableInTree(kind, id string, t *store.Tree) error {
	if rel, ok := t.Claimed(id); ok {
		return unreadable(kind, id, rel, t.Problems)
	}
	return nil
}

// UnreadableLeaf returns the error of a read of the entity kind id that
// the index does not have when a leaf kk cannot read is named <id>.md (a
// hand edit broke its front matter), and nil otherwise: the reader says
// so, where NOT_FOUND would send an agent to create the entity again.
func UnreadableLeaf(ctx context.Context, k *store.KB, db *index.DB, kind, id string) error {
	problems, err := db.Problems(ctx, k.NodesDir())
	if err != nil {
		return err
	}
	for _, p := range problems {
		ne, ok := errors.AsType[*node.Error](p)
		if ok && store.IDKey(strings.TrimSuffix(path.Base(ne.Path), ".md")) == store.IDKey(id) {
			return unreadable(kind, id, ne.Path, problems)
		}
	}
	return nil
}

// AppendSeparator is the line knowledgeMode append puts before the new text.
func AppendSeparator(timestamp, taskID string) string {
	return "\n\n---[" + timestamp + " task:" + taskID + "]---\n"
}

func (g *Graph) update(w *writes, p UpdateParams, e *edit) (*node.Node, error) {
	ent, n, err := g.target(p.EntityType, p.ID, p.Version)
	if err != nil {
		return nil, err
	}
	if err := g.checkRefs(p.EntityType, ent.ID, e); err != nil {
		return nil, err
	}
	now := w.tx.Timestamp()
	if e.name != nil {
		ent.Name = *e.name
	}
	if e.knowledge != nil {
		if p.KnowledgeMode == ModeAppend {
			merged := strings.TrimSpace(ent.Knowledge + AppendSeparator(now, p.LastTaskID) + *e.knowledge)
			if len(merged) > MaxKnowledgeBytes {
				return nil, op.Invalid("knowledge", "appending makes the knowledge %d bytes; the limit is %d (32 KB)", len(merged), MaxKnowledgeBytes)
			}
			ent.Knowledge = merged
		} else {
			ent.Knowledge = *e.knowledge
		}
	}
	if e.relSet {
		ent.Related = e.related
	}
	if p.LastTaskID != "" {
		ent.LastTask = p.LastTaskID
	}
	if p.EntityType == KindMolecule {
		return n, w.put2(n, WriteMolecule(n, g.Molecules[store.IDKey(ent.ID)]))
	}
	a := g.Atoms[store.IDKey(ent.ID)]
	if e.pathsSet {
		a.Paths = e.paths
	}
	if e.molecule.Set {
		a.Molecule = e.molecule.Value
	}
	return n, w.put2(n, WriteAtom(n, a))
}

func (g *Graph) delete(w *writes, p DeleteParams) (*DeleteResult, error) {
	ent, n, err := g.target(p.EntityType, p.ID, p.Version)
	if err != nil {
		return nil, err
	}
	res := &DeleteResult{Deleted: []string{ent.ID}, Orphaned: []string{}, Unlinked: []string{}}
	if err := w.tx.Remove(n); err != nil {
		return nil, err
	}
	if p.EntityType == KindAtom {
		return res, g.unlink(w, p, res)
	}
	for _, a := range g.MemberAtoms(ent.ID) {
		an, err := g.fresh(a.ID)
		if err != nil {
			return nil, err
		}
		if p.Cascade {
			if err := w.tx.Remove(an); err != nil {
				return nil, err
			}
			res.Deleted = append(res.Deleted, a.ID)
			continue
		}
		a.Molecule = ""
		if p.LastTaskID != "" {
			a.LastTask = p.LastTaskID
		}
		if err := w.put2(an, WriteAtom(an, a)); err != nil {
			return nil, err
		}
		res.Orphaned = append(res.Orphaned, a.ID)
	}
	return res, g.unlink(w, p, res)
}

// unlink drops the related entries that name a deleted atom or molecule
// from the atoms and molecules that remain (in id order), staging each
// leaf it changes and listing it in res.Unlinked.
func (g *Graph) unlink(w *writes, p DeleteParams, res *DeleteResult) error {
	gone := map[string]bool{}
	for _, id := range res.Deleted {
		gone[store.IDKey(id)] = true
	}
	names := func(rel []Related) bool {
		return slices.ContainsFunc(rel, func(r Related) bool { return gone[store.IDKey(r.ID)] })
	}
	keep := func(rel []Related) []Related {
		return slices.DeleteFunc(slices.Clone(rel), func(r Related) bool { return gone[store.IDKey(r.ID)] })
	}
	var atoms []*Atom
	for key, a := range g.Atoms {
		if !gone[key] && names(a.Related) {
			atoms = append(atoms, a)
		}
	}
	slices.SortFunc(atoms, func(a, b *Atom) int { return strings.Compare(a.ID, b.ID) })
	var molecules []*Molecule
	for key, m := range g.Molecules {
		if !gone[key] && names(m.Related) {
			molecules = append(molecules, m)
		}
	}
	slices.SortFunc(molecules, func(a, b *Molecule) int { return strings.Compare(a.ID, b.ID) })
	for _, a := range atoms {
		n, err := g.fresh(a.ID)
		if err != nil {
			return err
		}
		a.Related = keep(a.Related)
		if p.LastTaskID != "" {
			a.LastTask = p.LastTaskID
		}
		if err := w.put2(n, WriteAtom(n, a)); err != nil {
			return err
		}
		res.Unlinked = append(res.Unlinked, a.ID)
	}
	for _, m := range molecules {
		n, err := g.fresh(m.ID)
		if err != nil {
			return err
		}
		m.Related = keep(m.Related)
		if p.LastTaskID != "" {
			m.LastTask = p.LastTaskID
		}
		if err := w.put2(n, WriteMolecule(n, m)); err != nil {
			return err
		}
		res.Unlinked = append(res.Unlinked, m.ID)
	}
	return nil
}

// view is the view of the atom or molecule written to leaf n, read back
// from it after the transaction set its version.
func (g *Graph) view(n *node.Node) (EntityView, error) {
	o := viewOpts{changelog: true, limit: DefaultChangelogLimit}
	if n.Type == TypeMolecule {
		m, err := MoleculeFromLeaf(n)
		if err != nil {
			return nil, err
		}
		g.Molecules[store.IDKey(m.ID)] = m
		return g.moleculeView(m, o), nil
	}
	a, err := AtomFromLeaf(n)
	if err != nil {
		return nil, err
	}
	g.Atoms[store.IDKey(a.ID)] = a
	return g.atomView(a, o), nil
}

// writes stages the leaves one operation changes in its transaction;
// nothing reaches the disk until the operation has succeeded as a whole.
type writes struct {
	tx *txn.Tx
}

// put2 stages leaf n unless err (from filling it) is set.
func (w *writes) put2(n *node.Node, err error) error {
	if err != nil {
		return err
	}
	return w.put(n)
}

// put validates leaf n and stages it.
func (w *writes) put(n *node.Node) error {
	if err := n.Validate(); err != nil {
		return err
	}
	w.tx.Put(n)
	return nil
}

// mutate runs fn in a store transaction on the graph read from the
// branch's index (synced under the writer lock); the transaction writes
// what fn staged, regenerates the index files, syncs the index and records
// the change.
func mutate(ctx context.Context, k *store.KB, projectID, tool string, fn func(g *Graph, w *writes) error) (*txn.Result, error) {
	return txn.Update(ctx, k, txn.Meta{Source: "graph", Command: tool}, func(tx *txn.Tx) error {
		cfg, err := tx.Config()
		if err != nil {
			return err
		}
		if err := CheckProjectID(k, cfg, projectID); err != nil {
			return err
		}
		db, err := tx.Index()
		if err != nil {
			return err
		}
		gen, err := db.Meta(ctx, "stat_gen")
		if err != nil {
			return err
		}
		t, err := templateFor(ctx, k, db, gen)
		if err != nil {
			return err
		}
		g := t.graph(k, db)
		g.tx = tx
		return fn(g, &writes{tx: tx})
	})
}
