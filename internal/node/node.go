package node

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/frontmatter"
)

// SchemaVersion is the leaf format kk writes (kenkeep v3, OKF concept document).
const SchemaVersion = 3

// MaxSize is the largest leaf kk reads or writes.
const MaxSize = 1 << 20

// MaxDescriptionChars is the longest description, in characters, that kk
// node write takes: kenkeep's rule for a description (its proposal
// prompt and its kk-add and kk-bootstrap skills). The description is the
// line ENTRY.md and a folder's index.md show for the leaf; the rest
// belongs in the body. A leaf written by hand with a longer one is still
// read.
const MaxDescriptionChars = 140

// Confidence levels of a leaf.
var Confidences = []string{"low", "medium", "high"}

// Statuses are the OKF v0.2 lifecycle values.
var Statuses = []string{"draft", "stable", "deprecated"}

// Front matter keys of a v3 leaf in the order kk writes them.
const (
	KeyType          = "type"
	KeyTitle         = "title"
	KeyDescription   = "description"
	KeyTags          = "tags"
	KeyStatus        = "status"
	KeyStaleAfter    = "stale_after"
	KeyGenerated     = "generated"
	KeyVerified      = "verified"
	KeySources       = "sources"
	KeySchemaVersion = "kk_schema_version"
	KeyID            = "kk_id"
	KeyDerivedFrom   = "kk_derived_from"
	KeyRelatesTo     = "kk_relates_to"
	KeyDependsOn     = "kk_depends_on"
	KeyConfidence    = "kk_confidence"
	// KeyPhrasings lists, optionally, the questions and phrasings a
	// developer would use to ask for the leaf, in their own words; search
	// indexes them as a field of their own.
	KeyPhrasings = "kk_phrasings"
)

// canonicalOrder is the order of known keys in a freshly written leaf.
var canonicalOrder = []string{
	KeyType, KeyTitle, KeyDescription, KeyTags,
	KeyStatus, KeyStaleAfter, KeyGenerated, KeyVerified, KeySources,
	KeySchemaVersion, KeyID, KeyDerivedFrom, KeyRelatesTo, KeyDependsOn, KeyConfidence, KeyPhrasings,
}

// v2Keys are the keys of the kenkeep v2 format, dropped when migrating.
var v2Keys = []string{"schema_version", "id", "title", "kind", "summary", "tags", "derived_from", "relates_to", "depends_on", "confidence"}

// Node is one leaf of the knowledge tree.
type Node struct {
	// Path is the leaf's path relative to nodes/, with "/" separators.
	Path string
	// Format is the schema version the leaf was read in (2 or 3); 3 for new leaves.
	Format int

	Type        string
	Title       string
	Description string
	Tags        []string
	ID          string
	DerivedFrom []string
	RelatesTo   []string
	DependsOn   []string
	Confidence  string

	// Optional OKF v0.2 keys. Generated, Verified and Sources keep whatever
	// YAML shape the author used.
	Status     string
	StaleAfter string
	Generated  any
	Verified   any
	Sources    any

	// Phrasings (kk_phrasings, optional) are how a developer would ask for
	// the leaf; nil when the leaf has none.
	Phrasings []string

	// GraphLinks are the ids the leaf links to through kk's graph keys —
	// kk_molecule, the ids of kk_related, the targets of kk_edges — in that
	// order, read when the leaf is parsed (changing the keys with SetExtra
	// does not update it).
	GraphLinks []string

	// Body is the markdown after the front matter, verbatim. Leaves served
	// from the leaf cache have no body; BodySize is always set.
	Body []byte
	// BodySize is the body's length in characters, a "\r\n" counted as
	// the one "\n" it is: a leaf checked out with CRLF line endings (git's
	// core.autocrlf) measures as the same leaf with LF.
	BodySize int

	doc      *frontmatter.Doc
	released bool
}

