package trace

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/graph"

	"github.com/kk-project/kk/internal/extract"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// Front matter keys of the traceability entities besides the graph's.
const (
	KeyTextRef = "kk_text_ref"
)

// Bounds of the traceability changesets. The JSON Schemas (struct tags in
// kbparams.go) repeat them for the agent's benefit; a test in
// internal/schema ties every one to its constant here.
const (
	MaxChangesetEntities = 1000
	MaxChangesetEdges    = 5000
	MaxDescriptionChars  = 1024
	MaxShortFieldChars   = 255 // title, owner, created_by
	MaxRefChars          = 512 // source, text_ref
	MaxCodeChars         = 64  // priority, severity, a tag, an edge kind
	MaxLinkChars         = 2048
	MaxLinks             = 50
	MaxTags              = 50
)

// TraceTypes are the entity types kb_upsert and kb_delete handle (seed
// 003). Atoms and molecules go through manage_graph.
var TraceTypes = []string{graph.TypeReq, graph.TypeScenario, graph.TypeTest, graph.TypeADR, graph.TypeFlag, graph.TypeEvent, graph.TypeSymbol}

// typeFolders are the folders under nodes/ new entities of each type go to.
var typeFolders = map[string]string{
	graph.TypeReq: "requirements", graph.TypeScenario: "scenarios", graph.TypeTest: "tests", graph.TypeADR: "adrs",
	graph.TypeFlag: "flags", graph.TypeEvent: "events", graph.TypeSymbol: "symbols",
}

// TypeFolder is the folder under nodes/ where kb_upsert creates entities of
// type typ when the changeset names none.
func TypeFolder(typ string) string { return typeFolders[typ] }

// UpsertResult is the data of kb_upsert.
type UpsertResult struct {
	Changeset string   `json:"changeset"`
	IDs       []string `json:"ids"`       // every entity of the changeset, in its order
	Created   []string `json:"created"`   // entities created
	Updated   []string `json:"updated"`   // entities whose leaf changed
	Unchanged []string `json:"unchanged"` // entities (and edge sources) already as asked
	Edges     int      `json:"edges"`     // edges added or changed
}

// DeleteEntitiesResult is the data of kb_delete.
type DeleteEntitiesResult struct {
	Changeset string   `json:"changeset"`
	Deleted   []string `json:"deleted"`        // entities removed
	Edges     int      `json:"edges"`          // edges removed, named or pointing at a deleted entity
	Updated   []string `json:"updated"`        // leaves that lost edges
	Paths     []string `json:"paths,omitzero"` // leaf files removed, relative to nodes/
}

// checkRef is the id a caller gave in field, trimmed and kept as given
// (ids are compared without regard to case wherever they are looked up):
// a VALIDATION_ERROR naming the field when it is blank or not an id
// (quoted, and cut when long, so that a megabyte sent as an id is not
// sent back).
func checkRef(field, id string) (string, *op.Error) {
	id = strings.TrimSpace(id)
	if id == "" {
		return "", op.Invalid(field, "is required")
	}
	if node.CheckID(id) != nil {
		return "", op.Invalid(field, "%s is not an id: an id is 1 to %d ASCII letters, digits, '-', '_' and '.', starting with a letter or a digit", op.Quote(id), node.MaxIDLen)
	}
	return id, nil
}

// oneLine checks a short free-text field.
func oneLine(field, s string, max int, required bool) *op.Error {
	switch {
	case strings.TrimSpace(s) == "" && required:
		return op.Invalid(field, "is required")
	case s != "" && strings.TrimSpace(s) == "":
		return op.Invalid(field, "is blank; give text, or leave the field out")
	case strings.ContainsAny(s, "\n\r\x00"):
		return op.Invalid(field, "must be one line")
	case !utf8.ValidString(s):
		return op.Invalid(field, "is not valid UTF-8")
	case utf8.RuneCountInString(s) > max:
		return op.Invalid(field, "is %d characters; the limit is %d", utf8.RuneCountInString(s), max)
	}
	return graph.CheckNoControl(field, s)
}

// checkChangeset checks what kb_upsert and kb_delete share but the
// project (which runTrace checks against the transaction's config): who
// applies the changeset and from where, and its size.
func checkChangeset(createdBy, source string, entities, edges int) *op.Error {
	if err := oneLine("created_by", createdBy, MaxShortFieldChars, true); err != nil {
		return err
	}
	if err := oneLine("source", source, MaxRefChars, true); err != nil {
		return err
	}
	switch {
	case entities == 0 && edges == 0:
		return op.Invalid("entities", "the changeset names no entity and no edge")
	case entities > MaxChangesetEntities:
		return op.Invalid("entities", "%d entities; a changeset holds at most %d", entities, MaxChangesetEntities)
	case edges > MaxChangesetEdges:
		return op.Invalid("edges", "%d edges; a changeset holds at most %d", edges, MaxChangesetEdges)
	}
	return nil
}

