//go:build unix

package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWriteRefusesFolderLinkedOutOfTree: a folder under nodes/ that is a
// link out of the knowledge tree (a repository can commit one) is never
// written through. kb_upsert with that folder, and a graph create when
// nodes/graph itself is such a link, fail with a VALIDATION_ERROR, and
// nothing is written outside the tree or in it.
func TestWriteRefusesFolderLinkedOutOfTree(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	outside := t.TempDir()
	secret := filepath.Join(outside, "index.md")
	if err := os.WriteFile(secret, []byte("# not kk's\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, k)
	if err := os.Symlink(outside, k.NodePath("ext")); err != nil {
		t.Fatal(err)
	}
	r := run(t, k, KBUpsertJSON, `{"created_by":"a","source":"s","entities":[{"id":"REQ-1","type":"req","title":"t","folder":"ext"}]}`)
	if errCode(r) != "VALIDATION_ERROR" || !strings.Contains(r["error"].(map[string]any)["message"].(string), "out of the knowledge tree") {
		t.Errorf("kb_upsert into a folder linked out of the tree: %v", r)
	}
	if err := os.Symlink(outside, k.NodePath("graph")); err != nil {
		t.Fatal(err)
	}
	r = run(t, k, CreateJSON, `{"operation":"create","entityType":"molecule","name":"Outside","knowledge":"k"}`)
	if errCode(r) != "VALIDATION_ERROR" || !strings.Contains(r["error"].(map[string]any)["message"].(string), "out of the knowledge tree") {
		t.Errorf("graph create with nodes/graph linked out of the tree: %v", r)
	}
	entries, err := os.ReadDir(outside)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Errorf("files were written outside the tree: %v", entries)
	}
	if b, _ := os.ReadFile(secret); string(b) != "# not kk's\n" {
		t.Errorf("the file outside the tree was overwritten:\n%s", b)
	}
	for _, link := range []string{"ext", "graph"} {
		if err := os.Remove(k.NodePath(link)); err != nil {
			t.Fatal(err)
		}
	}
	if after := treeHash(t, k); after != before {
		t.Error("a refused write changed the tree")
	}
}