// Error is what is wrong with one leaf file: its first problem (Field,
// Msg) and the others a read found with it (More), so that a person
// fixing a leaf by hand learns every problem in one run.
type Error struct {
	Path  string // relative to nodes/ (or as given)
	Field string // front matter key, when the problem is one field
	Msg   string
	// More are the leaf's further problems, in the order they were found.
	More []Problem
	// ID is the id the leaf's front matter gives, when it gives one as a
	// string: a leaf kk skips still claims its id, so that no writer makes
	// a second leaf with it.
	ID string
	// Err is the cause, when it is one callers test for (ErrOldLayout).
	Err error
}

func (e *Error) Unwrap() error { return e.Err }

// Problem is one problem of a leaf: a front matter key (empty when the
// problem is not one field's) and what is wrong.
type Problem struct {
	Field string `json:"field,omitempty"`
	Msg   string `json:"message"`
}

func (p Problem) String() string {
	if p.Field != "" {
		return fmt.Sprintf("field %q: %s", p.Field, p.Msg)
	}
	return p.Msg
}

// Problems lists every problem of the leaf, the first one first.
func (e *Error) Problems() []Problem {
	return append([]Problem{{Field: e.Field, Msg: e.Msg}}, e.More...)
}

// Detail is the problems without the path, joined by "; ".
func (e *Error) Detail() string {
	ps := e.Problems()
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = p.String()
	}
	return strings.Join(parts, "; ")
}

func (e *Error) Error() string {
	return e.Path + ": " + e.Detail()
}

// ErrOldLayout marks a leaf in the v1 format, which kk cannot read.
var ErrOldLayout = errors.New("leaf uses the v1 format")

// Dir returns the leaf's folder relative to nodes/ ("" for the root).
func (n *Node) Dir() string {
	if i := strings.LastIndexByte(n.Path, '/'); i >= 0 {
		return n.Path[:i]
	}
	return ""
}

// Extra returns the value of a front matter key kk does not model.
func (n *Node) Extra(key string) (any, bool) {
	if n.doc == nil {
		return nil, false
	}
	return n.doc.Value(key)
}

// NotUTF8Msg starts the problem of a leaf that is not valid UTF-8.
const NotUTF8Msg = "not valid UTF-8"

// EncodingProblem says why src is not UTF-8 text ("" when it is): saved
// as UTF-16, or holding a byte UTF-8 has not there (named with its line
// and offset).
func EncodingProblem(src []byte) string {
	if frontmatter.UTF16(src) {
		return frontmatter.UTF16Msg
	}
	if !utf8.Valid(src) {
		at := firstInvalid(src)
		return fmt.Sprintf("%s: line %d holds the byte 0x%02X (at offset %d), as a file saved as Latin-1 or Windows-1252 does; save it as UTF-8",
			NotUTF8Msg, bytes.Count(src[:at], []byte("\n"))+1, src[at], at)
	}
	return ""
}

