package kb

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/kk-project/kk/internal/atomicfile"
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

// NodeInput is a whole leaf to write. It is the JSON that
// `kk node write --input` takes.
type NodeInput struct {
	Type        string   `json:"type" jsonschema:"minLength=1,description=Kind of node: practice (how we build) or map (what exists); other lowercase types are accepted."`
	Slug        string   `json:"slug,omitempty" jsonschema:"description=Slug or title the id is derived from (<type>-<slug>); defaults to the title."`
	Title       string   `json:"title" jsonschema:"minLength=1,description=Display name."`
	Description string   `json:"description" jsonschema:"description=One-line summary."`
	Tags        []string `json:"tags,omitempty"`
	RelatesTo   []string `json:"relates_to,omitempty" jsonschema:"description=Ids of loosely related nodes."`
	DependsOn   []string `json:"depends_on,omitempty" jsonschema:"description=Ids of nodes this one depends on."`
	DerivedFrom []string `json:"derived_from,omitempty" jsonschema:"description=Provenance: document paths\\, URLs\\, session ids."`
	Confidence  string   `json:"confidence,omitempty" jsonschema:"enum=low,enum=medium,enum=high,description=Defaults to high."`
	Folder      string   `json:"folder,omitempty" jsonschema:"description=Folder under nodes/ (created when missing); default the root\\, or the existing leaf's folder on update."`
	Status      string   `json:"status,omitempty" jsonschema:"enum=draft,enum=stable,enum=deprecated"`
	StaleAfter  string   `json:"stale_after,omitempty" jsonschema:"description=Date after which the node should be reviewed (YYYY-MM-DD)."`
	Body        string   `json:"body" jsonschema:"description=Markdown body."`
	Phrasings   []string `json:"phrasings,omitempty" jsonschema:"description=How a developer would ask for this node in their own words: questions or symptoms\\, one line each (kk_phrasings; search indexes them). Replaced on update when given."`
	SourceDoc   string   `json:"source_doc,omitempty" jsonschema:"description=Repository-relative document this node was bootstrapped from (with source_hash)."`
	SourceHash  string   `json:"source_hash,omitempty" jsonschema:"description=SHA-256 of source_doc's content (with source_doc)."`
}

// WriteResult says what WriteNode did.
type WriteResult struct {
	ID      string   `json:"id"`
	Path    string   `json:"path"` // relative to the repository root
	Action  string   `json:"action"`
	Index   []string `json:"index_changed"`
	Unknown []string `json:"unknown_edges"` // edge targets that are not (yet) in the tree
}

