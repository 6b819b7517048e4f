package harness

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/kk-project/kk/internal/atomicfile"
)

// Object is a JSON object that keeps its keys in order, so that editing a
// user's settings file changes only the keys kk owns. Values are kept as
// raw JSON; nested objects are edited by parsing them with ParseObject.
type Object struct {
	keys   []string
	values map[string]json.RawMessage
}

// ParseObject parses data (a JSON object, or empty) keeping key order.
func ParseObject(data []byte) (*Object, error) {
	o := &Object{values: map[string]json.RawMessage{}}
	if len(bytes.TrimSpace(data)) == 0 {
		return o, nil
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key := kt.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if _, dup := o.values[key]; !dup {
			o.keys = append(o.keys, key)
		}
		o.values[key] = raw
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err == nil {
		return nil, errors.New("data after the JSON object")
	}
	return o, nil
}

// Keys returns the keys in order.
func (o *Object) Keys() []string { return append([]string(nil), o.keys...) }

// Get returns the raw value of key.
func (o *Object) Get(key string) (json.RawMessage, bool) {
	v, ok := o.values[key]
	return v, ok
}

// Set sets key to the JSON encoding of v, keeping the key's place if it
// exists and appending it otherwise. v may be a json.RawMessage or an
// *Object.
func (o *Object) Set(key string, v any) error {
	var raw json.RawMessage
	switch x := v.(type) {
	case json.RawMessage:
		raw = x
	case *Object:
		b, err := x.MarshalJSON()
		if err != nil {
			return err
		}
		raw = b
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return err
		}
		raw = b
	}
	if _, ok := o.values[key]; !ok {
		o.keys = append(o.keys, key)
	}
	o.values[key] = raw
	return nil
}

// Delete removes key.
func (o *Object) Delete(key string) {
	if _, ok := o.values[key]; !ok {
		return
	}
	delete(o.values, key)
	for i, k := range o.keys {
		if k == key {
			o.keys = append(o.keys[:i], o.keys[i+1:]...)
			break
		}
	}
}

// Len is the number of keys.
func (o *Object) Len() int { return len(o.keys) }

