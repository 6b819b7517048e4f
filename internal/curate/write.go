package curate

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"

	"github.com/kk-project/kk/internal/index"
	"github.com/kk-project/kk/internal/op"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/node"
)

// WriteMode says what WriteNode does when the id already exists.
type WriteMode string

const (
	// Create fails when the id is taken.
	Create WriteMode = "create"
	// Update replaces the existing leaf in place (or creates it).
	Update WriteMode = "update"
	// Unique picks the first free id among id, id-2, id-3, id-4.
	Unique WriteMode = "unique"
)

// WriteResult says what WriteNode did.
type WriteResult struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"` // relative to the repository root
	Action  string   `json:"action"`
	Index   []string `json:"index_changed"`
	Unknown []string `json:"unknown_edges"` // edge targets that are not (yet) in the tree
}

// fieldError is a field of the input that is refused: it reads as
// `field "name": why`, and is the operation's VALIDATION_ERROR naming the
// field (op.ErrorOf, and a face's --json code and details).
type fieldError struct{ e *op.Error }

func (f *fieldError) Error() string { return f.e.Message }
func (f *fieldError) Unwrap() error { return f.e }

// validateInput checks the input before anything is read or written.
func validateInput(in *contracts.NodeInput) error {
	field := func(name, msg string) error {
		return &fieldError{op.New(op.CodeValidation, map[string]any{"field": name}, "field %q: %s", name, msg)}
	}
	if in.Type == "" {
		return field("type", "is required")
	}
	if n := (&node.Node{Type: in.Type}); !validTypeName(n.Type) {
		return field("type", fmt.Sprintf("%q is not a valid type; use lowercase letters, digits and -", in.Type))
	}
	if strings.TrimSpace(in.Title) == "" {
		return field("title", "is required")
	}
	if utf8.RuneCountInString(in.Title) > 255 {
		// A title taken from the slug (kk node write without --title) is
		// the slug's problem: no id is that long.
		if in.Slug != "" && in.Title == in.Slug {
			if id, err := node.DeriveID(in.Type, in.Slug); err == nil {
				if msg := node.LongID(id); msg != "" {
					return field("slug", msg+": give a shorter slug")
				}
			}
		}
		return field("title", "is longer than 255 characters")
	}
	if strings.ContainsAny(in.Title, "\n\r") {
		return field("title", "must be one line")
	}
	if in.Description != "" && strings.TrimSpace(in.Description) == "" {
		return field("description", "is blank; give a one-line description or leave it out")
	}
	if strings.ContainsAny(in.Description, "\n\r") {
		return field("description", "must be one line")
	}
	for _, f := range []struct{ name, v string }{{"title", in.Title}, {"description", in.Description}} {
		if msg := node.LineProblem(f.v); msg != "" {
			return field(f.name, msg)
		}
	}
	if in.Confidence != "" && !slices.Contains(node.Confidences, in.Confidence) {
		return field("confidence", fmt.Sprintf("is %q; use low, medium or high", in.Confidence))
	}
	if (in.SourceDoc == "") != (in.SourceHash == "") {
		return field("source_doc", "source_doc and source_hash go together; give both or neither")
	}
	if in.SourceDoc != "" {
		if msg := repoRelative(in.SourceDoc); msg != "" {
			return field("source_doc", fmt.Sprintf("%q %s", in.SourceDoc, msg))
		}
		if !isSHA256(in.SourceHash) {
			return field("source_hash", fmt.Sprintf("%q is not a SHA-256 (64 hexadecimal digits, optionally after sha256:)", in.SourceHash))
		}
	}
	if _, err := node.TreeFolder(in.Folder); err != nil {
		return field("folder", err.Error())
	}
	if len(in.Body) > node.MaxSize {
		return field("body", fmt.Sprintf("is %d bytes; the limit is %d", len(in.Body), node.MaxSize))
	}
	if !utf8.ValidString(in.Body) {
		return field("body", "is not valid UTF-8")
	}
	if msg := node.TextProblem(in.Body); msg != "" {
		return field("body", msg)
	}
	// In a fixed order, so that the same input always names the same field.
	for _, f := range []struct {
		name string
		list []string
	}{{"tags", in.Tags}, {"relates_to", in.RelatesTo}, {"depends_on", in.DependsOn}, {"derived_from", in.DerivedFrom}, {"phrasings", in.Phrasings}} {
		for _, v := range f.list {
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\n\r") {
				return field(f.name, fmt.Sprintf("value %q must be non-empty and on one line", v))
			}
			if msg := node.LineProblem(v); msg != "" {
				return field(f.name, fmt.Sprintf("value %q %s", v, msg))
			}
			// An edge is an id, and no id holds a space (node.CheckID):
			// "practice-a practice-b" is two ids given without a comma.
			if (f.name == "relates_to" || f.name == "depends_on") && strings.ContainsAny(strings.TrimSpace(v), " \t") {
				return field(f.name, fmt.Sprintf("value %q holds a space; an id has none: separate ids with commas (practice-a,practice-b)", v))
			}
			// Nor a path, a fragment or anything else a link would carry
			// out of the tree (../../etc/passwd, practice-x#frag).
			if f.name == "relates_to" || f.name == "depends_on" {
				if err := node.CheckID(strings.TrimSpace(v)); err != nil {
					return field(f.name, fmt.Sprintf("value %q is not an id: %v", v, err))
				}
			}
		}
	}
	return nil
}

