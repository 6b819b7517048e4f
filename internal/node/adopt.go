package node

import (
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/frontmatter"
)

// Filled is one front matter key adoption set on a note written by hand,
// the value it gave and where the value came from.
type Filled struct {
	Field string `json:"field"`
	Value any    `json:"value"`
	// From says where the value came from: "default", "title heading",
	// "file name", "title", "first sentence", "summary", "comma list",
	// "lowercase".
	From string `json:"from"`
	// Was is the value the key had, when adoption changed one a note had
	// (the kk_id of a copy, see AdoptCopy); nil when it filled in a key.
	Was any `json:"was,omitempty"`
}

// Adoption defaults: what a note written by hand gets when it does not
// say (kk node write's defaults).
const (
	AdoptType       = "practice"
	AdoptConfidence = "high"
	// adoptDescriptionMax caps a description taken from the body's first
	// sentence, in characters (kenkeep's convention is ~140).
	adoptDescriptionMax = 140
)

// AdoptError says why a document cannot be adopted; a person has to fix
// it by hand.
type AdoptError struct {
	Path string
	Msg  string
}

func (e *AdoptError) Error() string { return e.Path + ": " + e.Msg }

// Adopt turns a markdown document under nodes/ that is not a valid leaf
// yet (a note written by hand) into one, keeping everything it says: its
// front matter keys (known and unknown, in their order) and its body,
// verbatim. It needs at least a title: a title key, or a first "# "
// heading. What the note does not say is filled in and listed:
//
//   - type: practice;
//   - title: the first "# " heading;
//   - description: the description key, else a summary key, else the
//     first sentence of the body (at most 140 characters), else empty;
//   - tags, kk_derived_from, kk_relates_to, kk_depends_on: [] (a list
//     written as one comma-separated string is split);
//   - kk_schema_version: 3;
//   - kk_id: the file name when it is already a valid id for the type
//     (practice-retries.md), else derived from the type and title as kk
//     node write derives it;
//   - kk_confidence: high.
//
// The leaf's path is its folder and "<id>.md"; the caller makes the id
// unique and renames the file when the name changes. A value that is
// there but wrong (an unknown confidence, a list of mappings) is not
// guessed at: Adopt returns an *AdoptError naming it, as it does for a
// document whose front matter does not parse, one holding conflict
// markers, a kenkeep v1 or v2 leaf (kk migrate converts those), or a
// document with nothing to fill in.
func Adopt(rel string, src []byte) (*Node, []Filled, error) {
	fail := func(format string, args ...any) (*Node, []Filled, error) {
		return nil, nil, &AdoptError{Path: rel, Msg: fmt.Sprintf(format, args...)}
	}
	if len(src) > MaxSize {
		return fail("it is %d bytes; the limit is %d", len(src), MaxSize)
	}
	if !utf8.Valid(src) {
		return fail("it is not valid UTF-8")
	}
	if from, to := ConflictMarkers(src); from > 0 {
		return fail("it %s (lines %d to %d); resolve the git conflict first", ConflictMarkersMsg, from, to)
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return fail("its front matter does not parse (%s); fix the YAML by hand", frontmatter.Describe(err))
	}
	if _, err := Parse(rel, src); err == nil {
		return fail("it is a valid leaf already; there is nothing to fill in")
	}
	if _, ok := doc.Value("schema_version"); ok {
		if _, v3 := doc.Value(KeySchemaVersion); !v3 {
			return fail("it is a kenkeep v1 or v2 leaf (schema_version); `kk migrate status` says how to convert it")
		}
	}
	n := &Node{Format: SchemaVersion, Path: rel, Body: doc.Body(), BodySize: bodySize(doc.Body()), doc: doc}
	var filled []Filled
	fill := func(field string, v any, from string) {
		filled = append(filled, Filled{Field: field, Value: v, From: from})
	}
	var problems []string
	str := func(key string) (string, bool) {
		v, ok := doc.Value(key)
		if !ok || v == nil {
			return "", false
		}
		s, isString := v.(string)
		if !isString {
			problems = append(problems, fmt.Sprintf("field %q must be a string, not %s", key, kindOf(v)))
			return "", false
		}
		return strings.TrimSpace(s), true
	}
	list := func(key string) []string {
		v, ok := doc.Value(key)
		if !ok || v == nil {
			fill(key, []string{}, "default")
			return []string{}
		}
		switch x := v.(type) {
		case string:
			var out []string
			for p := range strings.SplitSeq(x, ",") {
				if p = strings.TrimSpace(p); p != "" {
					out = append(out, p)
				}
			}
			fill(key, List(out), "comma list")
			return List(out)
		case []any:
			out := make([]string, 0, len(x))
			for i, it := range x {
				s, ok := it.(string)
				if !ok {
					problems = append(problems, fmt.Sprintf("field %q: item %d must be a string, not %s", key, i+1, kindOf(it)))
					return nil
				}
				out = append(out, s)
			}
			return out
		}
		problems = append(problems, fmt.Sprintf("field %q must be a list of strings, not %s", key, kindOf(v)))
		return nil
	}

	// Type.
	if t, ok := str(KeyType); ok && t != "" {
		switch {
		case validType(t):
			n.Type = t
		case validType(strings.ToLower(t)):
			n.Type = strings.ToLower(t)
			fill(KeyType, n.Type, "lowercase")
		default:
			problems = append(problems, fmt.Sprintf("field %q: %q is not a valid type; use lowercase letters, digits and -", KeyType, t))
		}
	} else if _, present := doc.Value(KeyType); !present || t == "" {
		n.Type = AdoptType
		fill(KeyType, n.Type, "default")
	}
	// Title.
	if t, ok := str(KeyTitle); ok && t != "" {
		n.Title = t
	} else if h := firstHeading(n.Body); h != "" {
		n.Title = h
		fill(KeyTitle, h, "title heading")
	} else {
		return fail("it has no title: give it a title: line in its front matter, or a first \"# \" heading")
	}
	if strings.ContainsAny(n.Title, "\n\r") {
		problems = append(problems, fmt.Sprintf("field %q must be one line", KeyTitle))
	}
	// Description.
	if d, ok := str(KeyDescription); ok {
		n.Description = d
	} else if s, ok := str("summary"); ok && s != "" {
		n.Description = s
		fill(KeyDescription, s, "summary")
	} else {
		n.Description = firstSentence(n.Body, adoptDescriptionMax)
		from := "first sentence"
		if n.Description == "" {
			from = "default"
		}
		fill(KeyDescription, n.Description, from)
	}
	n.Tags = list(KeyTags)
	n.DerivedFrom = list(KeyDerivedFrom)
	n.RelatesTo = list(KeyRelatesTo)
	n.DependsOn = list(KeyDependsOn)
	if _, ok := doc.Value(KeyPhrasings); ok {
		n.Phrasings = list(KeyPhrasings)
	}
	if _, ok := doc.Value(KeySchemaVersion); !ok {
		fill(KeySchemaVersion, int64(SchemaVersion), "default")
	} else if v, _ := doc.Value(KeySchemaVersion); v != int64(SchemaVersion) {
		if s, ok := v.(string); ok && strings.TrimSpace(s) == strconv.Itoa(SchemaVersion) {
			problems = append(problems, fmt.Sprintf("field %q is the string %q; write the number %d, without quotes", KeySchemaVersion, s, SchemaVersion))
		} else {
			problems = append(problems, fmt.Sprintf("field %q is %v; kk writes version %d", KeySchemaVersion, v, SchemaVersion))
		}
	}
	// Confidence, status, stale_after: as written, or the default.
	if c, ok := str(KeyConfidence); ok && c != "" {
		if !slices.Contains(Confidences, c) {
			problems = append(problems, fmt.Sprintf("field %q is %q; use one of %s", KeyConfidence, c, strings.Join(Confidences, ", ")))
		}
		n.Confidence = c
	} else {
		n.Confidence = AdoptConfidence
		fill(KeyConfidence, n.Confidence, "default")
	}
	if s, ok := str(KeyStatus); ok && s != "" {
		if !slices.Contains(Statuses, s) {
			problems = append(problems, fmt.Sprintf("field %q is %q; use one of %s", KeyStatus, s, strings.Join(Statuses, ", ")))
		}
		n.Status = s
	}
	if s, ok := str(KeyStaleAfter); ok && s != "" {
		if !isDate(s) {
			problems = append(problems, fmt.Sprintf("field %q is %q; use a date like 2026-12-31", KeyStaleAfter, s))
		}
		n.StaleAfter = s
	}
	n.Generated, _ = doc.Value(KeyGenerated)
	n.Verified, _ = doc.Value(KeyVerified)
	n.Sources, _ = doc.Value(KeySources)
	n.GraphLinks = graphLinks(doc)
	// Id: as written, else the file name when it is one, else derived.
	dir := path.Dir(rel)
	if dir == "." {
		dir = ""
	}
	if id, ok := str(KeyID); ok && id != "" {
		n.ID = id
	} else if n.Type != "" {
		id, from, err := adoptID(n.Type, n.Title, rel, nil)
		if err != nil {
			problems = append(problems, err.Error())
		}
		n.ID = id
		fill(KeyID, id, from)
	}
	if len(problems) > 0 {
		return fail("%s; fix that by hand", strings.Join(problems, "; "))
	}
	n.Path = path.Join(dir, n.ID+".md")
	if msg := CheckNaming(n.Type, n.ID, n.Path); msg != "" {
		return fail("%s; fix kk_id by hand", msg)
	}
	return n, filled, nil
}