// entityIn is a validated changeset entity.
type entityIn struct {
	KBEntityIn
	field string // "entities[i]"
}

func validateEntity(i int, e KBEntityIn) (*entityIn, *op.Error) {
	f := fmt.Sprintf("entities[%d]", i)
	if !slices.Contains(TraceTypes, e.Type) {
		if e.Type == "" {
			return nil, op.Invalid(f+".type", "is required: one of %s", strings.Join(TraceTypes, ", "))
		}
		return nil, op.Invalid(f+".type", "%q is not a traceability type; use one of %s (atoms and molecules go through manage_graph)",
			e.Type, strings.Join(TraceTypes, ", "))
	}
	if strings.TrimSpace(e.ID) == "" {
		return nil, op.Invalid(f+".id", "is required")
	}
	id, err := extract.NormalizeID(e.Type, e.ID) // kept as given: REQ-7 stays REQ-7
	if err != nil {
		return nil, op.Invalid(f+".id", "%v", err)
	}
	e.ID = id
	if e.Title != "" {
		t, err := graph.ValidateName(f+".title", e.Title)
		if err != nil {
			return nil, err
		}
		e.Title = t
	}
	if e.Status != nil && !slices.Contains(node.Statuses, *e.Status) {
		return nil, op.Invalid(f+".status", "%q is not a status; use one of %s", *e.Status, strings.Join(node.Statuses, ", "))
	}
	for _, s := range []struct {
		name string
		v    *string
		max  int
	}{{"priority", e.Priority, MaxCodeChars}, {"severity", e.Severity, MaxCodeChars}, {"owner", e.Owner, MaxShortFieldChars}, {"text_ref", e.TextRef, MaxRefChars}, {"description", e.Description, MaxDescriptionChars}} {
		if s.v != nil {
			if err := oneLine(f+"."+s.name, *s.v, s.max, false); err != nil {
				return nil, err
			}
		}
	}
	if len(e.Tags) > MaxTags {
		return nil, op.Invalid(f+".tags", "%d tags; the limit is %d", len(e.Tags), MaxTags)
	}
	for j, t := range e.Tags {
		if err := oneLine(fmt.Sprintf("%s.tags[%d]", f, j), t, MaxCodeChars, true); err != nil {
			return nil, err
		}
		if strings.ContainsAny(t, " \t") {
			return nil, op.Invalid(fmt.Sprintf("%s.tags[%d]", f, j), "tag %q holds a space", t)
		}
	}
	if len(e.Links) > MaxLinks {
		return nil, op.Invalid(f+".links", "%d links; the limit is %d", len(e.Links), MaxLinks)
	}
	for j, l := range e.Links {
		if err := oneLine(fmt.Sprintf("%s.links[%d]", f, j), l, MaxLinkChars, true); err != nil {
			return nil, err
		}
	}
	if e.Body != nil {
		b, err := graph.ValidateKnowledge(f+".body", *e.Body)
		if err != nil {
			return nil, err
		}
		if msg := node.BodyFrontMatter(b); msg != "" {
			return nil, op.Invalid(f+".body", "%s", msg)
		}
		e.Body = &b
	}
	if e.Folder != "" {
		clean, err := node.CleanFolder(e.Folder)
		if err != nil {
			return nil, op.Invalid(f+".folder", "%v", err)
		}
		e.Folder = clean
	}
	if e.Version != nil && *e.Version < 1 {
		return nil, op.Invalid(f+".version", "must be 1 or more")
	}
	return &entityIn{KBEntityIn: e, field: f}, nil
}

