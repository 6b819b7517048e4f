package indexfiles_test

import (
	"context"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/text"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

// A person makes folders under nodes/ by hand with names kk would not
// give one ("Meeting Notes/", "Q1 (plans)/", "50% done/", "C# tips/") and
// moves leaves there. The generated ENTRY.md and index.md files linked to
// them with the names as they are, and a space is not allowed in a
// CommonMark link destination: GitHub showed the text, no link. Every link
// of the generated files is now one a CommonMark reader (goldmark, as
// GitHub's) and kk's own link reader (node.MarkdownLinks) both read, to
// the file it names; so is the Related block a write renders into a leaf
// linking to a leaf there.
func TestGeneratedLinksToHandMadeFolders(t *testing.T) {
	ctx := context.Background()
	k := store.New(t.TempDir())
	if _, err := txn.Init(ctx, k, store.InitOptions{Version: "test", Command: "test"}); err != nil {
		t.Fatal(err)
	}
	folders := []string{"Meeting Notes", "Meeting Notes/Q1 (plans)", "50% done", "C# tips", "why?", "a<b>c"}
	write := func(title, folder string, relates []string) {
		t.Helper()
		_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
			_, _, err := curate.WriteInTx(tx, contracts.NodeInput{Type: "practice", Title: title, Description: "About " + title, Tags: []string{"t"}, Body: "Body.", RelatesTo: relates}, curate.WriteOptions{})
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if folder == "" {
			return
		}
		// moved by hand into a folder made by hand
		dir := filepath.Join(k.NodesDir(), filepath.FromSlash(folder))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		name := "practice-" + node.Slugify(title) + ".md"
		if err := os.Rename(filepath.Join(k.NodesDir(), name), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	for i, f := range folders {
		write("Note "+string(rune('a'+i)), f, nil)
	}
	if _, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{}); err != nil {
		t.Fatal(err)
	}
	// A leaf at the root relating to the one in "Meeting Notes/": its
	// Related block links to it.
	write("Linker", "", []string{"practice-note-a"})

	files := []string{"ENTRY.md", "nodes/index.md"}
	for _, f := range folders {
		files = append(files, "nodes/"+f+"/index.md")
	}
	files = append(files, "nodes/practice-linker.md")
	md := goldmark.New()
	for _, rel := range files {
		src, err := os.ReadFile(filepath.Join(k.Dir, filepath.FromSlash(rel)))
		if err != nil {
			t.Fatal(err)
		}
		dir := path.Dir(rel)
		want := wantedLinks(string(src))
		// goldmark, a CommonMark reader
		var got []string
		doc := md.Parser().Parse(text.NewReader(src))
		_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
			if l, ok := n.(*ast.Link); ok && entering {
				got = append(got, string(l.Destination))
			}
			return ast.WalkContinue, nil
		})
		if len(got) != want {
			t.Errorf("%s: a CommonMark reader finds %d links, want %d:\n%s", rel, len(got), want, src)
		}
		for _, d := range got {
			p, err := url.PathUnescape(d)
			if err != nil {
				t.Errorf("%s: link %q: %v", rel, d, err)
				continue
			}
			target := path.Join(dir, p)
			if strings.HasPrefix(p, "/") {
				target = path.Join("nodes", p)
			}
			if _, err := os.Stat(filepath.Join(k.Dir, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s: link %q (a CommonMark reader) leads to no file: %v", rel, d, err)
			}
		}
		// kk's own link reader
		links := node.MarkdownLinks(src)
		if len(links) != want {
			t.Errorf("%s: kk's link reader finds %d links, want %d:\n%s", rel, len(links), want, src)
		}
		for _, l := range links {
			target := path.Join(dir, l.Path)
			if strings.HasPrefix(l.Path, "/") {
				target = path.Join("nodes", l.Path)
			}
			if _, err := os.Stat(filepath.Join(k.Dir, filepath.FromSlash(target))); err != nil {
				t.Errorf("%s: link %q (kk's reader) leads to no file: %v", rel, l.Path, err)
			}
		}
	}
	// A rebuild after it finds nothing to regenerate.
	res, err := txn.Rebuild(ctx, k, txn.Meta{Command: "test"}, txn.RebuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Changed)+len(res.Removed)+len(res.Skipped) > 0 {
		t.Errorf("a second rebuild writes %v, removes %v, skips %v", res.Changed, res.Removed, res.Skipped)
	}
}

// wantedLinks counts the lines of src that a generated file makes a link
// on ("](" outside the leaf's body text).
func wantedLinks(src string) int {
	return strings.Count(src, "](")
}
