package txn_test

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

func newLeaf(id, title string, body string) *node.Node {
	return &node.Node{Format: node.SchemaVersion, Path: "t/" + id + ".md", Type: "practice", ID: id, Title: title,
		Description: "d", Tags: []string{}, DerivedFrom: []string{}, RelatesTo: []string{}, Confidence: "high", Body: []byte(body)}
}

// Every writer's leaf passes one text rule at the commit: no
// bidirectional control (Trojan Source) and no control character but a
// tab in a one-line field, no control character but tab, LF and CR in the
// body; the error names the field and the code point, and nothing is
// written.
func TestLeafTextIsCheckedAtTheCommit(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	before := optest.TreeHash(t, k)
	for _, c := range []struct {
		name string
		edit func(n *node.Node)
		want []string
	}{
		{"title", func(n *node.Node) { n.Title = "Approve \u202Eelbat\u202C payments" }, []string{`field "title"`, "U+202E", "at character 9"}},
		{"description", func(n *node.Node) { n.Description = "d\u2067x" }, []string{`field "description"`, "U+2067"}},
		{"tag", func(n *node.Node) { n.Tags = []string{"go", "a\u2066b"} }, []string{`field "tags"`, "U+2066"}},
		{"id", func(n *node.Node) { n.ID = "practice-a\u202Db"; n.Path = "t/practice-a\u202Db.md" }, []string{`field "kk_id"`, "U+202D"}},
		{"title escape", func(n *node.Node) { n.Title = "t\x1b[2J" }, []string{`field "title"`, "U+001B"}},
		{"body", func(n *node.Node) { n.Body = []byte("one\ntwo \a\n") }, []string{`field "body"`, "U+0007", "on line 2"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := newLeaf("practice-x", "X", "b\n")
			c.edit(n)
			_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
				tx.Put(n)
				return nil
			})
			if err == nil {
				t.Fatal("written")
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
			if optest.TreeHash(t, k) != before {
				t.Fatal("the tree changed")
			}
		})
	}
}

// A leaf a person wrote with such characters is read as it is (kk lint
// may report it), and a write that leaves those fields as they are goes
// through: a status change, or the Related block a move of a leaf it
// names renders again.
func TestHandLeafWithControlsStaysReadableAndWritable(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	hand := "---\ntype: practice\ntitle: \"Approve \\u202Eelbat\\u202C payments\"\ndescription: \"d\\u2066x\"\ntags:\n  - \"a\\u2067b\"\nkk_schema_version: 3\nkk_id: practice-hand\nkk_derived_from: []\nkk_relates_to:\n  - practice-other\nkk_confidence: high\n---\n\nBell \a in the body.\n"
	if err := os.MkdirAll(k.NodePath("t"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(k.NodePath("t/practice-hand.md"), []byte(hand), 0o644); err != nil {
		t.Fatal(err)
	}
	tree, err := k.ReadTree(store.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	n, ok := tree.ByID("practice-hand")
	if !ok || !strings.Contains(n.Title, "\u202E") {
		t.Fatalf("the hand-written leaf was not read as it is: %v %+v", ok, n)
	}
	// A new leaf the hand leaf names, then moved: the hand leaf's Related
	// block is rendered again.
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		tx.Put(newLeaf("practice-other", "Other", "b\n"))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		o, err := tx.LeafAt("t/practice-other.md")
		if err != nil {
			return err
		}
		o.Path = "u/practice-other.md"
		tx.Put(o)
		return nil
	}); err != nil {
		t.Fatalf("moving a leaf the hand leaf names: %v", err)
	}
	if _, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		h, err := tx.LeafAt("t/practice-hand.md")
		if err != nil {
			return err
		}
		h.Status = "stable"
		tx.Put(h)
		return nil
	}); err != nil {
		t.Fatalf("a status change of the hand leaf: %v", err)
	}
	src, _ := os.ReadFile(k.NodePath("t/practice-hand.md"))
	if !strings.Contains(string(src), "status: stable") || !strings.Contains(string(src), "u/practice-other.md") {
		t.Fatalf("hand leaf after the writes:\n%s", src)
	}
	// A write that changes the title to another spoofed one is refused.
	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		h, err := tx.LeafAt("t/practice-hand.md")
		if err != nil {
			return err
		}
		h.Title = "Deny \u202Eelbat\u202C payments"
		tx.Put(h)
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "U+202E") {
		t.Fatalf("a new spoofed title: %v", err)
	}
}