func validateEdgeIn(i int, e KBEdgeIn) (KBEdgeIn, *op.Error) {
	f := fmt.Sprintf("edges[%d]", i)
	if _, known := graph.EdgeTable[e.Type]; !known {
		if e.Type == "" {
			return e, op.Invalid(f+".type", "is required: one of %s", strings.Join(graph.EdgeTypes(), ", "))
		}
		return e, op.Invalid(f+".type", "%q is not an edge type; use one of %s", e.Type, strings.Join(graph.EdgeTypes(), ", "))
	}
	for _, end := range []struct {
		name string
		v    *string
	}{{"from", &e.From}, {"to", &e.To}} {
		id, err := checkRef(f+"."+end.name, *end.v)
		if err != nil {
			return e, err
		}
		*end.v = id
	}
	if store.IDKey(e.From) == store.IDKey(e.To) {
		return e, op.New(op.CodeValidation, map[string]any{"field": f + ".to", "id": e.To, "type": e.Type},
			"%s.to: %s is the edge's source; an entity cannot have a %s edge to itself", f, e.To, e.Type)
	}
	if e.Type == "relates_to" {
		if err := oneLine(f+".kind", e.Kind, MaxCodeChars, true); err != nil {
			return e, op.New(op.CodeValidation, map[string]any{"field": f + ".kind"}, "%s.kind: a relates_to edge needs a kind saying how the two are related", f)
		}
	} else if e.Kind != "" {
		return e, op.Invalid(f+".kind", "only relates_to edges carry a kind")
	}
	if e.Confidence != nil && (*e.Confidence < 0 || *e.Confidence > 1) {
		return e, op.Invalid(f+".confidence", "must be between 0 and 1, not %v", *e.Confidence)
	}
	return e, nil
}

// traceTx is the state of one changeset in its store transaction: the
// tree, the branch's index, and the leaves the changeset edits.
type traceTx struct {
	ctx    context.Context
	k      *store.KB
	cfg    store.Config // config.yaml as the transaction read it
	tx     *txn.Tx
	tree   *store.Tree
	db     *index.DB
	edited map[string]*node.Node // by store.IDKey: the leaves read for writing
	ops    []index.AuditOp       // edge operations, recorded after the leaves'
}

// runTrace runs fn in a store transaction with the config, the tree and
// the branch's index read under the writer lock, once, after checking
// that projectID names this knowledge base; the transaction writes the
// leaves fn staged, regenerates the index files, brings the index in step
// and appends the audit record.
func runTrace(ctx context.Context, k *store.KB, projectID string, m txn.Meta, fn func(tx *traceTx) error) (*txn.Result, error) {
	return txn.Update(ctx, k, m, func(t *txn.Tx) error {
		cfg, err := t.Config()
		if err != nil {
			return err
		}
		if err := graph.CheckProjectID(k, cfg, projectID); err != nil {
			return err
		}
		tree, err := t.Tree()
		if err != nil {
			return err
		}
		db, err := t.Index()
		if err != nil {
			return err
		}
		tx := &traceTx{ctx: ctx, k: k, cfg: cfg, tx: t, tree: tree, db: db, edited: map[string]*node.Node{}}
		if err := fn(tx); err != nil {
			return err
		}
		for _, op := range tx.ops {
			t.Record(op)
		}
		return nil
	})
}

// leaf returns the writable leaf of tree entity id, reading it once.
func (tx *traceTx) leaf(id string) (*node.Node, error) {
	if n, ok := tx.edited[store.IDKey(id)]; ok {
		return n, nil
	}
	n, err := tx.tx.Leaf(id)
	if err != nil || n == nil {
		return nil, err
	}
	tx.edited[store.IDKey(id)] = n
	return n, nil
}

// stage validates the edited leaves of ids and stages them; the
// transaction writes those whose bytes change, with their versions raised.
func (tx *traceTx) stage(ids []string) error {
	for _, id := range ids {
		n := tx.edited[store.IDKey(id)]
		if err := n.Validate(); err != nil {
			return err
		}
		tx.tx.Put(n)
	}
	return nil
}

// changedIDs maps the ids a committed changeset created or updated (by
// store.IDKey) to their operation.
func changedIDs(res *txn.Result) map[string]string {
	out := map[string]string{}
	for _, op := range res.Ops {
		if op.Op == "create" || op.Op == "update" {
			out[store.IDKey(op.ID)] = op.Op
		}
	}
	return out
}

// endpointID is the id the entity named id (without regard to case)
// carries: in the changeset, the tree, or the index; id itself when none.
func (tx *traceTx) endpointID(id string, pending map[string]*entityIn, indexed map[string]*index.Entity) string {
	if e, ok := pending[store.IDKey(id)]; ok {
		return e.ID
	}
	if n, ok := tx.tree.ByID(id); ok {
		return n.ID
	}
	if e, ok := indexed[store.IDKey(id)]; ok {
		return e.ID
	}
	return id
}

// endpointType is the type of the entity id: from the changeset, the tree,
// or the index (extracted entities). "" when it does not exist.
func (tx *traceTx) endpointType(id string, pending map[string]*entityIn, indexed map[string]*index.Entity) string {
	if e, ok := pending[store.IDKey(id)]; ok {
		return e.Type
	}
	if n, ok := tx.tree.ByID(id); ok {
		return n.Type
	}
	if e, ok := indexed[store.IDKey(id)]; ok {
		return e.Type
	}
	return ""
}

