package txn_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kk-project/kk/internal/contracts"
	"github.com/kk-project/kk/internal/curate"
	"github.com/kk-project/kk/internal/node"
	"github.com/kk-project/kk/internal/optest"
	"github.com/kk-project/kk/internal/store"
	"github.com/kk-project/kk/internal/txn"
)

const handWritten = "---\ntype: practice\ntitle: Use context timeouts\nkk_id: practice-use-context-timeouts\n---\nAlways pass a context with a timeout.\n"

// A leaf kk cannot read does not stop a write of another leaf, and the
// generated files list the leaves it can read; but no writer overwrites,
// removes or takes the id of the leaf it skipped, unless it adopts it.
func TestWritesGoOnAroundASkippedLeaf(t *testing.T) {
	t.Parallel()
	k := optest.NewKB(t)
	ctx := context.Background()
	bad := k.NodePath("go/ctx.md")
	if err := os.MkdirAll(filepath.Dir(bad), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(handWritten), 0o644); err != nil {
		t.Fatal(err)
	}
	in := contracts.NodeInput{Type: "practice", Title: "Wrap errors", Description: "d", Body: "b", Folder: "go"}
	if _, err := curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"}); err != nil {
		t.Fatalf("a write of another leaf: %v", err)
	}
	entry, err := os.ReadFile(k.EntryPath())
	if err != nil {
		t.Fatal(err)
	}
	index, err := os.ReadFile(k.NodePath("go/index.md"))
	if err != nil || !strings.Contains(string(index), "Wrap errors") || strings.Contains(string(index)+string(entry), "context timeouts") {
		t.Fatalf("the generated files do not list exactly the readable leaves (%v):\n%s", err, index)
	}

	// The same id as the skipped leaf claims: refused.
	in = contracts.NodeInput{Type: "practice", Title: "Use context timeouts", Description: "d", Body: "b"}
	_, err = curate.WriteNode(ctx, k, in, curate.WriteOptions{Command: "test"})
	if err == nil || !strings.Contains(err.Error(), "id practice-use-context-timeouts is taken by .ai/kenkeep/nodes/go/ctx.md") || !strings.Contains(err.Error(), `field "kk_confidence": is required`) {
		t.Fatalf("a new leaf with a skipped leaf's id: %v", err)
	}
	// A raw write or removal of the skipped file: refused (a migration's
	// bytes too, unless the writer adopts the leaf).
	v3, err := (&node.Node{Format: node.SchemaVersion, Path: "go/ctx.md", Type: "practice", Title: "Use context timeouts",
		ID: "practice-use-context-timeouts", Confidence: "high", Body: []byte("Always.\n")}).Render(func(string) (string, bool) { return "", false })
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		stage func(tx *txn.Tx) error
		want  string
	}{
		{"write", func(tx *txn.Tx) error { tx.WriteFile("nodes/go/ctx.md", []byte("replaced\n")); return nil }, "a leaf is staged as a node"},
		{"remove", func(tx *txn.Tx) error { tx.RemoveFile("nodes/go/ctx.md"); return nil }, "a leaf is removed with Remove"},
		{"move", func(tx *txn.Tx) error { return tx.MoveLeaf("go/ctx.md", "go/other.md") }, "it is not a leaf of the tree"},
		{"migrate", func(tx *txn.Tx) error { return tx.MigrateLeaf("go/ctx.md", "go/ctx.md", []byte(v3)) }, "is a leaf kk cannot read"},
	} {
		_, err := txn.Update(ctx, k, txn.Meta{Command: "test"}, c.stage)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Fatalf("%s of the skipped leaf: %v; want an error saying %q", c.name, err, c.want)
		}
	}
	// A new leaf at the path of a skipped one: refused.
	if err := os.WriteFile(k.NodePath("go/practice-raw.md"), []byte("---\ntitle: Raw\n---\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		tx.Put(&node.Node{Format: node.SchemaVersion, Path: "go/practice-raw.md", Type: "practice", Title: "Raw", ID: "practice-raw", Confidence: "high"})
		return nil
	})
	if err == nil || !strings.Contains(err.Error(), "is a leaf kk cannot read") {
		t.Fatalf("a leaf written over the skipped one: %v", err)
	}
	// LeafAt names the problem instead of finding nothing.
	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		_, err := tx.LeafAt("go/ctx.md")
		return err
	})
	if err == nil || !strings.Contains(err.Error(), `go/ctx.md: field "kk_schema_version"`) {
		t.Fatalf("LeafAt of the skipped leaf: %v", err)
	}
	if got, err := os.ReadFile(bad); err != nil || string(got) != handWritten {
		t.Fatalf("the skipped leaf changed: %q %v", got, err)
	}

	// Adopted, it is replaced through the transaction.
	_, err = txn.Update(ctx, k, txn.Meta{Command: "test"}, func(tx *txn.Tx) error {
		src, err := tx.Adopt("go/ctx.md")
		if err != nil {
			return err
		}
		if string(src) != handWritten {
			t.Errorf("Adopt gave %q", src)
		}
		tx.Put(&node.Node{Format: node.SchemaVersion, Path: "go/practice-use-context-timeouts.md", Type: "practice", Title: "Use context timeouts",
			ID: "practice-use-context-timeouts", Confidence: "high", Body: []byte("Always pass a context with a timeout.\n")})
		tx.RemoveFile("nodes/go/ctx.md")
		return nil
	})
	if err != nil {
		t.Fatalf("adopting: %v", err)
	}
	if err := os.Remove(k.NodePath("go/practice-raw.md")); err != nil {
		t.Fatal(err)
	}
	tr, err := k.ReadTree(store.LoadOptions{})
	if err != nil || len(tr.Problems) != 0 {
		t.Fatalf("after adopting: %v %v", err, tr.Problems)
	}
	if _, ok := tr.ByID("practice-use-context-timeouts"); !ok {
		t.Fatal("the adopted leaf is not in the tree")
	}
}
