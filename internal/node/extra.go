package node

import (
	"fmt"
	"slices"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/yamlstyle"
)

// SetExtra sets a front matter key kk's Node does not model (kk_paths,
// kk_version, ...). An existing key keeps its place; a new key goes after
// the others. Keys whose value did not change keep their source bytes when
// the leaf is rendered. Modelled keys (type, title, kk_id, ...) are set
// through the Node's fields and are refused here.
func (n *Node) SetExtra(key string, v any) error {
	return n.editExtra(key, v, false)
}

// DeleteExtra removes a front matter key kk's Node does not model. Removing
// a key that is not there does nothing.
func (n *Node) DeleteExtra(key string) error {
	return n.editExtra(key, nil, true)
}

// editExtra rebuilds the parsed front matter with one key changed, so that
// Render keeps writing every other key exactly as it was.
func (n *Node) editExtra(key string, v any, remove bool) error {
	if n.released {
		return fmt.Errorf("%s: leaf was loaded for reading only and cannot be changed; re-read it first", n.Path)
	}
	if slices.Contains(canonicalOrder, key) || slices.Contains(v2Keys, key) {
		return fmt.Errorf("%s: %q is a modelled key; set it through the node's fields", n.Path, key)
	}
	doc := n.doc
	if doc != nil && !remove {
		if old, had := doc.Value(key); had && frontmatter.Equal(old, plain(v)) {
			return nil // unchanged: keep the source bytes
		}
	}
	if doc == nil {
		empty, err := frontmatter.Parse(nil)
		if err != nil {
			return err
		}
		doc = empty
	}
	var items []frontmatter.Item
	found := false
	for _, k := range doc.Keys() {
		old, _ := doc.Value(k)
		if k != key {
			items = append(items, frontmatter.Item{Key: k, Value: old})
			continue
		}
		found = true
		if !remove {
			items = append(items, frontmatter.Item{Key: k, Value: v})
		}
	}
	if !found {
		if remove {
			return nil
		}
		items = append(items, frontmatter.Item{Key: key, Value: v})
	}
	if len(items) == 0 {
		empty, err := frontmatter.Parse(nil)
		if err != nil {
			return err
		}
		n.doc = empty
		return nil
	}
	src, err := doc.Render(items, doc.Body(), frontmatter.Emit)
	if err != nil {
		return fmt.Errorf("%s: field %q: %w", n.Path, key, err)
	}
	next, err := frontmatter.Parse(src)
	if err != nil {
		return fmt.Errorf("%s: field %q: %w", n.Path, key, err)
	}
	n.doc = next
	return nil
}

// plain converts ordered yamlstyle maps (at any depth) into the plain maps
// front matter values decode to, so that they compare by content.
func plain(v any) any {
	switch x := v.(type) {
	case yamlstyle.Map:
		m := make(map[string]any, len(x))
		for _, it := range x {
			m[it.Key] = plain(it.Value)
		}
		return m
	case []yamlstyle.Map:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = plain(e)
		}
		return out
	}
	return v
}
