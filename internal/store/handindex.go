package store

import (
	"fmt"
	"path"

	"github.com/kk-project/kk/internal/frontmatter"
	"github.com/kk-project/kk/internal/node"
)

// HandIndex reports whether the index.md at rel (relative to nodes/:
// "index.md", "go/index.md") is a note a person wrote and named index.md,
// not an index kk generates: its front matter declares a type, which no
// index has (a folder's has no front matter, the root's only
// okf_version), and it is not a stray copy of a leaf the tree has (a
// kk_id that leaf reports a leaf of; leaf may be nil). It returns the
// problem to report, naming the file, or nil (for a generated index, and
// for a file that does not exist or cannot be read). Writers never
// overwrite nor remove such a file: it is the person's text, and the
// folder has no generated index until they rename it.
func HandIndex(k *KB, rel string, leaf func(id string) bool) error {
	src, err := k.ReadFile(k.NodePath(rel))
	if err != nil {
		return nil
	}
	doc, err := frontmatter.Parse(src)
	if err != nil {
		return nil
	}
	v, ok := doc.Value("type")
	if !ok {
		return nil
	}
	if id, ok := doc.Value("kk_id"); ok && leaf != nil {
		if id, ok := id.(string); ok && leaf(id) {
			return nil
		}
	}
	typ, _ := v.(string)
	if typ == "" || node.Slugify(typ) != typ {
		typ = "<type>"
	}
	slug := "<slug>"
	if t, ok := doc.Value("title"); ok {
		if s, ok := t.(string); ok && node.Slugify(s) != "" {
			slug = node.Slugify(s)
		}
	}
	want := path.Join(path.Dir(rel), typ+"-"+slug+".md")
	return &node.Error{Path: rel, Msg: fmt.Sprintf("a note written by hand named index.md (its front matter has type); kk generates the index.md of every folder and leaves this one as it is: rename it (for example to %s), then run `kk node adopt` on it", want)}
}