// KBUpsert applies a changeset of entities and edges, all or nothing
// (kb_upsert): validate it, resolve what it names against the tree and the
// index under the writer lock, stage the leaves it changes, and report
// what the committed changeset did.
func KBUpsert(ctx context.Context, k *store.KB, p KBUpsertParams) (*UpsertResult, error) {
	u, err := validateUpsert(p)
	if err != nil {
		return nil, err
	}
	done, err := runTrace(ctx, k, p.ProjectID, txn.Meta{Actor: p.CreatedBy, Source: p.Source, Command: "kb_upsert"}, func(tx *traceTx) error {
		if err := u.resolve(tx); err != nil {
			return err
		}
		return u.stage(tx)
	})
	if err != nil {
		return nil, err
	}
	return u.record(done), nil
}

// upsert is one kb_upsert changeset on its way through the transaction.
type upsert struct {
	p       KBUpsertParams
	ents    []*entityIn
	pending map[string]*entityIn // the changeset's entities, by store.IDKey
	edges   []KBEdgeIn
	touched []string // the leaves staged: the entities, then edge sources
	res     *UpsertResult
}

// validateUpsert checks everything of a changeset that needs no tree: the
// shared fields, each entity and edge, and that no entity is named twice.
func validateUpsert(p KBUpsertParams) (*upsert, error) {
	if err := checkChangeset(p.CreatedBy, p.Source, len(p.Entities), len(p.Edges)); err != nil {
		return nil, err
	}
	u := &upsert{p: p, pending: map[string]*entityIn{}, edges: make([]KBEdgeIn, len(p.Edges)),
		res: &UpsertResult{IDs: []string{}, Created: []string{}, Updated: []string{}, Unchanged: []string{}}}
	for i, e := range p.Entities {
		v, err := validateEntity(i, e)
		if err != nil {
			return nil, err
		}
		if prev, dup := u.pending[store.IDKey(v.ID)]; dup {
			if prev.ID != v.ID {
				return nil, op.Invalid(v.field+".id", "%s differs only in case from %s (%s); ids are compared without regard to case, so they name one entity", v.ID, prev.ID, prev.field)
			}
			return nil, op.Invalid(v.field+".id", "%s is also %s; name each entity once per changeset", v.ID, prev.field)
		}
		u.pending[store.IDKey(v.ID)] = v
		u.ents = append(u.ents, v)
	}
	for i, e := range p.Edges {
		v, err := validateEdgeIn(i, e)
		if err != nil {
			return nil, err
		}
		u.edges[i] = v
	}
	return u, nil
}

// resolve checks the changeset against the tree and the index, before any
// leaf is touched. Edge ends are rewritten to name each entity as it names
// itself.
func (u *upsert) resolve(tx *traceTx) error {
	var refs []string
	for _, e := range u.edges {
		refs = append(refs, e.From, e.To)
	}
	for _, e := range u.ents {
		refs = append(refs, e.ID)
	}
	indexed, err := tx.db.EntitiesByID(tx.ctx, refs)
	if err != nil {
		return err
	}
	if err := u.resolveEntities(tx, indexed); err != nil {
		return err
	}
	return u.resolveEdges(tx, indexed)
}

// resolveEntities checks that each entity can be created or updated: its
// type does not change, an extracted entity is changed in its file, a
// versioned update names an existing entity, a new one has a title.
func (u *upsert) resolveEntities(tx *traceTx, indexed map[string]*index.Entity) error {
	for _, e := range u.ents {
		ro, exists := tx.tree.ByID(e.ID)
		ix := indexed[store.IDKey(e.ID)]
		switch {
		case exists && ro.Type != e.Type: // ids carry their type; only a hand-broken leaf gets here
			return op.New(op.CodeInvariant, map[string]any{"field": e.field + ".type", "id": e.ID, "type": ro.Type},
				"%s.type: %s is a %s; an entity's type cannot change", e.field, e.ID, ro.Type)
		case !exists && ix != nil && ix.Origin != "":
			return op.New(op.CodeValidation, map[string]any{"field": e.field + ".id", "id": e.ID, "origin": ix.Origin},
				"%s.id: %s is read from %s by an extractor; change that file instead", e.field, e.ID, ix.Origin)
		case !exists && e.Version != nil:
			return op.NotFound(e.Type, e.ID)
		case !exists && e.Title == "":
			return op.Invalid(e.field+".title", "is required to create %s", e.ID)
		}
	}
	return nil
}