// Parse reads a leaf. relPath names it in errors and becomes n.Path.
func Parse(relPath string, src []byte) (*Node, error) {
	if len(src) > MaxSize {
		return nil, &Error{Path: relPath, Msg: fmt.Sprintf("leaf is %d bytes; the limit is %d", len(src), MaxSize)}
	}
	if msg := EncodingProblem(src); msg != "" {
		return nil, &Error{Path: relPath, Msg: msg}
	}
	if from, to := ConflictMarkers(src); from > 0 {
		if _, v, ok := ResolveVersionConflicts(string(src)); ok {
			// What is left of a conflict once the rest is resolved by
			// hand: kk_version, which no person wrote, and kk's hook
			// resolves only in a note with no other conflict.
			return nil, &Error{Path: relPath, Msg: fmt.Sprintf("%s (lines %d to %d) only around kk_version, the counter kk keeps (each side changed the note with kk): keep the one line kk_version: %d in their place, then `git add` it", ConflictMarkersMsg, from, to, v)}
		}
		return nil, &Error{Path: relPath, Msg: fmt.Sprintf("%s (lines %d to %d): a git merge, rebase or cherry-pick stopped on a conflict in this leaf; edit it to keep the right text, remove the markers, then `git add` it", ConflictMarkersMsg, from, to)}
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		var fe *frontmatter.FieldError
		if errors.As(err, &fe) {
			return nil, &Error{Path: relPath, Field: fe.Field, Msg: fe.Msg}
		}
		return nil, &Error{Path: relPath, Msg: frontmatter.Describe(err)}
	}
	if !doc.HasFrontMatter() || len(doc.Keys()) == 0 {
		return nil, &Error{Path: relPath, Msg: "no front matter; a leaf starts with a --- block holding type, title, description, tags and kk_ keys"}
	}
	n := &Node{Path: relPath, Body: doc.Body(), BodySize: bodySize(doc.Body()), doc: doc}
	f := fields{doc: doc, path: relPath}
	_, v3 := doc.Value(KeySchemaVersion)
	sv, legacy := doc.Value("schema_version")
	if !v3 && legacy {
		v, isInt := sv.(int64)
		switch {
		case isInt && v == 1:
			e := &Error{Path: relPath, Field: "schema_version", Msg: fmt.Sprintf("is %d: %v; migrate it with the kk-migrate skill", v, ErrOldLayout), Err: ErrOldLayout}
			e.ID = stringValue(doc, "id")
			return nil, e
		case isInt && v < 1:
			// No kk or kenkeep wrote it; kk migrate status names it too.
			e := &Error{Path: relPath, Field: "schema_version", Msg: fmt.Sprintf("is %d, which no version of the format is; fix it by hand (a leaf kk writes has kk_schema_version: 3)", v)}
			e.ID = stringValue(doc, "id")
			return nil, e
		}
	}
	if v3 || !legacy {
		// A v3 leaf, or a document that names no schema (a note written
		// by hand): every problem of it as a v3 leaf is reported at once.
		n.Format = 3
		if !v3 {
			f.fail(KeySchemaVersion, "missing; a v3 leaf has kk_schema_version: 3 (a v2 leaf has schema_version: 2)")
		} else if v := f.int(KeySchemaVersion, true); f.problems() == 0 && v != SchemaVersion {
			f.fail(KeySchemaVersion, fmt.Sprintf("is %d; kk reads version 3 (and v2 leaves with schema_version: 2)", v))
		}
		n.Type = f.str(KeyType, true)
		n.Title = f.str(KeyTitle, true)
		n.Description = f.str(KeyDescription, true)
		n.Tags = f.list(KeyTags, true)
		n.ID = f.str(KeyID, true)
		n.DerivedFrom = f.list(KeyDerivedFrom, true)
		n.RelatesTo = f.list(KeyRelatesTo, true)
		n.DependsOn = f.list(KeyDependsOn, false)
		n.Confidence = f.enum(KeyConfidence, Confidences, true)
		n.Status = f.enum(KeyStatus, Statuses, false)
		n.StaleAfter = f.date(KeyStaleAfter)
		n.Generated, _ = doc.Value(KeyGenerated)
		n.Verified, _ = doc.Value(KeyVerified)
		n.Sources, _ = doc.Value(KeySources)
		if _, ok := doc.Value(KeyPhrasings); ok {
			n.Phrasings = f.list(KeyPhrasings, false)
		}
		n.GraphLinks = graphLinks(doc)
	} else {
		v, isInt := sv.(int64)
		switch {
		case !isInt:
			f.fail("schema_version", "must be a number")
		case v != 2:
			f.fail("schema_version", fmt.Sprintf("is %d; a v3 leaf uses kk_schema_version: 3", v))
		}
		n.Format = 2
		n.ID = f.str("id", true)
		n.Title = f.str("title", true)
		n.Type = f.str("kind", true)
		n.Description = f.str("summary", true)
		n.Tags = f.list("tags", false)
		n.DerivedFrom = f.list("derived_from", false)
		n.RelatesTo = f.list("relates_to", false)
		n.DependsOn = f.list("depends_on", false)
		n.Confidence = f.enum("confidence", Confidences, true)
	}
	if n.Type != "" && !validType(n.Type) {
		f.fail(typeKey(n.Format), fmt.Sprintf("%q is not a valid type; use lowercase letters, digits and -", n.Type))
	}
	meant, msg := paddedID(n.ID)
	if msg != "" {
		f.fail(idKey(n.Format), msg)
	}
	if f.err != nil {
		// The leaf claims the id it was meant to have: a write of that
		// id stops at this file rather than start another note.
		f.err.ID = meant
		return nil, f.err
	}
	return n, nil
}