// adoptID is the id adoption gives a leaf of type typ and the given title
// whose file is rel: the file's name when it is already a valid id for the
// type (practice-retries.md) and taken (nil: none) does not hold it, else
// one derived from the type and title as kk node write derives it (the
// caller makes it unique). from says which: "file name" or "title".
func adoptID(typ, title, rel string, taken func(string) bool) (id, from string, err error) {
	if base := strings.TrimSuffix(path.Base(rel), ".md"); CheckNaming(typ, base, base+".md") == "" && (taken == nil || !taken(base)) {
		return base, "file name", nil
	}
	id, err = DeriveID(typ, title)
	if err != nil {
		return "", "title", fmt.Errorf("no id can be made from the title: %v; give it a kk_id", err)
	}
	return id, "title", nil
}

// AdoptCopy gives n, a valid leaf that is a copy of another (a person
// copied the other's file to start a note and kept its kk_id), an id of its
// own by the rule Adopt gives a note without one: its file name when that
// is a valid id for its type that taken does not hold, else one derived
// from its type and title. Its path becomes <id>.md in its folder; the
// caller makes the id unique (SetID) and renames the file, as for Adopt.
// n keeps its body and every other key. filled lists the id, with the one
// it had (Was).
func AdoptCopy(n *Node, taken func(id string) bool) ([]Filled, error) {
	id, from, err := adoptID(n.Type, n.Title, n.Path, taken)
	if err != nil {
		return nil, &AdoptError{Path: n.Path, Msg: err.Error()}
	}
	was := n.ID
	n.ID = id
	n.Path = path.Join(path.Dir(n.Path), id+".md")
	return []Filled{{Field: KeyID, Value: id, From: from, Was: was}}, nil
}

