package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/kk-project/kk/internal/frontmatter"
)

// Markdown extracts one entity from each markdown document (*.md) under
// its folders whose front matter has both an id and a type key:
//
//	---
//	id: REQ-7
//	type: req
//	title: Users can reset their password   # default: the first heading
//	status: accepted                         # optional, like priority,
//	priority: must                           # severity, owner, description
//	tags: [auth, email]
//	links:
//	  specified_by: [SCN-reset]              # edge type -> id or list of ids
//	  verified_by: TEST-reset-e2e
//	---
//
// links may instead be a list of {type, to, confidence?} mappings. Ids
// are normalised with NormalizeID (REQ-7 is req-7); a target whose edge
// can point at several types (affects, guards) must carry its type prefix.
// Documents without id or type are not entities and are ignored.
type Markdown struct {
	// Folders are repository-relative folders, read recursively.
	Folders []string
}

// Name implements Extractor.
func (*Markdown) Name() string { return "markdown" }

// Sources lists the *.md files under the folders, skipping names that
// start with '.'. A folder that does not exist contributes nothing; one
// that is absolute or climbs out of the repository is an error.
func (m *Markdown) Sources(root string) ([]string, error) {
	var out []string
	for _, folder := range m.Folders {
		clean, err := repoRel(folder)
		if err != nil {
			return nil, fmt.Errorf("docs folder %q: %w", folder, err)
		}
		dir := filepath.Join(root, filepath.FromSlash(clean))
		fi, err := os.Stat(dir)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !fi.IsDir() {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("docs folder %s: %w", clean, err)
		}
		err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if p == dir {
				return nil
			}
			if strings.HasPrefix(d.Name(), ".") {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if d.IsDir() || !strings.HasSuffix(d.Name(), ".md") {
				return nil
			}
			if !d.Type().IsRegular() {
				// A symlink counts when it leads to a regular file.
				if fi, err := os.Stat(p); err != nil || !fi.Mode().IsRegular() {
					return nil
				}
			}
			rel, err := filepath.Rel(root, p)
			if err != nil {
				return err
			}
			out = append(out, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading docs folder %s: %w", clean, err)
		}
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// repoRel checks a configured repository-relative path and returns it clean.
func repoRel(p string) (string, error) {
	s := strings.ReplaceAll(strings.TrimSpace(p), "\\", "/")
	if s == "" {
		return "", errors.New("is empty")
	}
	if strings.HasPrefix(s, "/") || len(s) > 1 && s[1] == ':' {
		return "", errors.New("is absolute; give a path relative to the repository root")
	}
	c := path.Clean(s)
	if c == ".." || strings.HasPrefix(c, "../") {
		return "", errors.New("climbs out of the repository with \"..\"")
	}
	return c, nil
}

// Bounds of the values a document may declare (those of kb_upsert).
const (
	maxTitle       = 255
	maxDescription = 1024
	maxShort       = 64  // status, priority, severity
	maxOwner       = 255 // owner
	maxTags        = 50
)

// Extract implements Extractor.
func (m *Markdown) Extract(_, rel string, src []byte) ([]Entity, error) {
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil, &Error{Source: rel, Msg: "front matter: " + err.Error()}
	}
	rawID, hasID := doc.Value("id")
	rawType, hasType := doc.Value("type")
	if !hasID || !hasType {
		return nil, nil
	}
	fail := func(field, format string, args ...any) error {
		return &Error{Source: rel, Field: field, Msg: fmt.Sprintf(format, args...)}
	}
	typ, ok := rawType.(string)
	if !ok || !slices.Contains(Types, typ) {
		return nil, fail("type", "%s is not an entity type; use one of %s", describe(rawType), strings.Join(Types, ", "))
	}
	var idText string
	switch v := rawID.(type) {
	case string:
		idText = v
	case int64:
		idText = strconv.FormatInt(v, 10)
	default:
		return nil, fail("id", "must be a string, not %s", describe(rawID))
	}
	id, err := NormalizeID(typ, idText)
	if err != nil {
		return nil, fail("id", "%s", err)
	}
	e := Entity{ID: id, Type: typ, Source: rel, Body: string(doc.Body())}
	for _, f := range []struct {
		key string
		max int
		dst *string
	}{
		{"title", maxTitle, &e.Title}, {"description", maxDescription, &e.Description}, {"status", maxShort, &e.Status},
		{"priority", maxShort, &e.Priority}, {"severity", maxShort, &e.Severity}, {"owner", maxOwner, &e.Owner},
	} {
		v, ok := doc.Value(f.key)
		if !ok || v == nil {
			continue
		}
		s, ok := v.(string)
		switch {
		case !ok:
			return nil, fail(f.key, "must be a string, not %s", describe(v))
		case strings.ContainsAny(s, "\r\n"):
			return nil, fail(f.key, "must be one line")
		case len(s) > f.max:
			return nil, fail(f.key, "is %d bytes long; at most %d are allowed", len(s), f.max)
		}
		*f.dst = strings.TrimSpace(s)
	}
	if e.Title == "" {
		e.Title = firstHeading(doc.Body())
	}
	if e.Title == "" {
		e.Title = id
	}
	for _, f := range []struct {
		key string
		dst *string
	}{{"created_at", &e.CreatedAt}, {"updated_at", &e.UpdatedAt}} {
		v, ok := doc.Value(f.key)
		if !ok || v == nil {
			continue
		}
		t, err := docTime(v)
		if err != nil {
			return nil, fail(f.key, "%v", err)
		}
		*f.dst = t
	}
	if e.Tags, err = tagsOf(doc); err != nil {
		return nil, &Error{Source: rel, Field: "tags", Msg: err.Error()}
	}
	if v, ok := doc.Value("links"); ok && v != nil {
		if e.Edges, err = linksOf(typ, v); err != nil {
			var fe *fieldErr
			if errors.As(err, &fe) {
				return nil, &Error{Source: rel, Field: "links" + fe.field, Msg: fe.msg}
			}
			return nil, &Error{Source: rel, Field: "links", Msg: err.Error()}
		}
	}
	return []Entity{e}, nil
}

// docTime reads a document's time: a time value, or a string in RFC 3339
// or YYYY-MM-DD (midnight UTC), as RFC 3339 in UTC.
func docTime(v any) (string, error) {
	switch t := v.(type) {
	case time.Time:
		return t.UTC().Format(time.RFC3339), nil
	case string:
		s := strings.TrimSpace(t)
		if p, err := time.Parse(time.RFC3339, s); err == nil {
			return p.UTC().Format(time.RFC3339), nil
		}
		if p, err := time.Parse(time.DateOnly, s); err == nil {
			return p.UTC().Format(time.RFC3339), nil
		}
		return "", fmt.Errorf("%q is not a time: use RFC 3339 (2026-05-19T08:00:00Z) or a date (2026-05-19)", s)
	}
	return "", fmt.Errorf("must be a time, not %s", describe(v))
}

func tagsOf(doc *frontmatter.Doc) ([]string, error) {
	v, ok := doc.Value("tags")
	if !ok || v == nil {
		return nil, nil
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("must be a list of strings, not %s", describe(v))
	}
	if len(list) > maxTags {
		return nil, fmt.Errorf("has %d tags; at most %d are allowed", len(list), maxTags)
	}
	var tags []string
	for i, item := range list {
		s, ok := item.(string)
		if !ok || strings.TrimSpace(s) == "" || strings.ContainsFunc(strings.TrimSpace(s), isSpace) {
			return nil, fmt.Errorf("item %d (%s) must be one word, with no whitespace", i, describe(item))
		}
		if s = strings.TrimSpace(s); !slices.Contains(tags, s) {
			tags = append(tags, s)
		}
	}
	return tags, nil
}

func isSpace(r rune) bool {
	return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '\v' || r == '\f'
}

// fieldErr is a links problem at a path below links (".verified_by[1]").
type fieldErr struct {
	field, msg string
}

func (e *fieldErr) Error() string { return e.field + ": " + e.msg }

// linksOf reads the links key: either a mapping of edge type to an id or a
// list of ids, or a list of {type, to, confidence?} mappings.
func linksOf(from string, v any) ([]Edge, error) {
	var edges []Edge
	switch x := v.(type) {
	case map[string]any:
		types := make([]string, 0, len(x))
		for t := range x {
			types = append(types, t)
		}
		slices.Sort(types)
		for _, t := range types {
			var targets []any
			switch y := x[t].(type) {
			case string, int64:
				targets = []any{y}
			case []any:
				targets = y
			default:
				return nil, &fieldErr{"." + t, fmt.Sprintf("must be an id or a list of ids, not %s", describe(x[t]))}
			}
			for i, item := range targets {
				field := "." + t
				if _, isList := x[t].([]any); isList {
					field = fmt.Sprintf(".%s[%d]", t, i)
				}
				to, ok := idText(item)
				if !ok {
					return nil, &fieldErr{field, fmt.Sprintf("must be an id, not %s", describe(item))}
				}
				e, _, msg := edge(from, t, to, nil)
				if msg != "" {
					return nil, &fieldErr{field, msg}
				}
				edges = addEdge(edges, e)
			}
		}
	case []any:
		for i, item := range x {
			field := fmt.Sprintf("[%d]", i)
			m, ok := item.(map[string]any)
			if !ok {
				return nil, &fieldErr{field, fmt.Sprintf("must be a mapping {type, to, confidence?}, not %s", describe(item))}
			}
			keys := make([]string, 0, len(m))
			for k := range m {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				if k != "type" && k != "to" && k != "confidence" {
					return nil, &fieldErr{field + "." + k, "is not a link key; use type, to and confidence"}
				}
			}
			t, ok := m["type"].(string)
			if !ok || t == "" {
				return nil, &fieldErr{field + ".type", "is required (an edge type)"}
			}
			to, ok := idText(m["to"])
			if !ok {
				return nil, &fieldErr{field + ".to", "is required (the target id)"}
			}
			var conf *float64
			switch c := m["confidence"].(type) {
			case nil:
			case float64:
				conf = &c
			case int64:
				f := float64(c)
				conf = &f
			default:
				return nil, &fieldErr{field + ".confidence", fmt.Sprintf("must be a number from 0 to 1, not %s", describe(c))}
			}
			e, part, msg := edge(from, t, to, conf)
			if msg != "" {
				return nil, &fieldErr{field + "." + part, msg}
			}
			edges = addEdge(edges, e)
		}
	default:
		return nil, fmt.Errorf("must be a mapping of edge type to ids, or a list of {type, to} mappings, not %s", describe(v))
	}
	return edges, nil
}

func idText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, strings.TrimSpace(x) != ""
	case int64:
		return strconv.FormatInt(x, 10), true
	}
	return "", false
}

var headingLine = regexp.MustCompile(`^ {0,3}#{1,6}[ \t]+(.*?)(?:[ \t]+#+)?[ \t]*$`)

// firstHeading returns the text of the body's first ATX heading outside
// fenced code, or "".
func firstHeading(body []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	fence := ""
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		trimmed := strings.TrimLeft(line, " ")
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		if m := headingLine.FindStringSubmatch(line); m != nil && strings.TrimSpace(m[1]) != "" {
			t := strings.TrimSpace(m[1])
			if len(t) > maxTitle {
				t = strings.ToValidUTF8(t[:maxTitle], "")
			}
			return t
		}
	}
	return ""
}

// describe names a decoded YAML value's kind for messages.
func describe(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case string:
		return strconv.Quote(x)
	case bool:
		return "a boolean"
	case int64, float64:
		return fmt.Sprintf("the number %v", x)
	case []any:
		return "a list"
	case map[string]any:
		return "a mapping"
	}
	return fmt.Sprintf("%T", v)
}