// stringValue is the string value of a front matter key.
func stringValue(doc *frontmatter.Doc, key string) string {
	v, _ := doc.Value(key)
	s, _ := v.(string)
	return s
}

// ConflictMarkersMsg starts the message of a leaf holding git's conflict
// markers.
const ConflictMarkersMsg = "holds git conflict markers"

// ConflictMarkers finds git's conflict markers in a leaf: a line starting
// with "<<<<<<<" (or more) and a later one starting with ">>>>>>>", outside fenced
// code blocks (a note may show markers in an example). It returns their
// line numbers (1-based), or 0, 0.
func ConflictMarkers(src []byte) (from, to int) {
	if !bytes.Contains(src, []byte("<<<<<<<")) || !bytes.Contains(src, []byte(">>>>>>>")) {
		return 0, 0
	}
	fence := ""
	for i, line := range strings.Split(string(src), "\n") {
		line = strings.TrimSuffix(line, "\r")
		trimmed := strings.TrimLeft(line, " ")
		if len(line)-len(trimmed) <= 3 && (strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~")) {
			switch {
			case fence == "":
				fence = trimmed[:3]
			case strings.HasPrefix(trimmed, fence):
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		switch {
		case from == 0 && isMarker(line, '<'):
			from = i + 1
		case from > 0 && isMarker(line, '>'):
			return from, i + 1
		}
	}
	return 0, 0
}

// isMarker reports whether line is a conflict marker of c's: seven
// (git's conflict-marker-size) or more, as git writes for a conflict
// inside a conflict (a rename on both sides, a merge base merged from
// two), then the end of the line or a space and a label.
func isMarker(line string, c byte) bool {
	n := 0
	for n < len(line) && line[n] == c {
		n++
	}
	return n >= 7 && (n == len(line) || line[n] == ' ')
}

func typeKey(format int) string {
	if format == 2 {
		return "kind"
	}
	return KeyType
}

func idKey(format int) string {
	if format == 2 {
		return "id"
	}
	return KeyID
}

// paddedID says what is wrong with an id read from a leaf that has white
// space or a quote mark at its start or end ("" when it has not): a hand
// edit that left a space or a stray quote inside YAML's quotes
// (kk_id: "practice-base "). No writer gives such an id, and none can ask
// for it: read as it is, the leaf would hold an id its file name does not
// say, and a write of the id it was meant to be would start a second note
// beside it. It is a leaf kk cannot read until the id is fixed by hand;
// meant is the id without them (id itself when it has none).
func paddedID(id string) (meant, msg string) {
	trimmed := strings.TrimFunc(id, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("\"'`", r) })
	if trimmed == id || trimmed == "" {
		return id, "" // an empty id is reported as one
	}
	return trimmed, fmt.Sprintf("%q has white space or a quote mark at its start or end; write %s", id, trimmed)
}

func validType(t string) bool {
	for i, r := range t {
		if !('a' <= r && r <= 'z' || (i > 0 && ('0' <= r && r <= '9' || r == '-' || r == '_'))) {
			return false
		}
	}
	return t != ""
}

func firstInvalid(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size <= 1 {
			return i
		}
		i += size
	}
	return -1
}

// fields decodes typed values out of a Doc, collecting every problem.
type fields struct {
	doc  *frontmatter.Doc
	path string
	err  *Error
}

func (f *fields) fail(key, msg string) {
	if f.err == nil {
		f.err = &Error{Path: f.path, Field: key, Msg: msg}
		return
	}
	f.err.More = append(f.err.More, Problem{Field: key, Msg: msg})
}