// Validate checks the input before anything is read or written.
func (in *NodeInput) Validate() error {
	field := func(name, msg string) error { return fmt.Errorf("field %q: %s", name, msg) }
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
		return field("title", "is longer than 255 characters")
	}
	if strings.ContainsAny(in.Title+in.Description, "\n\r") {
		return field("title/description", "must be one line")
	}
	if in.Confidence != "" && !slices.Contains(node.Confidences, in.Confidence) {
		return field("confidence", fmt.Sprintf("is %q; use low, medium or high", in.Confidence))
	}
	if (in.SourceDoc == "") != (in.SourceHash == "") {
		return field("source_doc", "source_doc and source_hash go together; give both or neither")
	}
	if _, err := node.CleanFolder(in.Folder); err != nil {
		return field("folder", err.Error())
	}
	if len(in.Body) > node.MaxSize {
		return field("body", fmt.Sprintf("is %d bytes; the limit is %d", len(in.Body), node.MaxSize))
	}
	if !utf8.ValidString(in.Body) {
		return field("body", "is not valid UTF-8")
	}
	for name, list := range map[string][]string{"tags": in.Tags, "relates_to": in.RelatesTo, "depends_on": in.DependsOn, "derived_from": in.DerivedFrom, "phrasings": in.Phrasings} {
		for _, v := range list {
			if strings.TrimSpace(v) == "" || strings.ContainsAny(v, "\n\r") {
				return field(name, fmt.Sprintf("value %q must be non-empty and on one line", v))
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
	Command string // recorded in the writer lock
	// NoIndex leaves the generated index files alone, for callers that
	// write many leaves and rebuild once at the end.
	NoIndex bool
}

// WriteNode writes one leaf under the writer lock and, unless
// opts.NoIndex, brings the index files up to date.
func (k *KB) WriteNode(ctx context.Context, in NodeInput, opts WriteOptions) (*WriteResult, error) {
	if opts.Mode == "" {
		opts.Mode = Create
	}
	if err := in.Validate(); err != nil {
		return nil, err
	}
	if len(in.RelatesTo)+len(in.DependsOn) > 0 {
		in.RelatesTo, in.DependsOn = dedupe(in.RelatesTo), dedupe(in.DependsOn)
	}
	var res *WriteResult
	err := k.WithLock(ctx, opts.Command, func() error {
		var err error
		res, err = k.writeNodeLocked(ctx, in, opts)
		return err
	})
	return res, err
}

func (k *KB) writeNodeLocked(ctx context.Context, in NodeInput, opts WriteOptions) (*WriteResult, error) {
	mode := opts.Mode
	t, err := k.ReadTree(LoadOptions{})
	if err != nil {
		return nil, err
	}
	if err := requireV3(t); err != nil {
		return nil, err
	}
	slug := in.Slug
	if slug == "" {
		slug = in.Title
	}
	id := node.DeriveID(in.Type, slug)
	var n *node.Node
	action := "created"
	existing, exists := t.ByID(id)
	switch {
	case exists && mode == Create:
		return nil, fmt.Errorf("duplicate id %s: a leaf with this id already exists at %s; pass --update to replace it or --unique to write %s-2",
			id, filepath.ToSlash(filepath.Join(DirName, "nodes", existing.Path)), id)
	case exists && mode == Unique:
		id, err = node.UniqueID(func(s string) bool { _, ok := t.ByID(s); return ok }, id)
		if err != nil {
			return nil, err
		}
	case exists && mode == Update:
		n, err = k.ReadLeaf(existing.Path)
		if err != nil {
			return nil, err
		}
		if n.Type != in.Type {
			return nil, fmt.Errorf("field \"type\": %s is a %s; a node never changes kind", id, n.Type)
		}
		action = "updated"
	}
	folder, _ := node.CleanFolder(in.Folder)
	if n == nil {
		n = &node.Node{Format: node.SchemaVersion}
	} else if in.Folder == "" {
		folder = n.Dir()
	}
	oldPath := n.Path
	n.Type, n.ID, n.Title, n.Description = in.Type, id, strings.TrimSpace(in.Title), strings.TrimSpace(in.Description)
	n.Tags, n.RelatesTo, n.DependsOn, n.DerivedFrom = orEmpty(in.Tags), orEmpty(in.RelatesTo), orEmpty(in.DependsOn), orEmpty(in.DerivedFrom)
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
		return nil, err
	}
	if err := k.checkFolder(folder); err != nil {
		return nil, err
	}
	redirects, err := k.readRedirects()
	if err != nil {
		return nil, err
	}
	links := t.LinkResolver(redirects)
	resolve := func(ref string) (string, bool) {
		if ref == n.ID {
			return n.Path, true
		}
		return links(ref)
	}
	data, err := n.Render(resolve)
	if err != nil {
		return nil, err
	}
	if len(data) > node.MaxSize {
		return nil, fmt.Errorf("%s: the leaf would be %d bytes; the limit is %d", n.Path, len(data), node.MaxSize)
	}
	dst := k.NodePath(n.Path)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return nil, err
	}
	if err := atomicfile.Write(dst, data, 0o644); err != nil {
		return nil, err
	}
	if oldPath != "" && oldPath != n.Path {
		if err := os.Remove(k.NodePath(oldPath)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	if in.SourceDoc != "" {
		if err := k.recordBootstrapSource(in.SourceDoc, in.SourceHash, id); err != nil {
			return nil, err
		}
	}
	res := &WriteResult{ID: id, Path: filepath.ToSlash(filepath.Join(DirName, "nodes", n.Path)), Action: action, Index: []string{}, Unknown: []string{}}
	if !opts.NoIndex {
		sum := sha256.Sum256(data)
		t.put(existing, n, hex.EncodeToString(sum[:]))
		rb, err := k.rebuildTree(ctx, t, RebuildOptions{})
		if err != nil {
			return nil, err
		}
		res.Index = rb.Changed
	}
	for _, ref := range append(slices.Clone(n.RelatesTo), n.DependsOn...) {
		if _, ok := resolve(ref); !ok {
			res.Unknown = append(res.Unknown, ref)
		}
	}
	return res, nil
}

// checkFolder makes sure no segment of folder is an existing file or a
// symlink leading out of the tree.
func (k *KB) checkFolder(folder string) error {
	if folder == "" {
		return nil
	}
	p := k.NodesDir()
	for _, seg := range strings.Split(folder, "/") {
		p = filepath.Join(p, seg)
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return err
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return fmt.Errorf("folder %q: %s is a symlink; kk writes only into real folders inside nodes/", folder, k.Rel(p))
		}
		if !fi.IsDir() {
			return fmt.Errorf("folder %q: %s is a file, not a folder", folder, k.Rel(p))
		}
	}
	return nil
}

func dedupe(s []string) []string {
	out := make([]string, 0, len(s))
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func orEmpty(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