// resolveEdges checks that each edge's ends exist (in the changeset, the
// tree or the index), that its source is a leaf of the tree or the
// changeset, and that the edge type connects their types.
func (u *upsert) resolveEdges(tx *traceTx, indexed map[string]*index.Entity) error {
	for i := range u.edges {
		e := &u.edges[i]
		f := fmt.Sprintf("edges[%d]", i)
		fromType := tx.endpointType(e.From, u.pending, indexed)
		toType := tx.endpointType(e.To, u.pending, indexed)
		// An edge end names the entity as the entity names itself.
		e.From, e.To = tx.endpointID(e.From, u.pending, indexed), tx.endpointID(e.To, u.pending, indexed)
		if fromType == "" {
			return op.New(op.CodeNotFound, map[string]any{"field": f + ".from", "id": e.From}, "%s.from: no entity with id %q", f, e.From)
		}
		if toType == "" {
			return op.New(op.CodeNotFound, map[string]any{"field": f + ".to", "id": e.To}, "%s.to: no entity with id %q", f, e.To)
		}
		if _, inTree := tx.tree.ByID(e.From); !inTree && u.pending[store.IDKey(e.From)] == nil {
			return op.New(op.CodeValidation, map[string]any{"field": f + ".from", "id": e.From, "origin": indexed[store.IDKey(e.From)].Origin},
				"%s.from: %s is read from %s by an extractor; declare its edges there", f, e.From, indexed[store.IDKey(e.From)].Origin)
		}
		if err := graph.CheckEdge(e.Type, fromType, toType, e.Kind); err != nil {
			err.Message = f + ": " + err.Message
			err.Details["field"] = f
			return err
		}
	}
	return nil
}

// stage writes the changeset into the leaves: the entities' fields (a new
// entity gets a new leaf; a versioned update is checked against the
// current version), then the edges on their sources; every leaf touched
// is staged.
func (u *upsert) stage(tx *traceTx) error {
	now := tx.tx.Timestamp()
	if err := u.stageEntities(tx, now); err != nil {
		return err
	}
	if err := u.stageEdges(tx, now); err != nil {
		return err
	}
	for _, e := range u.ents {
		u.res.IDs = append(u.res.IDs, tx.edited[store.IDKey(e.ID)].ID)
	}
	return tx.stage(u.touched)
}

func (u *upsert) stageEntities(tx *traceTx, now string) error {
	for _, e := range u.ents {
		n, err := tx.leaf(e.ID)
		if err != nil {
			return err
		}
		if n == nil {
			n = newEntityLeaf(e, u.p.Source, now)
			tx.edited[store.IDKey(e.ID)] = n
		} else if e.Version != nil {
			if err := tx.tx.Expect(n, *e.Version); err != nil {
				return err
			}
		}
		if err := applyEntity(n, e, u.p.Source); err != nil {
			return err
		}
	}
	for _, e := range u.ents {
		u.touched = append(u.touched, tx.edited[store.IDKey(e.ID)].ID)
	}
	return nil
}

func (u *upsert) stageEdges(tx *traceTx, now string) error {
	for _, e := range u.edges {
		n, err := tx.leaf(e.From)
		if err != nil {
			return err
		}
		changed, err := addEdge(n, e, u.p.CreatedBy, u.p.Source, now)
		if err != nil {
			return err
		}
		if changed {
			u.res.Edges++
			tx.ops = append(tx.ops, index.AuditOp{Op: "add_edge", ID: e.From, Type: e.Type, To: e.To})
		}
		if !slices.ContainsFunc(u.touched, func(id string) bool { return store.IDKey(id) == store.IDKey(n.ID) }) {
			u.touched = append(u.touched, n.ID)
		}
	}
	return nil
}

// record reports what the committed changeset did to each leaf it
// touched.
func (u *upsert) record(done *txn.Result) *UpsertResult {
	u.res.Changeset = done.Changeset
	changed := changedIDs(done)
	for _, id := range u.touched {
		switch changed[store.IDKey(id)] {
		case "create":
			u.res.Created = append(u.res.Created, id)
		case "update":
			u.res.Updated = append(u.res.Updated, id)
		default:
			u.res.Unchanged = append(u.res.Unchanged, id)
		}
	}
	return u.res
}

// newEntityLeaf starts the leaf of a new entity.
func newEntityLeaf(e *entityIn, source, now string) *node.Node {
	folder := e.Folder
	if folder == "" {
		folder = TypeFolder(e.Type)
	}
	rel := e.ID + ".md"
	if folder != "" {
		rel = folder + "/" + rel
	}
	n := &node.Node{Format: node.SchemaVersion, Path: rel, Type: e.Type, ID: e.ID, Title: e.Title,
		Tags: []string{}, DerivedFrom: []string{}, RelatesTo: []string{}, Confidence: "high", Status: "draft",
		Sources: []any{source}, Body: []byte("\n")}
	_ = n.SetExtra(graph.KeyVersion, int64(1))
	_ = n.SetExtra(graph.KeyCreatedAt, now)
	_ = n.SetExtra(graph.KeyUpdatedAt, now)
	return n
}