// MarshalJSON writes the object compactly, keys in order.
func (o *Object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		var c bytes.Buffer
		if err := json.Compact(&c, o.values[k]); err != nil {
			return nil, fmt.Errorf("value of %q: %w", k, err)
		}
		b.Write(c.Bytes())
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// Indented writes the object indented by two spaces with a final newline,
// the layout the harnesses' own tools write.
func (o *Object) Indented() ([]byte, error) {
	compact, err := o.MarshalJSON()
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	if err := json.Indent(&b, compact, "", "  "); err != nil {
		return nil, err
	}
	b.WriteByte('\n')
	return b.Bytes(), nil
}

// EditJSONFile applies edit to the JSON object in path (an empty object
// when the file does not exist) and writes the result atomically when it
// changed. A file whose content is not a JSON object is an error naming
// it, and is left alone. remove reports whether an edit that leaves an
// empty object should delete the file (uninstall of a file kk created).
// A symbolic link is written through (see atomicfile.Follow: the link
// stays, the file it names inside root changes) and never removed.
func EditJSONFile(root, path string, edit func(*Object) error, removeIfEmpty bool) (action string, err error) {
	target, err := atomicfile.Follow(root, path)
	if err != nil {
		return "", err
	}
	if target != path {
		removeIfEmpty = false
	}
	path = target
	old, err := os.ReadFile(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", notAFolder(root, path, err)
	}
	exists := err == nil
	o, err := ParseObject(old)
	if err != nil {
		return "", fmt.Errorf("%s: %v; fix or remove the file, then run kk again", path, err)
	}
	if err := edit(o); err != nil {
		return "", err
	}
	if o.Len() == 0 && removeIfEmpty {
		if !exists {
			return "", nil
		}
		if err := os.Remove(path); err != nil {
			return "", err
		}
		return "removed", nil
	}
	data, err := o.Indented()
	if err != nil {
		return "", err
	}
	if exists && bytes.Equal(old, data) {
		return "", nil
	}
	if exists {
		if same, _ := sameJSON(old, data); same {
			return "", nil // only the layout differs: leave the user's file alone
		}
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return "", notAFolder(root, path, err)
	}
	if err := atomicfile.Write(path, data, 0o644); err != nil {
		return "", err
	}
	if exists {
		return "updated", nil
	}
	return "created", nil
}

// sameJSON reports whether a and b are the same JSON document, key order
// included.
func sameJSON(a, b []byte) (bool, error) {
	var ca, cb bytes.Buffer
	if err := json.Compact(&ca, a); err != nil {
		return false, err
	}
	if err := json.Compact(&cb, b); err != nil {
		return false, err
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes()), nil
}

// Marker lines around the blocks kk owns inside user files (AGENTS.md and
// other instruction files).
const (
	BlockStart = "<!-- kk:start -->"
	BlockEnd   = "<!-- kk:end -->"
)

// Markers are the two marker lines around a block kk owns inside a user
// file.
type Markers struct{ Start, End string }

// KKMarkers are BlockStart and BlockEnd.
var KKMarkers = Markers{Start: BlockStart, End: BlockEnd}

// FindBlock is KKMarkers.Find.
func FindBlock(text string) (lo, hi int, ok bool, err error) { return KKMarkers.Find(text) }

// BlockError is KKMarkers.Error.
func BlockError(file string, err error) error { return KKMarkers.Error(file, err) }

// UpsertBlock is KKMarkers.Upsert.
func UpsertBlock(text, body string) (string, error) { return KKMarkers.Upsert(text, body) }

// RemoveBlock is KKMarkers.Remove.
func RemoveBlock(text string) (string, error) { return KKMarkers.Remove(text) }

// Find returns where the block is in text: from the start of its start
// marker line to the end of its end marker line (the newline after it not
// included); ok is false when text has no marker line. A marker is a line
// holding only the marker: one named inside a sentence is the user's
// text. Any other layout than one start line followed by one end line (a
// marker without its partner, an end before the start, two blocks) is an
// error: which lines are kk's cannot be told, and a write would take the
// user's text between the markers with it.
func (m Markers) Find(text string) (lo, hi int, ok bool, err error) {
	var starts, ends []int // offsets of the marker lines
	endOf := map[int]int{}
	for off := 0; off < len(text); {
		eol := strings.IndexByte(text[off:], '\n')
		if eol < 0 {
			eol = len(text)
		} else {
			eol += off
		}
		switch strings.TrimSpace(text[off:eol]) {
		case m.Start:
			starts = append(starts, off)
		case m.End:
			ends = append(ends, off)
			endOf[off] = eol
		}
		off = eol + 1
	}
	switch {
	case len(starts) == 0 && len(ends) == 0:
		return 0, 0, false, nil
	case len(starts) == 1 && len(ends) == 1 && starts[0] < ends[0]:
		return starts[0], endOf[ends[0]], true, nil
	case len(starts) > 1 || len(ends) > 1:
		return 0, 0, false, fmt.Errorf("%d %s lines and %d %s lines, where kk writes one block", len(starts), m.Start, len(ends), m.End)
	case len(ends) == 0:
		return 0, 0, false, fmt.Errorf("a %s line with no %s line after it", m.Start, m.End)
	case len(starts) == 0:
		return 0, 0, false, fmt.Errorf("a %s line with no %s line before it", m.End, m.Start)
	default:
		return 0, 0, false, fmt.Errorf("a %s line before its %s line", m.End, m.Start)
	}
}

// Error is the error of a write refused because of the block layout Find
// reported in file.
func (m Markers) Error(file string, err error) error {
	return fmt.Errorf("%s has %v; kk left it unchanged: keep one %s line and one %s line after it around kk's block (or remove both), then run kk again", file, err, m.Start, m.End)
}

// Block is the whole block holding body, without a newline after it.
func (m Markers) Block(body string) string {
	return m.Start + "\n" + strings.TrimRight(body, "\n") + "\n" + m.End
}

// Upsert returns text with the block set to body: replaced in place when
// present, appended after a blank line otherwise. The user's text outside
// the block is kept byte for byte. A layout of markers Find refuses is an
// error, and text is not changed.
func (m Markers) Upsert(text, body string) (string, error) {
	block := m.Block(body)
	lo, hi, ok, err := m.Find(text)
	if err != nil {
		return text, err
	}
	if ok {
		return text[:lo] + block + text[hi:], nil
	}
	if text == "" {
		return block + "\n", nil
	}
	if !strings.HasSuffix(text, "\n") {
		text += "\n"
	}
	return text + "\n" + block + "\n", nil
}

// Remove returns text without the block (and the blank line Upsert put
// before it). A layout of markers Find refuses is an error, and text is
// not changed.
func (m Markers) Remove(text string) (string, error) {
	start, end, ok, err := m.Find(text)
	if err != nil || !ok {
		return text, err
	}
	if strings.HasPrefix(text[end:], "\n") {
		end++
	}
	if strings.HasSuffix(text[:start], "\n\n") {
		start--
	}
	return text[:start] + text[end:], nil
}

// notAFolder explains err, met reading or making path under root, when a
// folder of path is a file (.claude made as a file): the error names that
// file and what to do, where the system's said only "not a directory".
func notAFolder(root, path string, err error) error {
	if !errors.Is(err, syscall.ENOTDIR) {
		return err
	}
	for dir := filepath.Dir(path); len(dir) > len(root); dir = filepath.Dir(dir) {
		if fi, statErr := os.Stat(dir); statErr == nil && !fi.IsDir() {
			rel, _ := filepath.Rel(root, dir)
			return fmt.Errorf("%s is a file, where kk needs a folder to write %s; move the file aside, then run kk again", filepath.ToSlash(rel), filepath.Base(path))
		}
	}
	return err
}
