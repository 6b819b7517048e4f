package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"

	"github.com/kk-project/kk/internal/node"
)

// Redirects is the ledger nodes/.redirects.json: each id retired by a
// split-leaf, mapped to the ids of the leaves that replaced it. Edges keep
// naming the retired id; readers follow the ledger to its successors.
type Redirects map[string][]string

// readRedirects reads nodes/.redirects.json. A missing file is an empty
// ledger; a malformed one is an error naming the file.
func (k *KB) ReadRedirects() (Redirects, error) {
	data, err := k.ReadFile(k.RedirectsPath())
	if errors.Is(err, fs.ErrNotExist) {
		return Redirects{}, nil
	}
	name := k.Rel(k.RedirectsPath())
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", name, err)
	}
	return ParseRedirects(name, data)
}

// ParseRedirects decodes a redirects ledger; name labels it in errors. The
// ledger is a JSON object mapping each retired id to a list of successor
// ids (non-empty strings), after a UTF-8 byte order mark if there is one.
func ParseRedirects(name string, data []byte) (Redirects, error) {
	if from, to := node.ConflictMarkers(data); from > 0 {
		// two branches that each split a leaf both add an entry: no
		// merge driver combines a JSON object line by line
		return nil, fmt.Errorf("%s: %s (lines %d to %d): a git merge, rebase or cherry-pick stopped on a conflict in this file; keep the entries of both sides in one JSON object (a comma between them), remove the <<<<<<< ======= >>>>>>> lines, then `git add` it", name, node.ConflictMarkersMsg, from, to)
	}
	var raw map[string]any
	// A byte order mark an editor put in front is not part of the JSON.
	dec := json.NewDecoder(bytes.NewReader(bytes.TrimPrefix(data, BOM)))
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: invalid JSON: %v", name, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%s: invalid JSON: unexpected data after the ledger object", name)
	}
	if raw == nil {
		return nil, fmt.Errorf("%s: must be a JSON object mapping each retired id to a list of successor ids", name)
	}
	out := make(Redirects, len(raw))
	for old, v := range raw {
		list, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%s: entry %q must be a list of successor ids", name, old)
		}
		ids := make([]string, 0, len(list))
		for _, e := range list {
			s, ok := e.(string)
			if !ok || s == "" {
				return nil, fmt.Errorf("%s: entry %q must list successor ids as non-empty strings", name, old)
			}
			ids = append(ids, s)
		}
		out[old] = ids
	}
	return out, nil
}

// Render returns the ledger as kenkeep writes it: a JSON object with keys
// in code-unit order, indented by two spaces, with a trailing newline.
func (r Redirects) Render() []byte {
	keys := make([]string, 0, len(r))
	for k := range r {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, CompareUTF16)
	if len(keys) == 0 {
		return []byte("{}\n")
	}
	var b bytes.Buffer
	b.WriteString("{\n")
	for i, k := range keys {
		b.WriteString("  ")
		b.Write(jsonString(k))
		b.WriteString(": ")
		if len(r[k]) == 0 {
			b.WriteString("[]")
		} else {
			b.WriteString("[\n")
			for j, id := range r[k] {
				b.WriteString("    ")
				b.Write(jsonString(id))
				if j < len(r[k])-1 {
					b.WriteByte(',')
				}
				b.WriteByte('\n')
			}
			b.WriteString("  ]")
		}
		if i < len(keys)-1 {
			b.WriteByte(',')
		}
		b.WriteByte('\n')
	}
	b.WriteString("}\n")
	return b.Bytes()
}

// jsonString encodes s as a JSON string without HTML escaping, as
// JavaScript's JSON.stringify does.
func jsonString(s string) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // encoding a string cannot fail
	return bytes.TrimSuffix(b.Bytes(), []byte("\n"))
}

// clone returns a deep copy of the ledger.
func (r Redirects) Clone() Redirects {
	out := make(Redirects, len(r))
	for k, v := range r {
		out[k] = slices.Clone(v)
	}
	return out
}