// problems counts the problems found so far.
func (f *fields) problems() int {
	if f.err == nil {
		return 0
	}
	return 1 + len(f.err.More)
}

func (f *fields) str(key string, required bool) string {
	v, ok := f.doc.Value(key)
	if ok && v == nil && (key == KeyDescription || key == "summary") {
		// "description:" with nothing after it, as a person leaves a
		// field to fill in later: empty, as a list with no value is [].
		return ""
	}
	if !ok || v == nil {
		switch {
		case !required:
		case ok:
			f.fail(key, "has no value; write one after the colon")
		default:
			f.fail(key, "is required")
		}
		return ""
	}
	s, ok := v.(string)
	if !ok {
		f.fail(key, fmt.Sprintf("must be a string, not %s", kindOf(v)))
		return ""
	}
	if required && key != KeyDescription && key != "summary" && strings.TrimSpace(s) == "" {
		f.fail(key, "must not be empty")
	}
	return s
}

func (f *fields) int(key string, required bool) int64 {
	v, ok := f.doc.Value(key)
	if !ok {
		if required {
			f.fail(key, "is required")
		}
		return 0
	}
	i, ok := v.(int64)
	if !ok {
		f.fail(key, fmt.Sprintf("must be an integer, not %s", kindOf(v)))
	}
	return i
}

func (f *fields) list(key string, required bool) []string {
	v, ok := f.doc.Value(key)
	if !ok || v == nil {
		if required && !ok {
			f.fail(key, "is required (use [] for none)")
		}
		return []string{}
	}
	items, ok := v.([]any)
	if !ok {
		f.fail(key, fmt.Sprintf("must be a list of strings, not %s", kindOf(v)))
		return nil
	}
	out := make([]string, 0, len(items))
	for i, it := range items {
		s, ok := it.(string)
		if !ok {
			f.fail(key, fmt.Sprintf("item %d must be a string, not %s", i+1, kindOf(it)))
			return nil
		}
		out = append(out, s)
	}
	return out
}

func (f *fields) enum(key string, allowed []string, required bool) string {
	s := f.str(key, required)
	if s != "" && !slices.Contains(allowed, s) {
		f.fail(key, fmt.Sprintf("is %q; use one of %s", s, strings.Join(allowed, ", ")))
	}
	return s
}

func (f *fields) date(key string) string {
	s := f.str(key, false)
	if s != "" && !isDate(s) {
		f.fail(key, fmt.Sprintf("is %q; use a date like 2026-12-31", s))
	}
	return s
}

func isDate(s string) bool {
	if len(s) < 10 {
		return false
	}
	for i, c := range s[:10] {
		if i == 4 || i == 7 {
			if c != '-' {
				return false
			}
		} else if c < '0' || c > '9' {
			return false
		}
	}
	return len(s) == 10 || s[10] == 'T' || s[10] == ' '
}

func kindOf(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case int64, float64:
		return "a number"
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}

