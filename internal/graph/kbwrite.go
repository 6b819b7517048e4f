package graph

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/extract"
	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/indexfiles"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
)

// Front matter keys of the traceability entities besides the graph's.
const (
	KeyTextRef = "kk_text_ref"
)

// Bounds of the traceability changesets.
const (
	MaxChangesetEntities = 1000
	MaxChangesetEdges    = 5000
	MaxDescriptionChars  = 1024
	MaxShortFieldChars   = 255
	MaxLinks             = 50
	MaxTags              = 50
)

// TraceTypes are the entity types kb_upsert and kb_delete handle (seed
// 003). Atoms and molecules go through manage_graph.
var TraceTypes = []string{TypeReq, TypeScenario, TypeTest, TypeADR, TypeFlag, TypeEvent, TypeSymbol}

// typeFolders are the folders under nodes/ new entities of each type go to.
var typeFolders = map[string]string{
	TypeReq: "requirements", TypeScenario: "scenarios", TypeTest: "tests", TypeADR: "adrs",
	TypeFlag: "flags", TypeEvent: "events", TypeSymbol: "symbols",
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

// KBUpsert runs kb_upsert: it validates the whole changeset (shape, bounds,
// types, edge endpoint types, referential integrity against the changeset
// and the branch's index), then, under the writer lock, writes every
// entity and edge, updates the index and appends an audit record. Nothing
// is written when any part is invalid.
func KBUpsert(ctx context.Context, k *store.KB, p KBUpsertParams) Response {
	data, err := kbUpsert(ctx, k, p)
	if err != nil {
		return fail(err)
	}
	return ok(data)
}

// KBUpsertJSON decodes the parameter object strictly and runs KBUpsert.
func KBUpsertJSON(ctx context.Context, k *store.KB, raw []byte) Response {
	var p KBUpsertParams
	if err := decodeStrict(raw, &p); err != nil {
		return fail(err)
	}
	return KBUpsert(ctx, k, p)
}

// KBDelete runs kb_delete: it removes entities (with the edges pointing at
// them) and edges, all-or-nothing, and appends an audit record.
func KBDelete(ctx context.Context, k *store.KB, p KBDeleteParams, o DeleteOptions) Response {
	data, err := kbDelete(ctx, k, p, o)
	if err != nil {
		return fail(err)
	}
	return ok(data)
}

// KBDeleteJSON decodes the parameter object strictly and runs KBDelete.
func KBDeleteJSON(ctx context.Context, k *store.KB, raw []byte, o DeleteOptions) Response {
	var p KBDeleteParams
	if err := decodeStrict(raw, &p); err != nil {
		return fail(err)
	}
	return KBDelete(ctx, k, p, o)
}

// normalizeRef turns an id whose type is not known into kk form ("REQ-7" →
// req-7): lowercase, punctuation runs as one dash. An id without a letter
// or digit gives "".
func normalizeRef(id string) string {
	if !strings.ContainsFunc(id, func(r rune) bool { return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' }) {
		return ""
	}
	return node.Slugify(id)
}

// oneLine checks a short free-text field.
func oneLine(field, s string, max int, required bool) *Error {
	switch {
	case strings.TrimSpace(s) == "" && required:
		return invalid(field, "is required")
	case strings.ContainsAny(s, "\n\r\x00"):
		return invalid(field, "must be one line")
	case !utf8.ValidString(s):
		return invalid(field, "is not valid UTF-8")
	case utf8.RuneCountInString(s) > max:
		return invalid(field, "is %d characters; the limit is %d", utf8.RuneCountInString(s), max)
	}
	return nil
}

// checkChangeset checks what kb_upsert and kb_delete share: the project,
// who applies the changeset and from where, and its size.
func checkChangeset(k *store.KB, projectID, createdBy, source string, entities, edges int) *Error {
	if err := ValidateProjectID(k, projectID); err != nil {
		return err
	}
	if err := oneLine("created_by", createdBy, MaxShortFieldChars, true); err != nil {
		return err
	}
	if err := oneLine("source", source, 512, true); err != nil {
		return err
	}
	switch {
	case entities == 0 && edges == 0:
		return invalid("entities", "the changeset names no entity and no edge")
	case entities > MaxChangesetEntities:
		return invalid("entities", "%d entities; a changeset holds at most %d", entities, MaxChangesetEntities)
	case edges > MaxChangesetEdges:
		return invalid("edges", "%d edges; a changeset holds at most %d", edges, MaxChangesetEdges)
	}
	return nil
}

// entityIn is a validated changeset entity.
type entityIn struct {
	KBEntityIn
	field string // "entities[i]"
}

func validateEntity(i int, e KBEntityIn) (*entityIn, *Error) {
	f := fmt.Sprintf("entities[%d]", i)
	if !slices.Contains(TraceTypes, e.Type) {
		if e.Type == "" {
			return nil, invalid(f+".type", "is required: one of %s", strings.Join(TraceTypes, ", "))
		}
		return nil, invalid(f+".type", "%q is not a traceability type; use one of %s (atoms and molecules go through manage_graph)",
			e.Type, strings.Join(TraceTypes, ", "))
	}
	if strings.TrimSpace(e.ID) == "" {
		return nil, invalid(f+".id", "is required")
	}
	id, err := extract.NormalizeID(e.Type, e.ID) // the extractors' rule: REQ-7 is req-7, login is req-login
	if err != nil {
		return nil, invalid(f+".id", "%v", err)
	}
	e.ID = id
	if e.Title != "" {
		t, err := ValidateName(f+".title", e.Title)
		if err != nil {
			return nil, err
		}
		e.Title = t
	}
	if e.Status != nil && !slices.Contains(node.Statuses, *e.Status) {
		return nil, invalid(f+".status", "%q is not a status; use one of %s", *e.Status, strings.Join(node.Statuses, ", "))
	}
	for _, s := range []struct {
		name string
		v    *string
		max  int
	}{{"priority", e.Priority, 64}, {"severity", e.Severity, 64}, {"owner", e.Owner, MaxShortFieldChars}, {"text_ref", e.TextRef, 512}, {"description", e.Description, MaxDescriptionChars}} {
		if s.v != nil {
			if err := oneLine(f+"."+s.name, *s.v, s.max, false); err != nil {
				return nil, err
			}
		}
	}
	if len(e.Tags) > MaxTags {
		return nil, invalid(f+".tags", "%d tags; the limit is %d", len(e.Tags), MaxTags)
	}
	for j, t := range e.Tags {
		if err := oneLine(fmt.Sprintf("%s.tags[%d]", f, j), t, 64, true); err != nil {
			return nil, err
		}
		if strings.ContainsAny(t, " \t") {
			return nil, invalid(fmt.Sprintf("%s.tags[%d]", f, j), "tag %q holds a space", t)
		}
	}
	if len(e.Links) > MaxLinks {
		return nil, invalid(f+".links", "%d links; the limit is %d", len(e.Links), MaxLinks)
	}
	for j, l := range e.Links {
		if err := oneLine(fmt.Sprintf("%s.links[%d]", f, j), l, 2048, true); err != nil {
			return nil, err
		}
	}
	if e.Body != nil {
		b, err := ValidateKnowledge(f+".body", *e.Body)
		if err != nil {
			return nil, err
		}
		e.Body = &b
	}
	if e.Folder != "" {
		clean, err := node.CleanFolder(e.Folder)
		if err != nil {
			return nil, invalid(f+".folder", "%v", err)
		}
		e.Folder = clean
	}
	if e.Version != nil && *e.Version < 1 {
		return nil, invalid(f+".version", "must be 1 or more")
	}
	return &entityIn{KBEntityIn: e, field: f}, nil
}

func validateEdgeIn(i int, e KBEdgeIn) (KBEdgeIn, *Error) {
	f := fmt.Sprintf("edges[%d]", i)
	if _, known := EdgeTable[e.Type]; !known {
		if e.Type == "" {
			return e, invalid(f+".type", "is required: one of %s", strings.Join(EdgeTypes(), ", "))
		}
		return e, invalid(f+".type", "%q is not an edge type; use one of %s", e.Type, strings.Join(EdgeTypes(), ", "))
	}
	for _, end := range []struct {
		name string
		v    *string
	}{{"from", &e.From}, {"to", &e.To}} {
		if strings.TrimSpace(*end.v) == "" {
			return e, invalid(f+"."+end.name, "is required")
		}
		if *end.v = normalizeRef(*end.v); *end.v == "" {
			return e, invalid(f+"."+end.name, "holds no letter or digit")
		}
	}
	if e.Type == "relates_to" {
		if err := oneLine(f+".kind", e.Kind, 64, true); err != nil {
			return e, newError(CodeValidation, map[string]any{"field": f + ".kind"}, "%s.kind: a relates_to edge needs a kind saying how the two are related", f)
		}
	} else if e.Kind != "" {
		return e, invalid(f+".kind", "only relates_to edges carry a kind")
	}
	if e.Confidence != nil && (*e.Confidence < 0 || *e.Confidence > 1) {
		return e, invalid(f+".confidence", "must be between 0 and 1, not %v", *e.Confidence)
	}
	return e, nil
}

// newChangesetID names one changeset: the time and 8 random hex digits.
func newChangesetID(k *store.KB) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	stamp := strings.NewReplacer("-", "", ":", "").Replace(timestamp(k))
	return "cs-" + stamp + "-" + hex.EncodeToString(b[:])
}

// traceTx is the state of one changeset under the writer lock: the tree,
// the branch's index, and the leaves the changeset edits.
type traceTx struct {
	ctx    context.Context
	k      *store.KB
	tree   *store.Tree
	db     *index.DB
	branch string
	w      *writes
	edited map[string]*node.Node // id -> writable leaf
	orig   map[string][]byte     // path -> bytes before the changeset
	ops    []index.AuditOp
}

// runTrace runs fn under the writer lock with the tree read and the
// branch's index synced, then writes what fn collected, regenerates the
// index files, syncs the index and appends the audit record.
func runTrace(ctx context.Context, k *store.KB, cmd string, rec index.AuditRecord, fn func(tx *traceTx) error) error {
	return k.WithLock(ctx, cmd, func() error {
		t, err := k.ReadTree(store.LoadOptions{})
		if err != nil {
			return err
		}
		branch, err := index.CurrentBranch(ctx, k)
		if err != nil {
			return err
		}
		db, err := index.OpenShared(ctx, k, branch)
		if err != nil {
			return err
		}
		if err := syncIndex(ctx, k, db); err != nil {
			return err
		}
		leaves := map[string]*node.Node{}
		w, err := newWrites(k, t, leaves)
		if err != nil {
			return err
		}
		tx := &traceTx{ctx: ctx, k: k, tree: t, db: db, branch: branch, w: w, edited: leaves, orig: map[string][]byte{}}
		if err := fn(tx); err != nil {
			return err
		}
		if err := w.flush(); err != nil {
			return err
		}
		if len(w.order)+len(w.removed) > 0 {
			if _, err := indexfiles.RebuildLocked(ctx, k, indexfiles.RebuildOptions{Command: cmd}); err != nil {
				return err
			}
			if err := syncIndex(ctx, k, db); err != nil {
				return err
			}
		}
		rec.Branch = branch
		rec.At = timestamp(k)
		rec.Ops = tx.ops
		if rec.Ops == nil {
			rec.Ops = []index.AuditOp{}
		}
		return index.AppendAudit(k, branch, rec)
	})
}

// leaf returns the writable leaf of tree entity id, reading it once.
func (tx *traceTx) leaf(id string) (*node.Node, error) {
	if n, ok := tx.edited[id]; ok {
		return n, nil
	}
	ro, ok := tx.tree.ByID(id)
	if !ok {
		return nil, nil
	}
	src, err := os.ReadFile(tx.k.NodePath(ro.Path))
	if err != nil {
		return nil, err
	}
	n, err := node.Parse(ro.Path, src)
	if err != nil {
		return nil, err
	}
	tx.edited[id], tx.orig[n.Path] = n, src
	return n, nil
}

// version is a leaf's kk_version (1 when absent).
func version(n *node.Node) int64 {
	if v, ok := n.Extra(KeyVersion); ok {
		if i, ok := v.(int64); ok && i >= 1 {
			return i
		}
	}
	return 1
}

// commit renders every edited leaf; a leaf whose bytes changed gets its
// version raised and kk_updated_at set, and is queued for writing. It
// returns which ids changed.
func (tx *traceTx) commit(ids []string) (changed map[string]bool, err error) {
	changed = map[string]bool{}
	now := timestamp(tx.k)
	for _, id := range ids {
		n := tx.edited[id]
		data, err := n.Render(tx.w.resolveWith())
		if err != nil {
			return nil, err
		}
		if orig, had := tx.orig[n.Path]; had && string(orig) == string(data) {
			continue
		}
		before := int64(0)
		if _, had := tx.orig[n.Path]; had {
			before = version(n)
			if err := n.SetExtra(KeyVersion, before+1); err != nil {
				return nil, err
			}
			if err := n.SetExtra(KeyUpdatedAt, now); err != nil {
				return nil, err
			}
		}
		if err := tx.w.put(n); err != nil {
			return nil, err
		}
		changed[id] = true
		op := index.AuditOp{Op: "update", ID: id, Type: n.Type, Path: n.Path, Before: before, After: version(n)}
		if before == 0 {
			op.Op = "create"
		}
		tx.ops = append(tx.ops, op)
	}
	return changed, nil
}

// resolveWith resolves links against the leaves being written first.
func (w *writes) resolveWith() node.Resolver {
	return func(id string) (string, bool) {
		if other, ok := w.leaves[id]; ok {
			return other.Path, true
		}
		return w.resolve(id)
	}
}

// endpointType is the type of the entity id: from the changeset, the tree,
// or the index (extracted entities). "" when it does not exist.
func (tx *traceTx) endpointType(id string, pending map[string]*entityIn, indexed map[string]*index.Entity) string {
	if e, ok := pending[id]; ok {
		return e.Type
	}
	if n, ok := tx.tree.ByID(id); ok {
		return n.Type
	}
	if e, ok := indexed[id]; ok {
		return e.Type
	}
	return ""
}

func kbUpsert(ctx context.Context, k *store.KB, p KBUpsertParams) (*UpsertResult, error) {
	if err := checkChangeset(k, p.ProjectID, p.CreatedBy, p.Source, len(p.Entities), len(p.Edges)); err != nil {
		return nil, err
	}
	var ents []*entityIn
	pending := map[string]*entityIn{}
	for i, e := range p.Entities {
		v, err := validateEntity(i, e)
		if err != nil {
			return nil, err
		}
		if prev, dup := pending[v.ID]; dup {
			return nil, invalid(v.field+".id", "%s is also %s; name each entity once per changeset", v.ID, prev.field)
		}
		pending[v.ID] = v
		ents = append(ents, v)
	}
	edges := make([]KBEdgeIn, len(p.Edges))
	for i, e := range p.Edges {
		v, err := validateEdgeIn(i, e)
		if err != nil {
			return nil, err
		}
		edges[i] = v
	}
	cs := newChangesetID(k)
	res := &UpsertResult{Changeset: cs, IDs: []string{}, Created: []string{}, Updated: []string{}, Unchanged: []string{}}
	rec := index.AuditRecord{Changeset: cs, Actor: p.CreatedBy, Source: p.Source}
	err := runTrace(ctx, k, "upsert", rec, func(tx *traceTx) error {
		var refs []string
		for _, e := range edges {
			refs = append(refs, e.From, e.To)
		}
		for _, e := range ents {
			refs = append(refs, e.ID)
		}
		indexed, err := tx.db.EntitiesByID(ctx, refs)
		if err != nil {
			return err
		}
		// Entities first: every check before any leaf is touched.
		for _, e := range ents {
			ro, exists := tx.tree.ByID(e.ID)
			switch {
			case exists && ro.Type != e.Type: // ids carry their type; only a hand-broken leaf gets here
				return newError(CodeInvariant, map[string]any{"field": e.field + ".type", "id": e.ID, "type": ro.Type},
					"%s.type: %s is a %s; an entity's type cannot change", e.field, e.ID, ro.Type)
			case !exists && indexed[e.ID] != nil && indexed[e.ID].Origin != "":
				return newError(CodeValidation, map[string]any{"field": e.field + ".id", "id": e.ID, "origin": indexed[e.ID].Origin},
					"%s.id: %s is read from %s by an extractor; change that file instead", e.field, e.ID, indexed[e.ID].Origin)
			case !exists && e.Version != nil:
				return notFound(e.Type, e.ID)
			case !exists && e.Title == "":
				return invalid(e.field+".title", "is required to create %s", e.ID)
			}
		}
		for i, e := range edges {
			f := fmt.Sprintf("edges[%d]", i)
			fromType := tx.endpointType(e.From, pending, indexed)
			toType := tx.endpointType(e.To, pending, indexed)
			if fromType == "" {
				return newError(CodeNotFound, map[string]any{"field": f + ".from", "id": e.From}, "%s.from: no entity with id %q", f, e.From)
			}
			if toType == "" {
				return newError(CodeNotFound, map[string]any{"field": f + ".to", "id": e.To}, "%s.to: no entity with id %q", f, e.To)
			}
			if _, inTree := tx.tree.ByID(e.From); !inTree && pending[e.From] == nil {
				return newError(CodeValidation, map[string]any{"field": f + ".from", "id": e.From, "origin": indexed[e.From].Origin},
					"%s.from: %s is read from %s by an extractor; declare its edges there", f, e.From, indexed[e.From].Origin)
			}
			if err := CheckEdge(e.Type, fromType, toType, e.Kind); err != nil {
				err.Message = f + ": " + err.Message
				err.Details["field"] = f
				return err
			}
		}
		now := timestamp(k)
		for _, e := range ents {
			n, err := tx.leaf(e.ID)
			if err != nil {
				return err
			}
			if n == nil {
				n = newEntityLeaf(e, p.Source, now)
				tx.edited[e.ID] = n
			} else if e.Version != nil && version(n) != *e.Version {
				return conflict(e.Type, e.ID, *e.Version, version(n))
			}
			if err := applyEntity(n, e, p.Source); err != nil {
				return err
			}
		}
		touched := make([]string, 0, len(ents))
		for _, e := range ents {
			touched = append(touched, e.ID)
		}
		for _, e := range edges {
			n, err := tx.leaf(e.From)
			if err != nil {
				return err
			}
			changed, err := addEdge(n, e, p.CreatedBy, p.Source, now)
			if err != nil {
				return err
			}
			if changed {
				res.Edges++
				tx.ops = append(tx.ops, index.AuditOp{Op: "add_edge", ID: e.From, Type: e.Type, To: e.To})
			}
			if !slices.Contains(touched, e.From) {
				touched = append(touched, e.From)
			}
		}
		edgeOps := tx.ops
		tx.ops = nil
		changed, err := tx.commit(touched)
		if err != nil {
			return err
		}
		tx.ops = append(tx.ops, edgeOps...)
		for _, e := range ents {
			res.IDs = append(res.IDs, e.ID)
		}
		for _, id := range touched {
			switch {
			case !changed[id]:
				res.Unchanged = append(res.Unchanged, id)
			case tx.orig[tx.edited[id].Path] == nil:
				res.Created = append(res.Created, id)
			default:
				res.Updated = append(res.Updated, id)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
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
	_ = n.SetExtra(KeyVersion, int64(1))
	_ = n.SetExtra(KeyCreatedAt, now)
	_ = n.SetExtra(KeyUpdatedAt, now)
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
	if e.Body != nil && KnowledgeOf(n.Body) != *e.Body {
		n.Body = []byte("\n" + *e.Body + "\n")
	}
	for _, s := range []struct {
		key string
		v   *string
	}{{KeyPriority, e.Priority}, {KeySeverity, e.Severity}, {KeyOwner, e.Owner}, {KeyTextRef, e.TextRef}} {
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
			err = n.DeleteExtra(KeyLinks)
		} else {
			err = n.SetExtra(KeyLinks, e.Links)
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
func leafEdges(n *node.Node) ([]Edge, error) {
	r := leafReader(n)
	e := r.entity(n.ID, n.Type, n.Title, nil)
	return e.Edges, r.err
}

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
			return true, n.SetExtra(KeyEdges, edgeValues(list))
		}
	}
	list = append(list, Edge{Type: e.Type, To: e.To, Kind: e.Kind, CreatedAt: now, CreatedBy: by, Source: source, Confidence: e.Confidence})
	return true, n.SetExtra(KeyEdges, edgeValues(list))
}

// removeEdges drops the leaf's edges drop selects and returns them.
func removeEdges(n *node.Node, drop func(Edge) bool) ([]Edge, error) {
	list, err := leafEdges(n)
	if err != nil {
		return nil, err
	}
	var kept, gone []Edge
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
		return gone, n.DeleteExtra(KeyEdges)
	}
	return gone, n.SetExtra(KeyEdges, edgeValues(kept))
}

func kbDelete(ctx context.Context, k *store.KB, p KBDeleteParams, o DeleteOptions) (*DeleteEntitiesResult, error) {
	if err := checkChangeset(k, p.ProjectID, p.CreatedBy, p.Source, len(p.Entities), len(p.Edges)); err != nil {
		return nil, err
	}
	cfg, err := k.LoadConfig()
	if err != nil {
		return nil, err
	}
	refs := make([]KBEntityRef, len(p.Entities))
	seen := map[string]bool{}
	for i, r := range p.Entities {
		f := fmt.Sprintf("entities[%d]", i)
		if r.ID = normalizeRef(r.ID); r.ID == "" {
			return nil, invalid(f+".id", "is required")
		}
		if seen[r.ID] {
			return nil, invalid(f+".id", "%s is named twice", r.ID)
		}
		seen[r.ID] = true
		if o.Agent && r.Version == nil {
			return nil, invalid(f+".version", "is required: give the version you read (kb_query or kk_read) so a concurrent change is not lost")
		}
		refs[i] = r
	}
	edgeRefs := make([]KBEdgeRef, len(p.Edges))
	for i, e := range p.Edges {
		f := fmt.Sprintf("edges[%d]", i)
		if e.Type == "" {
			return nil, invalid(f+".type", "is required")
		}
		if e.From = normalizeRef(e.From); e.From == "" {
			return nil, invalid(f+".from", "is required")
		}
		if e.To = normalizeRef(e.To); e.To == "" {
			return nil, invalid(f+".to", "is required")
		}
		edgeRefs[i] = e
	}
	cs := newChangesetID(k)
	res := &DeleteEntitiesResult{Changeset: cs, Deleted: []string{}, Updated: []string{}}
	rec := index.AuditRecord{Changeset: cs, Actor: p.CreatedBy, Source: p.Source}
	err = runTrace(ctx, k, "delete", rec, func(tx *traceTx) error {
		deleted := map[string]bool{}
		for i, r := range refs {
			f := fmt.Sprintf("entities[%d]", i)
			ro, ok := tx.tree.ByID(r.ID)
			if !ok {
				if ents, err := tx.db.EntitiesByID(ctx, []string{r.ID}); err == nil && ents[r.ID] != nil {
					return newError(CodeValidation, map[string]any{"field": f + ".id", "id": r.ID, "origin": ents[r.ID].Origin},
						"%s.id: %s is read from %s by an extractor; remove it there", f, r.ID, ents[r.ID].Origin)
				}
				return newError(CodeNotFound, map[string]any{"field": f + ".id", "id": r.ID}, "%s.id: no entity with id %q", f, r.ID)
			}
			if !slices.Contains(TraceTypes, ro.Type) {
				return invalid(f+".id", "%s is a %s; kb_delete removes %s entities (atoms and molecules go through manage_graph)",
					r.ID, ro.Type, strings.Join(TraceTypes, ", "))
			}
			if o.Agent && !cfg.AgentMayDelete(ro.Type) {
				return newError(CodeValidation, map[string]any{"field": f + ".id", "id": r.ID, "type": ro.Type},
					"%s.id: agents may not delete %s entities (config traceability.agentDeletableTypes); ask a person to run kk delete", f, ro.Type)
			}
			n, err := tx.leaf(r.ID)
			if err != nil {
				return err
			}
			if r.Version != nil && version(n) != *r.Version {
				return conflict(ro.Type, r.ID, *r.Version, version(n))
			}
			deleted[r.ID] = true
		}
		var touched []string
		for i, e := range edgeRefs {
			f := fmt.Sprintf("edges[%d]", i)
			if deleted[e.From] {
				continue // goes with its entity
			}
			n, err := tx.leaf(e.From)
			if err != nil {
				return err
			}
			if n == nil {
				return newError(CodeNotFound, map[string]any{"field": f + ".from", "id": e.From}, "%s.from: no entity with id %q in the tree", f, e.From)
			}
			removed, err := removeEdges(n, func(x Edge) bool { return x.Type == e.Type && x.To == e.To })
			if err != nil {
				return err
			}
			if len(removed) == 0 {
				return newError(CodeNotFound, map[string]any{"field": f, "from": e.From, "type": e.Type, "to": e.To},
					"%s: %s has no %s edge to %s", f, e.From, e.Type, e.To)
			}
			res.Edges += len(removed)
			tx.ops = append(tx.ops, index.AuditOp{Op: "delete_edge", ID: e.From, Type: e.Type, To: e.To})
			if !slices.Contains(touched, e.From) {
				touched = append(touched, e.From)
			}
		}
		// Edges elsewhere in the tree that point at a deleted entity go too.
		if len(deleted) > 0 {
			all, err := tx.db.Edges(ctx)
			if err != nil {
				return err
			}
			for _, ed := range all {
				if !deleted[ed.To] || deleted[ed.From] {
					continue
				}
				if _, inTree := tx.tree.ByID(ed.From); !inTree {
					continue
				}
				n, err := tx.leaf(ed.From)
				if err != nil {
					return err
				}
				removed, err := removeEdges(n, func(x Edge) bool { return deleted[x.To] })
				if err != nil {
					return err
				}
				for _, x := range removed {
					res.Edges++
					tx.ops = append(tx.ops, index.AuditOp{Op: "delete_edge", ID: ed.From, Type: x.Type, To: x.To})
				}
				if len(removed) > 0 && !slices.Contains(touched, ed.From) {
					touched = append(touched, ed.From)
				}
			}
		}
		changed, err := tx.commit(touched)
		if err != nil {
			return err
		}
		for _, id := range touched {
			if changed[id] {
				res.Updated = append(res.Updated, id)
			}
		}
		for _, r := range refs {
			n := tx.edited[r.ID]
			tx.w.remove(n.Path)
			res.Deleted = append(res.Deleted, r.ID)
			res.Paths = append(res.Paths, n.Path)
			tx.ops = append(tx.ops, index.AuditOp{Op: "delete", ID: r.ID, Type: n.Type, Path: n.Path, Before: version(n)})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}