// applyEntity sets the fields the changeset gives on leaf n.
func applyEntity(n *node.Node, e *entityIn, source string) error {
	if e.Title != "" {
		n.Title = e.Title
	}
	if e.Description != nil {
		n.Description = *e.Description
	}
	if e.Status != nil {
		n.Status = *e.Status
	}
	if e.Tags != nil {
		n.Tags = slices.Compact(slices.Sorted(slices.Values(e.Tags)))
	}
	if e.Body != nil && graph.KnowledgeOf(n.Body) != *e.Body {
		n.Body = []byte("\n" + *e.Body + "\n")
	}
	for _, s := range []struct {
		key string
		v   *string
	}{{graph.KeyPriority, e.Priority}, {graph.KeySeverity, e.Severity}, {graph.KeyOwner, e.Owner}, {KeyTextRef, e.TextRef}} {
		if s.v == nil {
			continue
		}
		var err error
		if *s.v == "" {
			err = n.DeleteExtra(s.key)
		} else {
			err = n.SetExtra(s.key, *s.v)
		}
		if err != nil {
			return err
		}
	}
	if e.Links != nil {
		var err error
		if len(e.Links) == 0 {
			err = n.DeleteExtra(graph.KeyLinks)
		} else {
			err = n.SetExtra(graph.KeyLinks, e.Links)
		}
		if err != nil {
			return err
		}
	}
	return addSource(n, source)
}

// addSource records source in the leaf's OKF sources list (provenance),
// once.
func addSource(n *node.Node, source string) error {
	var list []any
	switch s := n.Sources.(type) {
	case nil:
	case []any:
		list = s
	case string:
		list = []any{s}
	default:
		return nil // a shape kk does not model: leave it as the author wrote it
	}
	for _, v := range list {
		if v == source {
			return nil
		}
	}
	n.Sources = append(slices.Clone(list), source)
	return nil
}

// leafEdges reads a leaf's kk_edges.
func leafEdges(n *node.Node) ([]graph.Edge, error) { return graph.EdgesOf(n) }

// addEdge adds e to the leaf n's kk_edges. An edge of the same type to the
// same entity (and kind) is kept, its confidence updated when given. It
// reports whether the leaf changed.
func addEdge(n *node.Node, e KBEdgeIn, by, source, now string) (bool, error) {
	list, err := leafEdges(n)
	if err != nil {
		return false, err
	}
	for i, old := range list {
		if old.Type == e.Type && old.To == e.To && old.Kind == e.Kind {
			if e.Confidence == nil || (old.Confidence != nil && *old.Confidence == *e.Confidence) {
				return false, nil
			}
			list[i].Confidence = e.Confidence
			return true, n.SetExtra(graph.KeyEdges, graph.EdgeValues(list))
		}
	}
	list = append(list, graph.Edge{Type: e.Type, To: e.To, Kind: e.Kind, CreatedAt: now, CreatedBy: by, Source: source, Confidence: e.Confidence})
	return true, n.SetExtra(graph.KeyEdges, graph.EdgeValues(list))
}

// removeEdges drops the leaf's edges drop selects and returns them.
func removeEdges(n *node.Node, drop func(graph.Edge) bool) ([]graph.Edge, error) {
	list, err := leafEdges(n)
	if err != nil {
		return nil, err
	}
	var kept, gone []graph.Edge
	for _, e := range list {
		if drop(e) {
			gone = append(gone, e)
		} else {
			kept = append(kept, e)
		}
	}
	switch {
	case len(gone) == 0:
		return nil, nil
	case len(kept) == 0:
		return gone, n.DeleteExtra(graph.KeyEdges)
	}
	return gone, n.SetExtra(graph.KeyEdges, graph.EdgeValues(kept))
}

// KBDelete removes entities and edges, all or nothing (kb_delete):
// validate the changeset, resolve the entities it names under the writer
// lock (checking who may delete them and their versions), stage the
// removals and the edges that go with them, and report what the committed
// changeset did.
func KBDelete(ctx context.Context, k *store.KB, p KBDeleteParams, o DeleteOptions) (*DeleteEntitiesResult, error) {
	d, err := validateDelete(p, o)
	if err != nil {
		return nil, err
	}
	done, err := runTrace(ctx, k, p.ProjectID, txn.Meta{Actor: p.CreatedBy, Source: p.Source, Command: "kb_delete"}, func(tx *traceTx) error {
		if err := d.resolve(tx); err != nil {
			return err
		}
		return d.stage(tx)
	})
	if err != nil {
		return nil, err
	}
	return d.record(done), nil
}