// ResolveRedirect returns the live ids that id stands for. A live id
// stands for itself. A retired id is followed through the ledger, through
// any chain of retirements, to the live ids at the ends of its chains;
// cycles are followed once. The result is sorted, and empty when no chain
// reaches a live id.
func ResolveRedirect(r Redirects, id string, live func(id string) bool) []string {
	if live(id) {
		return []string{id}
	}
	var out []string
	seen := map[string]bool{IDKey(id): true}
	queue := r.successors(id)
	for len(queue) > 0 {
		next := queue[0]
		queue = queue[1:]
		if seen[IDKey(next)] {
			continue
		}
		seen[IDKey(next)] = true
		if live(next) {
			out = append(out, next)
			continue
		}
		queue = append(queue, r.successors(next)...)
	}
	slices.SortFunc(out, CompareUTF16)
	return out
}

// successors returns the ids the ledger retired id to, its entry found
// as kk compares ids, without regard to case (the entry spelled as id
// first; every entry of another spelling after it, in their order).
func (r Redirects) successors(id string) []string {
	out := slices.Clone(r[id])
	key := IDKey(id)
	var others []string
	for old := range r {
		if old != id && IDKey(old) == key {
			others = append(others, old)
		}
	}
	slices.SortFunc(others, CompareUTF16)
	for _, old := range others {
		out = append(out, r[old]...)
	}
	return out
}

// redirectResolver is a node.Resolver that maps a live id to its leaf's
// path and a retired id to the path of the first live id it redirects to,
// so a generated Related link to a retired id leads to its successor.
// paths maps every live id to its path relative to nodes/.
func RedirectResolver(paths func(id string) (string, bool), r Redirects) node.Resolver {
	live := func(id string) bool { _, ok := paths(id); return ok }
	return func(id string) (string, bool) {
		if p, ok := paths(id); ok {
			return p, true
		}
		if len(r) == 0 {
			return "", false
		}
		if to := ResolveRedirect(r, id, live); len(to) > 0 {
			return paths(to[0])
		}
		return "", false
	}
}

// LinkResolver returns the resolver generated Related sections should use
// for leaves of t: ids map to their leaf's path, and retired ids to the
// path of their first live successor in the redirect ledger.
func (t *Tree) LinkResolver(r Redirects) node.Resolver {
	return RedirectResolver(t.Resolve, r)
}

// isLive reports whether a leaf of t has the id.
func (t *Tree) IsLive(id string) bool {
	_, ok := t.byID[IDKey(id)]
	return ok
}

// ids returns every id the ledger names, retired or successor: ids
// that must never be given to a new leaf, or edges to the old meaning
// would silently bind to it.
func (r Redirects) Ids() map[string]bool {
	out := make(map[string]bool, len(r)*2)
	for k, v := range r {
		out[k] = true
		for _, id := range v {
			out[id] = true
		}
	}
	return out
}

// HeldRetired is a leaf that holds an id the ledger retired: a note
// deleted (kk node delete --redirect-to) or renamed (kk node rename), then
// restored by hand under its old id (git checkout <commit> -- <file>, git
// revert, its side kept in a modify/delete conflict).
type HeldRetired struct {
	ID     string   // the ledger's key, as it spells the id
	Path   string   // the leaf's path, relative to nodes/
	LeafID string   // the id as the leaf holds it
	To     []string // the entry's successors, as the ledger lists them
}

// Held returns the ids the ledger retired that a leaf holds, in the
// order of their ids; leaf gives the id a live leaf holds for id
// (compared without regard to case) and its path relative to nodes/. It
// looks each of the ledger's keys up once, and reads nothing.
func (r Redirects) Held(leaf func(id string) (leafID, path string, ok bool)) []HeldRetired {
	var out []HeldRetired
	for old, to := range r {
		if id, p, ok := leaf(old); ok {
			out = append(out, HeldRetired{ID: old, Path: p, LeafID: id, To: slices.Clone(to)})
		}
	}
	slices.SortFunc(out, func(a, b HeldRetired) int { return CompareUTF16(a.ID, b.ID) })
	return out
}