// Validate checks the fields a v3 leaf must have before it is written.
func (n *Node) Validate() error {
	fail := func(field, msg string) error { return &Error{Path: n.Path, Field: field, Msg: msg} }
	// Text kk writes must be valid UTF-8 without NUL bytes (a NUL makes
	// git treat the leaf as binary), whichever writer made it.
	for _, f := range []struct{ field, v string }{{KeyType, n.Type}, {KeyTitle, n.Title}, {KeyDescription, n.Description},
		{KeyID, n.ID}, {KeyStatus, n.Status}, {KeyStaleAfter, n.StaleAfter}, {"body", string(n.Body)}} {
		if msg := badText(f.v); msg != "" {
			return fail(f.field, msg)
		}
	}
	for _, l := range []struct {
		field string
		v     []string
	}{{KeyTags, n.Tags}, {KeyDerivedFrom, n.DerivedFrom}, {KeyRelatesTo, n.RelatesTo}, {KeyDependsOn, n.DependsOn}, {KeyPhrasings, n.Phrasings}} {
		for _, s := range l.v {
			if msg := badText(s); msg != "" {
				return fail(l.field, msg)
			}
		}
	}
	switch {
	case !validType(n.Type):
		return fail(KeyType, fmt.Sprintf("%q is not a valid type; use lowercase letters, digits and -", n.Type))
	case strings.TrimSpace(n.Title) == "":
		return fail(KeyTitle, "is required")
	case strings.TrimSpace(n.ID) == "":
		return fail(KeyID, "is required")
	case !slices.Contains(Confidences, n.Confidence):
		return fail(KeyConfidence, fmt.Sprintf("is %q; use one of %s", n.Confidence, strings.Join(Confidences, ", ")))
	case n.Status != "" && !slices.Contains(Statuses, n.Status):
		return fail(KeyStatus, fmt.Sprintf("is %q; use one of %s", n.Status, strings.Join(Statuses, ", ")))
	case n.StaleAfter != "" && !isDate(n.StaleAfter):
		return fail(KeyStaleAfter, fmt.Sprintf("is %q; use a date like 2026-12-31", n.StaleAfter))
	}
	if msg := CheckNaming(n.Type, n.ID, n.Path); msg != "" {
		return fail(KeyID, msg)
	}
	for _, l := range [][]string{n.Tags, n.DerivedFrom, n.RelatesTo, n.DependsOn, n.Phrasings} {
		for _, s := range l {
			if strings.ContainsAny(s, "\n\r") {
				return fail("", fmt.Sprintf("list value %q holds a line break", s))
			}
		}
	}
	return nil
}

// badText says what is wrong with text kk would write ("" when nothing).
func badText(s string) string {
	switch {
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	case strings.IndexByte(s, 0) >= 0:
		return "holds a NUL byte"
	}
	return ""
}

// Resolver maps a node id to its path relative to nodes/.
type Resolver func(id string) (string, bool)

// Render returns the leaf's file content in the v3 format: front matter,
// then the body with its generated Related and Citations sections brought
// up to date. A leaf read from disk whose fields and body did not change
// renders to exactly the bytes it was read from.
func (n *Node) Render(resolve Resolver) ([]byte, error) {
	if n.released || n.Body == nil && n.BodySize > 0 {
		return nil, fmt.Errorf("%s: leaf was loaded for reading only and cannot be written; re-read it first", n.Path)
	}
	body := RenderedBody(n, resolve)
	doc := n.doc
	if doc == nil || n.Format != SchemaVersion {
		doc = nil
	}
	items := n.items()
	if doc == nil {
		empty, _ := frontmatter.Parse(nil)
		doc = empty
	}
	return doc.Render(items, []byte(body), frontmatter.Emit)
}

// BodyUpToDate reports whether the leaf's generated sections (Related,
// Citations) are what rendering it with resolve would write: then a move
// can keep its bytes.
func BodyUpToDate(n *Node, resolve Resolver) bool {
	return RenderedBody(n, resolve) == string(n.Body)
}

// RenderedBody is the leaf's body as Render writes it: its generated
// Related and Citations sections brought up to date, the rest as it is.
func RenderedBody(n *Node, resolve Resolver) string {
	return strings.TrimRightFunc(RenderSections(string(n.Body), n, resolve), isJSSpace) + "\n"
}