// deletion is one kb_delete changeset on its way through the transaction.
type deletion struct {
	o       DeleteOptions
	refs    []KBEntityRef
	edges   []KBEdgeRef
	deleted map[string]bool // the entities removed, by store.IDKey
	touched []string        // the leaves that lose edges
	res     *DeleteEntitiesResult
}

// validateDelete checks everything of a changeset that needs no tree: the
// shared fields, each entity named once (with its version when an agent
// deletes), each edge's type and ends.
func validateDelete(p KBDeleteParams, o DeleteOptions) (*deletion, error) {
	if err := checkChangeset(p.CreatedBy, p.Source, len(p.Entities), len(p.Edges)); err != nil {
		return nil, err
	}
	d := &deletion{o: o, refs: make([]KBEntityRef, len(p.Entities)), edges: make([]KBEdgeRef, len(p.Edges)),
		deleted: map[string]bool{}, res: &DeleteEntitiesResult{Deleted: []string{}, Updated: []string{}}}
	seen := map[string]int{} // entity index by store.IDKey
	for i, r := range p.Entities {
		f := fmt.Sprintf("entities[%d]", i)
		id, err := checkRef(f+".id", r.ID)
		if err != nil {
			return nil, err
		}
		r.ID = id
		if j, dup := seen[store.IDKey(id)]; dup {
			if prev := d.refs[j].ID; prev != id {
				return nil, op.Invalid(f+".id", "%s differs only in case from %s (entities[%d]); ids are compared without regard to case, so they name one entity", id, prev, j)
			}
			return nil, op.Invalid(f+".id", "%s is named twice (entities[%d])", id, j)
		}
		seen[store.IDKey(id)] = i
		if o.Agent && r.Version == nil {
			return nil, op.Invalid(f+".version", "is required: give the version you read (kb_query or kk_read) so a concurrent change is not lost")
		}
		d.refs[i] = r
	}
	for i, e := range p.Edges {
		f := fmt.Sprintf("edges[%d]", i)
		if e.Type == "" {
			return nil, op.Invalid(f+".type", "is required")
		}
		var err *op.Error
		if e.From, err = checkRef(f+".from", e.From); err != nil {
			return nil, err
		}
		if e.To, err = checkRef(f+".to", e.To); err != nil {
			return nil, err
		}
		d.edges[i] = e
	}
	return d, nil
}

// resolve finds each entity to delete in the tree and checks that it may
// be deleted: a traceability entity of the tree (an extracted one is
// removed in its file), of a type the agent may delete, at the version
// the caller read.
func (d *deletion) resolve(tx *traceTx) error {
	for i, r := range d.refs {
		f := fmt.Sprintf("entities[%d]", i)
		ro, ok := tx.tree.ByID(r.ID)
		if !ok {
			if ents, err := tx.db.EntitiesByID(tx.ctx, []string{r.ID}); err == nil && ents[store.IDKey(r.ID)] != nil {
				origin := ents[store.IDKey(r.ID)].Origin
				return op.New(op.CodeValidation, map[string]any{"field": f + ".id", "id": r.ID, "origin": origin},
					"%s.id: %s is read from %s by an extractor; remove it there", f, r.ID, origin)
			}
			return op.New(op.CodeNotFound, map[string]any{"field": f + ".id", "id": r.ID}, "%s.id: no entity with id %q", f, r.ID)
		}
		if !slices.Contains(TraceTypes, ro.Type) {
			e := op.Invalid(f+".id", "%s is a %s; kb_delete removes %s entities (atoms and molecules go through manage_graph)",
				ro.ID, ro.Type, strings.Join(TraceTypes, ", "))
			if !d.o.Agent && !graph.IsMolecule(ro) && !graph.IsAtom(ro) {
				// a person at the command line: the note's own command
				e.Message += fmt.Sprintf("; a note is deleted with kk node delete %s", ro.ID)
			}
			return e
		}
		if d.o.Agent && !tx.cfg.AgentMayDelete(ro.Type) {
			return op.New(op.CodeValidation, map[string]any{"field": f + ".id", "id": ro.ID, "type": ro.Type},
				"%s.id: agents may not delete %s entities (config traceability.agentDeletableTypes); ask a person to run kk delete", f, ro.Type)
		}
		n, err := tx.leaf(r.ID)
		if err != nil {
			return err
		}
		if r.Version != nil {
			if err := tx.tx.Expect(n, *r.Version); err != nil {
				return err
			}
		}
		d.deleted[store.IDKey(r.ID)] = true
	}
	return nil
}