func validTypeName(t string) bool {
	n := &node.Node{Type: t, Title: "x", ID: t + "-x", Confidence: "high", Path: t + "-x.md"}
	return n.Validate() == nil
}

// WriteOptions control WriteNode.
type WriteOptions struct {
	Mode    WriteMode
	Command string // recorded in the writer lock and the audit log
	Source  string // the face: "cli", "mcp", …
	// NoIndex leaves the generated index files alone, for callers that
	// write many leaves and rebuild once at the end.
	NoIndex bool
	// Keep names the fields (by their node-input JSON names: title,
	// description, tags, relates_to, depends_on, derived_from,
	// confidence, phrasings, body) the caller did not give: an Update of
	// an existing leaf keeps their current values (kk node write --update
	// changes only the flags given). When the leaf does not exist yet, the
	// input's values are written, and a kept description is an error.
	Keep map[string]bool
}

// WriteNode writes one leaf in a store transaction and, unless
// opts.NoIndex, brings the index files up to date in the same
// transaction. An update without a version is last-writer-wins under the
// writer lock; the transaction raises the leaf's kk_version whenever its
// bytes change, so an optimistic writer holding the old version gets a
// conflict.
func WriteNode(ctx context.Context, k *store.KB, in contracts.NodeInput, opts WriteOptions) (*WriteResult, error) {
	if opts.Mode == "" {
		opts.Mode = Create
	}
	if err := prepareInput(&in); err != nil {
		return nil, err
	}
	var res *WriteResult
	var n *node.Node
	done, err := txn.Update(ctx, k, txn.Meta{Source: opts.Source, Command: opts.Command}, func(tx *txn.Tx) error {
		var err error
		res, n, err = writeNode(tx, in, opts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if done.Index != nil {
		res.Index = done.Index.Changed
	}
	if opts.Mode == Update && res.Action == "updated" && !slices.ContainsFunc(done.Ops, func(op index.AuditOp) bool { return op.Path == n.Path }) {
		res.Action = "unchanged"
	}
	return res, nil
}

// WriteInTx stages one leaf in a transaction the caller runs, as
// WriteNode does in its own: the same checks, id rules and leaf. It
// returns the staged leaf, which the caller may still change (extra keys)
// before the transaction commits. opts.Command and opts.Source are the
// caller's transaction's business and are not used.
func WriteInTx(tx *txn.Tx, in contracts.NodeInput, opts WriteOptions) (*WriteResult, *node.Node, error) {
	if opts.Mode == "" {
		opts.Mode = Create
	}
	if err := prepareInput(&in); err != nil {
		return nil, nil, err
	}
	return writeNode(tx, in, opts)
}

// prepareInput trims the list values (--tags "a, b" gives a and b, as
// kenkeep's CLI does), checks the input and drops repeated links, tags
// and phrasings (as kb_upsert and manage_graph drop repeated tags).
func prepareInput(in *contracts.NodeInput) error {
	for _, l := range []*[]string{&in.Tags, &in.RelatesTo, &in.DependsOn, &in.DerivedFrom, &in.Phrasings} {
		if *l == nil {
			continue
		}
		trimmed := make([]string, len(*l))
		for i, v := range *l {
			trimmed[i] = strings.TrimSpace(v)
		}
		*l = trimmed
	}
	if err := validateInput(in); err != nil {
		return err
	}
	for _, l := range []*[]string{&in.RelatesTo, &in.DependsOn, &in.Tags, &in.Phrasings} {
		if len(*l) > 1 {
			*l = node.Dedupe(*l)
		}
	}
	return nil
}

// notRetired returns the id a write of a new leaf gives it when no leaf
// has id: id itself, unless the redirect ledger retired it (kk node
// rename, kk rebalance move's split, kk node delete --redirect-to). The
// edges and links that still name a retired id lead to its successors; a
// new leaf with it would take them over, so the write is refused, as kk
// node rename refuses it, naming where the id leads; --unique (mode
// Unique) counts it as taken and writes <id>-2 or the next free one.
func notRetired(tx *txn.Tx, id string, mode WriteMode) (string, error) {
	ledger, err := tx.Redirects()
	if err != nil {
		// A ledger that does not read (git's conflict markers in it) is
		// named by every command that reads it; notes are written
		// meanwhile, as the rest of the write resolves ids without it.
		return id, nil //nolint:nilerr // see above
	}
	retired := func(s string) bool {
		for old := range ledger {
			if store.IDKey(old) == store.IDKey(s) {
				return true
			}
		}
		return false
	}
	if len(ledger) == 0 || !retired(id) {
		return id, nil
	}
	taken := func(s string) bool {
		if _, ok := tx.Resolve(s); ok {
			return true
		}
		return retired(s)
	}
	if mode == Unique {
		return node.UniqueID(taken, id)
	}
	live := func(s string) bool { _, ok, _ := tx.LeafPath(s); return ok }
	where := "no note: the notes it was retired to are gone"
	if to := store.ResolveRedirect(ledger, id, live); len(to) > 0 {
		where = strings.Join(to, ", ")
	}
	next, err := node.UniqueID(taken, id)
	unique := "pass --unique to write " + next
	if err != nil {
		unique = "give another title or slug"
	}
	return "", fmt.Errorf("id %s is retired: %s leads it to %s, and the edges and links that name it follow it there; a new note with the id would take them over. Change the note it leads to by its id, or %s",
		id, path.Join(store.DirName, "nodes", ".redirects.json"), where, unique)
}

func writeNode(tx *txn.Tx, in contracts.NodeInput, opts WriteOptions) (*WriteResult, *node.Node, error) {
	mode := opts.Mode
	// The tree as read is looked up, not copied (kk serve writes one
	// leaf per transaction over thousands).
	if err := tx.RequireV3(); err != nil {
		return nil, nil, err
	}
	// Checked once the tree is known to take leaves: a v2 tree's refusal
	// says what to do first.
	if msg := node.BodyFrontMatter(in.Body); msg != "" {
		return nil, nil, fmt.Errorf("field %q: %s", "body", msg)
	}
	slug := in.Slug
	if slug == "" {
		slug = in.Title
	}
	id, err := node.DeriveID(in.Type, slug)
	if err != nil {
		field := "slug"
		if in.Slug == "" {
			field = "title"
		}
		return nil, nil, fmt.Errorf("%s %w", field, err)
	}
	// A leaf an older kk wrote under a longer id is still found and
	// changed; a new one is refused.
	if msg := node.LongID(id); msg != "" {
		if _, ok := tx.Resolve(id); !ok {
			if in.Slug == "" {
				return nil, nil, fmt.Errorf("field %q: %s: give a shorter title, or a slug", "title", msg)
			}
			return nil, nil, fmt.Errorf("field %q: %s: give a shorter slug", "slug", msg)
		}
	}
	var n *node.Node
	action := "created"
	existing, exists, err := tx.LeafPath(id)
	if err != nil {
		return nil, nil, err
	}
	if !exists {
		if id, err = notRetired(tx, id, mode); err != nil {
			return nil, nil, err
		}
	}
	switch {
	case exists && mode == Create:
		spelled := id // as the leaf's writer gave it
		if e, err := tx.LeafAt(existing); err == nil && e != nil {
			spelled = e.ID
		}
		return nil, nil, fmt.Errorf("duplicate id %s: a leaf with this id already exists at %s; pass --update to replace it or --unique to write %s-2",
			spelled, filepath.ToSlash(filepath.Join(store.DirName, "nodes", existing)), id)
	case exists && mode == Unique:
		id, err = node.UniqueID(func(s string) bool { _, ok := tx.Resolve(s); return ok }, id)
		if err != nil {
			return nil, nil, err
		}
	case exists && mode == Update:
		n, err = tx.LeafAt(existing)
		if err != nil {
			return nil, nil, err
		}
		if n.Type != in.Type {
			return nil, nil, fmt.Errorf("field \"type\": %s is a %s; a node never changes kind", n.ID, n.Type)
		}
		id = n.ID // the id as its writer gave it
		action = "updated"
		keepFields(&in, n, opts.Keep)
	case mode == Update:
		// No leaf has the id; a note a person broke by hand may claim it,
		// and is named rather than said not to exist.
		if err := tx.Unreadable(id); err != nil {
			return nil, nil, err
		}
		if opts.Keep["description"] {
			return nil, nil, fmt.Errorf("field \"description\": is required: %s does not exist yet, so there is no description to keep", id)
		}
	}
	// The id is final here (--unique may have changed it): an edge to it
	// is an edge to the node itself, which kk lint and kb_check report.
	if err := checkNoSelfEdge(id, in.RelatesTo, in.DependsOn); err != nil {
		return nil, nil, err
	}
	folder, _ := node.TreeFolder(in.Folder)
	folder = folderSpelling(tx.KB().NodesDir(), folder)
	if n == nil {
		n = &node.Node{Format: node.SchemaVersion}
	} else if in.Folder == "" {
		folder = n.Dir()
	}
	n.Type, n.ID, n.Title, n.Description = in.Type, id, strings.TrimSpace(in.Title), strings.TrimSpace(in.Description)
	n.Tags, n.RelatesTo, n.DependsOn, n.DerivedFrom = node.List(in.Tags), node.List(in.RelatesTo), node.List(in.DependsOn), node.List(in.DerivedFrom)
	n.Confidence = in.Confidence
	if n.Confidence == "" {
		n.Confidence = "high"
	}
	if in.Status != "" {
		n.Status = in.Status
	}
	if in.StaleAfter != "" {
		n.StaleAfter = in.StaleAfter
	}
	if in.Phrasings != nil {
		n.Phrasings = in.Phrasings
	}
	n.Body = []byte(in.Body)
	n.Path = id + ".md"
	if folder != "" {
		n.Path = folder + "/" + id + ".md"
	}
	if err := n.Validate(); err != nil {
		return nil, nil, err
	}
	if err := tx.KB().CheckFolder(folder); err != nil {
		return nil, nil, err
	}
	tx.Put(n)
	if in.SourceDoc != "" {
		if err := recordBootstrapSource(tx, in.SourceDoc, in.SourceHash, id); err != nil {
			return nil, nil, err
		}
	}
	if opts.NoIndex {
		tx.SkipIndexFiles()
	}
	res := &WriteResult{ID: id, Path: filepath.ToSlash(filepath.Join(store.DirName, "nodes", n.Path)), Action: action, Index: []string{}, Unknown: []string{}}
	for _, ref := range append(slices.Clone(n.RelatesTo), n.DependsOn...) {
		if _, ok := tx.Resolve(ref); !ok {
			res.Unknown = append(res.Unknown, ref)
		}
	}
	return res, n, nil
}

// keepFields sets the fields of in that keep names to their values in
// the existing leaf n.
func keepFields(in *contracts.NodeInput, n *node.Node, keep map[string]bool) {
	for _, f := range []struct {
		name string
		set  func()
	}{
		{"title", func() { in.Title = n.Title }},
		{"description", func() { in.Description = n.Description }},
		{"tags", func() { in.Tags = slices.Clone(n.Tags) }},
		{"relates_to", func() { in.RelatesTo = slices.Clone(n.RelatesTo) }},
		{"depends_on", func() { in.DependsOn = slices.Clone(n.DependsOn) }},
		{"derived_from", func() { in.DerivedFrom = slices.Clone(n.DerivedFrom) }},
		{"confidence", func() { in.Confidence = n.Confidence }},
		{"phrasings", func() { in.Phrasings = nil }}, // writeNode keeps nil phrasings
		{"body", func() { in.Body = string(n.Body) }},
	} {
		if keep[f.name] {
			f.set()
		}
	}
}

// checkNoSelfEdge is an error naming the field when relatesTo or dependsOn
// holds id itself (ids compared without regard to case): an edge from a
// node to itself, which kk lint and kb_check report and kk upsert refuses.
func checkNoSelfEdge(id string, relatesTo, dependsOn []string) error {
	for _, l := range []struct {
		field string
		refs  []string
	}{{"relates_to", relatesTo}, {"depends_on", dependsOn}} {
		for _, ref := range l.refs {
			if store.IDKey(ref) == store.IDKey(id) {
				return fmt.Errorf("field %q: %s is this node's own id; a node cannot link to itself", l.field, ref)
			}
		}
	}
	return nil
}

// repoRelative says what is wrong with p as a path relative to the
// repository ("" when nothing): bootstrap records documents by such paths.
func repoRelative(p string) string {
	switch {
	case strings.ContainsAny(p, "\x00\n\r"):
		return "holds a NUL or a line break"
	case path.IsAbs(p) || filepath.IsAbs(p) || (len(p) > 1 && p[1] == ':'):
		return "is absolute; give a path relative to the repository root"
	case slices.Contains(strings.Split(strings.ReplaceAll(p, "\\", "/"), "/"), ".."):
		return "climbs out of the repository with \"..\"; give a path inside it"
	}
	return ""
}

func isSHA256(s string) bool {
	s = strings.TrimPrefix(s, "sha256:")
	if len(s) != 64 {
		return false
	}
	for _, r := range s {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f' || 'A' <= r && r <= 'F') {
			return false
		}
	}
	return true
}

// folderSpelling returns folder (relative to nodesDir) with each of its
// folders spelled as it is on disk when it is there under another Unicode
// spelling of the same name: a name macOS wrote decomposed ("e" and a
// combining accent), which a person on another system types composed.
// The two look the same, but on Linux they are two folders, which macOS
// takes for one and git cannot check out there. A folder not there yet is
// spelled composed (NFC), as git on macOS commits names.
func folderSpelling(nodesDir, folder string) string {
	if folder == "" {
		return ""
	}
	segs := strings.Split(folder, "/")
	dir := nodesDir
	for i, seg := range segs {
		if fi, err := os.Lstat(filepath.Join(dir, seg)); err == nil && fi.IsDir() {
			dir = filepath.Join(dir, seg)
			continue
		}
		spelled := norm.NFC.String(seg)
		if entries, err := os.ReadDir(dir); err == nil {
			for _, e := range entries {
				if e.IsDir() && norm.NFC.String(e.Name()) == spelled {
					spelled = e.Name()
					break
				}
			}
		}
		segs[i] = spelled
		dir = filepath.Join(dir, spelled)
	}
	return strings.Join(segs, "/")
}
