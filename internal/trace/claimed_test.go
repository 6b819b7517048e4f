package trace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestUpsertRefusesIDOfUnreadableLeaf: a leaf whose front matter does not
// parse (a hand edit gone wrong) still claims the id its file is named
// after, so kb_upsert does not create a second leaf with that id in
// another folder: the two would share it as soon as the first is fixed.
func TestUpsertRefusesIDOfUnreadableLeaf(t *testing.T) {
	t.Parallel()
	k := newKB(t)
	broken := k.NodePath("graph/map-rel-b.md")
	if err := os.MkdirAll(filepath.Dir(broken), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(broken, []byte("---\ntype: map\ntitle: [unclosed\nkk_id: map-rel-b\n---\nbody\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := treeHash(t, k)
	r := run(t, k, KBUpsertJSON, `{"created_by":"a","source":"s","entities":[{"id":"MAP-REL-B","type":"req","title":"x"}]}`)
	if errCode(r) == "" {
		t.Fatalf("kb_upsert created a second leaf with the id of an unreadable one: %v", r)
	}
	if msg := r["error"].(map[string]any)["message"].(string); !strings.Contains(msg, "graph/map-rel-b.md") {
		t.Errorf("the refusal does not name the unreadable leaf: %s", msg)
	}
	if after := treeHash(t, k); after != before {
		t.Error("a refused write changed the tree")
	}
}