// stage removes the named edges and the edges pointing at a deleted
// entity from their sources, stages those leaves, and stages the removal
// of the deleted entities' leaves.
func (d *deletion) stage(tx *traceTx) error {
	if err := d.stageNamedEdges(tx); err != nil {
		return err
	}
	if err := d.stageDanglingEdges(tx); err != nil {
		return err
	}
	if err := tx.stage(d.touched); err != nil {
		return err
	}
	for _, r := range d.refs {
		n := tx.edited[store.IDKey(r.ID)]
		if err := tx.tx.Remove(n); err != nil {
			return err
		}
		d.res.Deleted = append(d.res.Deleted, n.ID)
		d.res.Paths = append(d.res.Paths, n.Path)
	}
	return nil
}

// touch adds id to the leaves that lose edges, once.
func (d *deletion) touch(id string) {
	if !slices.ContainsFunc(d.touched, func(t string) bool { return store.IDKey(t) == store.IDKey(id) }) {
		d.touched = append(d.touched, id)
	}
}

// stageNamedEdges removes the edges the changeset names, but those of a
// deleted entity (which go with it).
func (d *deletion) stageNamedEdges(tx *traceTx) error {
	for i, e := range d.edges {
		f := fmt.Sprintf("edges[%d]", i)
		if d.deleted[store.IDKey(e.From)] {
			continue // goes with its entity
		}
		n, err := tx.leaf(e.From)
		if err != nil {
			return err
		}
		_, known := graph.EdgeTable[e.Type]
		if n == nil {
			if !known {
				return unknownEdgeType(f, e.Type)
			}
			return op.New(op.CodeNotFound, map[string]any{"field": f + ".from", "id": e.From}, "%s.from: no entity with id %q in the tree", f, e.From)
		}
		removed, err := removeEdges(n, func(x graph.Edge) bool { return x.Type == e.Type && store.IDKey(x.To) == store.IDKey(e.To) })
		if err != nil {
			return err
		}
		if len(removed) == 0 {
			if !known {
				// An edge of a type kk does not know is removed when a
				// hand edit wrote one; otherwise the type is the mistake.
				return unknownEdgeType(f, e.Type)
			}
			return op.New(op.CodeNotFound, map[string]any{"field": f, "from": e.From, "type": e.Type, "to": e.To},
				"%s: %s has no %s edge to %s", f, n.ID, e.Type, e.To)
		}
		d.res.Edges += len(removed)
		for _, x := range removed {
			tx.ops = append(tx.ops, index.AuditOp{Op: "delete_edge", ID: n.ID, Type: x.Type, To: x.To})
		}
		d.touch(n.ID)
	}
	return nil
}

// unknownEdgeType is the error of an edge to delete whose type is none of
// the edge table's, naming the field and the types there are.
func unknownEdgeType(f, typ string) *op.Error {
	return op.New(op.CodeValidation, map[string]any{"field": f + ".type", "type": typ, "types": graph.EdgeTypes()},
		"%s.type: %s is not an edge type; use one of %s", f, op.Quote(typ), strings.Join(graph.EdgeTypes(), ", "))
}

// stageDanglingEdges removes the edges elsewhere in the tree that point at
// a deleted entity.
func (d *deletion) stageDanglingEdges(tx *traceTx) error {
	if len(d.deleted) == 0 {
		return nil
	}
	all, err := tx.db.Edges(tx.ctx)
	if err != nil {
		return err
	}
	for _, ed := range all {
		if !d.deleted[store.IDKey(ed.To)] || d.deleted[store.IDKey(ed.From)] {
			continue
		}
		if _, inTree := tx.tree.ByID(ed.From); !inTree {
			continue
		}
		n, err := tx.leaf(ed.From)
		if err != nil {
			return err
		}
		removed, err := removeEdges(n, func(x graph.Edge) bool { return d.deleted[store.IDKey(x.To)] })
		if err != nil {
			return err
		}
		for _, x := range removed {
			d.res.Edges++
			tx.ops = append(tx.ops, index.AuditOp{Op: "delete_edge", ID: n.ID, Type: x.Type, To: x.To})
		}
		if len(removed) > 0 {
			d.touch(n.ID)
		}
	}
	return nil
}

// record reports which leaves that lost edges the committed changeset
// changed.
func (d *deletion) record(done *txn.Result) *DeleteEntitiesResult {
	d.res.Changeset = done.Changeset
	changed := changedIDs(done)
	for _, id := range d.touched {
		if changed[store.IDKey(id)] != "" {
			d.res.Updated = append(d.res.Updated, id)
		}
	}
	return d.res
}