// SetID gives an adopted leaf another id (made unique by the caller) and
// the file name that goes with it, and records the change in filled.
func (n *Node) SetID(id string, filled []Filled) []Filled {
	n.ID = id
	n.Path = path.Join(path.Dir(n.Path), id+".md")
	for i := range filled {
		if filled[i].Field == KeyID {
			filled[i].Value = id
			return filled
		}
	}
	return append(filled, Filled{Field: KeyID, Value: id, From: "unique id"})
}

// firstHeading is the text of the body's first "# " heading outside code
// fences, or "".
func firstHeading(body []byte) string {
	fence := ""
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimRight(line, "\r")
		if f := fenceOf(line); f != "" {
			if fence == "" {
				fence = f
			} else if strings.HasPrefix(strings.TrimLeft(line, " "), fence) {
				fence = ""
			}
			continue
		}
		if fence != "" {
			continue
		}
		if h, ok := strings.CutPrefix(line, "# "); ok {
			h = strings.TrimSpace(strings.TrimRight(strings.TrimSpace(h), "#"))
			if h != "" {
				return h
			}
		}
	}
	return ""
}

// fenceOf is the fence a line opens or closes ("```" or "~~~"), or "".
func fenceOf(line string) string {
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return ""
	}
	for _, f := range []string{"```", "~~~"} {
		if strings.HasPrefix(t, f) {
			return f
		}
	}
	return ""
}

// firstSentence is the first sentence of the body's first paragraph of
// prose (headings, code, lists, quotes and HTML comments skipped), cut at
// a word boundary to at most max characters; "" when there is none.
func firstSentence(body []byte, max int) string {
	var para []string
	fence := ""
	for _, line := range strings.Split(string(body), "\n") {
		line = strings.TrimSpace(strings.TrimRight(line, "\r"))
		if f := fenceOf(line); f != "" {
			if fence == "" {
				fence = f
			} else {
				fence = ""
			}
			if len(para) > 0 {
				break
			}
			continue
		}
		if fence != "" {
			continue
		}
		prose := line != "" && !strings.HasPrefix(line, "#") && !strings.HasPrefix(line, "<") && !strings.HasPrefix(line, ">") &&
			!strings.HasPrefix(line, "- ") && !strings.HasPrefix(line, "* ") && !strings.HasPrefix(line, "|")
		if !prose {
			if len(para) > 0 {
				break
			}
			continue
		}
		para = append(para, line)
	}
	text := strings.Join(para, " ")
	for i := 0; i < len(text); i++ {
		if c := text[i]; (c == '.' || c == '!' || c == '?') && (i+1 == len(text) || text[i+1] == ' ') {
			text = text[:i+1]
			break
		}
	}
	if utf8.RuneCountInString(text) <= max {
		return text
	}
	r := []rune(text)[:max]
	cut := string(r)
	if i := strings.LastIndexByte(cut, ' '); i > 0 {
		cut = cut[:i]
	}
	return strings.TrimRight(cut, " ,;:") + "…"
}