// items lists the front matter to write. A leaf read in v3 keeps its key
// order and unknown keys; new known keys go after the known key that
// precedes them in canonical order.
func (n *Node) items() []frontmatter.Item {
	known := map[string]any{
		KeyType:          n.Type,
		KeyTitle:         n.Title,
		KeyDescription:   n.Description,
		KeyTags:          List(n.Tags),
		KeySchemaVersion: int64(SchemaVersion),
		KeyID:            n.ID,
		KeyDerivedFrom:   List(n.DerivedFrom),
		KeyRelatesTo:     List(n.RelatesTo),
		KeyDependsOn:     List(n.DependsOn),
		KeyConfidence:    n.Confidence,
	}
	optional := map[string]any{KeyStatus: n.Status, KeyStaleAfter: n.StaleAfter, KeyGenerated: n.Generated, KeyVerified: n.Verified, KeySources: n.Sources, KeyPhrasings: nil}
	if len(n.Phrasings) > 0 {
		optional[KeyPhrasings] = n.Phrasings
	}
	for k, v := range optional {
		if v != nil && v != "" {
			known[k] = v
		}
	}
	var out []frontmatter.Item
	if n.doc != nil && n.Format == SchemaVersion {
		placed := map[string]bool{}
		for _, k := range n.doc.Keys() {
			if v, ok := known[k]; ok {
				out = append(out, frontmatter.Item{Key: k, Value: v})
				placed[k] = true
			} else if _, isOptional := optional[k]; isOptional {
				continue // an optional key that was cleared
			} else {
				v, _ := n.doc.Value(k)
				out = append(out, frontmatter.Item{Key: k, Value: v})
			}
		}
		for i, k := range canonicalOrder {
			v, ok := known[k]
			if !ok || placed[k] {
				continue
			}
			at := 0
			for j := i - 1; j >= 0; j-- {
				if idx := indexOf(out, canonicalOrder[j]); idx >= 0 {
					at = idx + 1
					break
				}
			}
			out = slices.Insert(out, at, frontmatter.Item{Key: k, Value: v})
			placed[k] = true
		}
		return out
	}
	for _, k := range canonicalOrder {
		if v, ok := known[k]; ok {
			out = append(out, frontmatter.Item{Key: k, Value: v})
		}
	}
	if n.doc != nil {
		for _, k := range n.doc.Keys() {
			if slices.Contains(v2Keys, k) || known[k] != nil {
				continue
			}
			v, _ := n.doc.Value(k)
			out = append(out, frontmatter.Item{Key: k, Value: v})
		}
	}
	return out
}

func indexOf(items []frontmatter.Item, key string) int {
	for i, it := range items {
		if it.Key == key {
			return i
		}
	}
	return -1
}

// List returns s, or an empty list for nil, so that a list field renders
// as [] rather than null.
func List(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Dedupe returns the distinct values of s in their first order.
func Dedupe(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

// BodyEnd returns the white space body ends with: what Render replaces
// with the one line end every leaf's body ends with.
func BodyEnd(body string) string {
	return body[len(strings.TrimRightFunc(body, isJSSpace)):]
}

// isJSSpace matches the characters JavaScript's trimEnd removes.
func isJSSpace(r rune) bool {
	switch r {
	case ' ', '\t', '\n', '\v', '\f', '\r', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return 0x2000 <= r && r <= 0x200A
}

// Release drops what only a writer needs (the parsed front matter document
// and, unless keepBody, the body) so that a large tree held in memory costs
// little. A released leaf can no longer be rendered; re-read it to write it.
func (n *Node) Release(keepBody bool) {
	n.doc = nil
	n.released = true
	if !keepBody {
		n.Body = nil
	}
}

// graphLinks lists the ids a leaf's graph keys point at; malformed values
// are skipped (the graph operations report them).
func graphLinks(doc *frontmatter.Doc) []string {
	var out []string
	if v, ok := doc.Value("kk_molecule"); ok {
		if s, ok := v.(string); ok && s != "" {
			out = append(out, s)
		}
	}
	for _, key := range []string{"kk_related", "kk_edges"} {
		field := "id"
		if key == "kk_edges" {
			field = "to"
		}
		v, _ := doc.Value(key)
		list, _ := v.([]any)
		for _, item := range list {
			if m, ok := item.(map[string]any); ok {
				if s, ok := m[field].(string); ok && s != "" {
					out = append(out, s)
				}
			}
		}
	}
	return out
}

// bodySize is Node.BodySize of body: its characters, a "\r\n" counted
// as one.
func bodySize(body []byte) int {
	return utf8.RuneCount(body) - bytes.Count(body, []byte("\r\n"))
}
